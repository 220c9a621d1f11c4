import { Inject, Injectable } from '@nestjs/common';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { OrderQueue, PollAging } from '@cardpull/orders';
import { PeriodicTask } from './periodic-task';

/** Every fifth of PARTNER_POLL_MAX_YIELD_MS (within 0.1-1 s): a poll waits at most that bound and one tick. */
const tickMs = (maxYieldMs: number) => Math.min(1_000, Math.max(100, Math.round(maxYieldMs / 5)));

/**
 * Moves polls and re-checks that have waited PARTNER_POLL_MAX_YIELD_MS in the queue ahead of new orders'
 * creations (PollAging): under a partner limit, a backlog of creations holds a due poll back that long at
 * most. The gate does the same for calls already in a worker's hands (RedisCallGate: polls yield to
 * waiting creations for that long at most).
 */
@Injectable()
export class PollAger extends PeriodicTask<number> {
  protected readonly taskName = 'poll ager';
  private readonly aging: PollAging;
  private lastLogged = 0;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    queue: OrderQueue,
  ) {
    super();
    this.aging = new PollAging(queue.queue, config.PARTNER_POLL_MAX_YIELD_MS);
  }

  protected intervalMs(): number {
    return tickMs(this.config.PARTNER_POLL_MAX_YIELD_MS);
  }

  protected async tick(): Promise<number> {
    const aged = await this.aging.tick();
    if (aged > 0 && Date.now() - this.lastLogged > 10_000) {
      this.lastLogged = Date.now();
      this.log.log({ aged }, `${aged} polls or re-checks waited ${this.config.PARTNER_POLL_MAX_YIELD_MS} ms behind creations: moved ahead of new orders`);
    }
    return aged;
  }
}
