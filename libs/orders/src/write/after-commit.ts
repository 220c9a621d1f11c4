import { Injectable } from '@nestjs/common';
import { CallbackQueue } from '../callbacks/callback-queue.service';
import { OrderQueue } from '../queue/order-queue.service';
import type { ScheduledStep } from '../model/order.types';

/** What a committed transition leaves for the queues: the order's next step, and the callback events it wrote. */
export interface Committed {
  next?: ScheduledStep | null;
  /** Ids of the callback events (outbox rows) the transition wrote. */
  callbacks?: string[];
}

/** What run answers when a transition left nothing for the queues: no next step to schedule (so true). */
const NOTHING_LEFT = Promise.resolve(true);

/**
 * The one way to act on a transition once Postgres has committed it (intake, a step, the reconciler, an
 * operator's action): schedule the next step, enqueue the callbacks. Never before the commit, and a failure
 * here loses nothing: both queues only log it, and the sweeper re-derives every job from Postgres
 * (invariant 4). Resolves to whether the next step reached Redis (true when there was none).
 */
@Injectable()
export class AfterCommit {
  constructor(
    private readonly steps: OrderQueue,
    private readonly callbacks: CallbackQueue,
  ) {}

  run(committed: Committed): Promise<boolean> {
    // Most steps leave nothing (a card stored, no callback URL): no promises for an empty Promise.all then.
    if (!committed.next && !committed.callbacks?.length) return NOTHING_LEFT;
    return this.enqueue(committed);
  }

  private async enqueue(committed: Committed): Promise<boolean> {
    const [scheduled] = await Promise.all([
      committed.next ? this.steps.schedule(committed.next) : Promise.resolve(true),
      committed.callbacks?.length ? this.callbacks.enqueue(committed.callbacks.map((id) => ({ id }))) : Promise.resolve(),
    ]);
    return scheduled;
  }
}
