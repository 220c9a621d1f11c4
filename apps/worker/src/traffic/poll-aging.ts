import type { OrderQueue } from '@cardpull/orders';

/** At most this many moved polls wait ahead of creations at once, whatever the limits. */
const MAX_AHEAD = 500;

/**
 * Bounds how long new orders hold a due poll back in the queue (issue 12: "new orders never starve polls
 * for more than a bounded time"). Polls and re-checks wait behind every creation (BACKGROUND_PRIORITY, see
 * libs/orders' queue-priorities.ts); under a partner limit a backlog of creations would keep them there
 * until the whole backlog is through. Each tick this reads the queue's priority counter and remembers it;
 * a poll or re-check queued when the counter was no later than the one read PARTNER_POLL_MAX_YIELD_MS ago
 * has waited that long, and OrderQueue.raiseWaitingPolls moves it ahead of every creation but a client's
 * first one.
 *
 * Both ways bounded: at most `maxAhead` moved jobs wait ahead of creations at once, fleet-wide (the
 * caller gives a quarter of what the partner's limit lets through in a tick), so a backlog of thousands of
 * due polls never starves new orders either ("a backlog of polls never starves new orders"): under a limit
 * that both saturate, polls get at least that share and new orders the rest. Every worker may run it: a
 * job already moved is skipped, and the budget is counted in Redis.
 */
export class PollAging {
  private readonly samples: { at: number; counter: number }[] = [];

  constructor(
    private readonly queue: Pick<OrderQueue, 'raiseWaitingPolls'>,
    private readonly maxWaitMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxAhead: number = MAX_AHEAD,
  ) {}

  /** One tick: returns how many polls and re-checks were moved ahead. */
  async tick(): Promise<number> {
    const at = this.now();
    const budget = Math.max(1, Math.min(MAX_AHEAD, Math.floor(this.maxAhead)));
    const { counter, raised } = await this.queue.raiseWaitingPolls(this.counterBefore(at - this.maxWaitMs), budget);
    this.samples.push({ at, counter });
    return raised;
  }

  /** The counter of the latest sample taken at `cutoff` or before (null: none yet); older samples are dropped. */
  private counterBefore(cutoff: number): number | null {
    let last = -1;
    while (last + 1 < this.samples.length && this.samples[last + 1]!.at <= cutoff) last++;
    if (last < 0) return null;
    this.samples.splice(0, last);
    return this.samples[0]!.counter;
  }
}
