import { Injectable } from '@nestjs/common';
import type { ServiceConfig } from '@cardpull/config';
import { OrderQueue } from '@cardpull/orders';
import { parsePartnerLimits } from '@cardpull/traffic';
import { PeriodicTask } from '../tasks/periodic-task';
import { PollAging } from './poll-aging';

/** Every fifth of PARTNER_POLL_MAX_YIELD_MS (within 0.1-1 s): a poll waits at most that bound and one tick. */
const tickMs = (maxYieldMs: number) => Math.min(1_000, Math.max(100, Math.round(maxYieldMs / 5)));
/** The share of the partner's rate that polls moved ahead may take while new orders wait too. */
const AGED_SHARE = 0.25;

/**
 * How many moved polls may wait ahead of creations at once: a quarter of the polls the partner's limit
 * (PARTNER_LIMITS poll or any per_second, the lower) lets through in a tick; without a rate, a worker's
 * slots (WORKER_CONCURRENCY), since then only the workers bound what is sent.
 */
export function agedBudget(config: Pick<ServiceConfig, 'PARTNER_LIMITS' | 'WORKER_CONCURRENCY' | 'PARTNER_POLL_MAX_YIELD_MS'>): number {
  const limits = parsePartnerLimits(config.PARTNER_LIMITS);
  const rates = [limits.poll.perSecond, limits.any.perSecond].filter((r) => r > 0);
  if (!rates.length) return config.WORKER_CONCURRENCY;
  return Math.max(1, Math.floor(Math.min(...rates) * (tickMs(config.PARTNER_POLL_MAX_YIELD_MS) / 1000) * AGED_SHARE));
}

/**
 * Moves polls and re-checks that have waited PARTNER_POLL_MAX_YIELD_MS in the queue ahead of new orders'
 * creations (PollAging): under a partner limit, a backlog of creations holds a due poll back that long at
 * most, as long as polls moved ahead take no more than their share (agedBudget); beyond it, polls and new
 * orders share the partner. The gate does the same for calls already in a worker's hands (RedisCallGate:
 * polls yield to waiting creations for that long at most).
 */
@Injectable()
export class PollAger extends PeriodicTask<number> {
  protected readonly taskName = 'poll ager';
  // Every worker runs it (up to 10 ticks a second): its budget is counted in Redis, fleet-wide, and a poll
  // moved twice is skipped, so a Postgres claim per tick would buy nothing.
  protected override readonly fleetWide = false;
  private aging?: PollAging;
  private lastLogged = 0;

  constructor(private readonly queue: OrderQueue) {
    super();
  }

  /** A fifth of the bound (see tickMs). */
  protected get every(): number {
    return tickMs(this.config.PARTNER_POLL_MAX_YIELD_MS);
  }

  protected async tick(): Promise<number> {
    this.aging ??= new PollAging(this.queue, this.config.PARTNER_POLL_MAX_YIELD_MS, Date.now, agedBudget(this.config));
    const aged = await this.aging.tick();
    if (aged > 0 && Date.now() - this.lastLogged > 10_000) {
      this.lastLogged = Date.now();
      this.log.log({ aged }, `${aged} polls or re-checks waited ${this.config.PARTNER_POLL_MAX_YIELD_MS} ms behind creations: moved ahead of new orders`);
    }
    return aged;
  }
}
