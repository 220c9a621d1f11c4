import { Job, type Queue } from 'bullmq';
import { AGED_PRIORITY, BACKGROUND_PRIORITY } from './order-queue.service';

/** At most this many polls are moved ahead per tick (a tick is a fraction of a second). */
const MAX_AGED_PER_TICK = 500;
/** BullMQ's score of a prioritized job: priority * 2^32 + the queue's priority counter (`pc`) at its insertion. */
const COUNTER_SPAN = 0x100000000;

/**
 * KEYS: the queue's priority counter, its prioritized set. ARGV: lowest score, highest score (-1: none), limit.
 * Returns {counter now, ids of the band's jobs between the two scores}: one round trip, on the queue's own connection.
 */
const READ_BAND = `
local ids = {}
if tonumber(ARGV[2]) >= 0 then ids = redis.call('ZRANGEBYSCORE', KEYS[2], ARGV[1], ARGV[2], 'LIMIT', 0, tonumber(ARGV[3])) end
return {tonumber(redis.call('GET', KEYS[1]) or '0'), ids}
`;
const COMMAND = 'cardpullReadPriorityBand';

/**
 * Bounds how long new orders hold a due poll back in the queue (issue 12: "new orders never starve polls
 * for more than a bounded time"). Polls and re-checks wait behind every creation (BACKGROUND_PRIORITY, see
 * order-queue.service.ts); under a partner limit a backlog of creations would keep them there until the
 * whole backlog is through. Each tick this reads the queue's priority counter and remembers it; a job of
 * the background band whose counter is no later than the one read PARTNER_POLL_MAX_YIELD_MS ago has waited
 * that long, and gets AGED_PRIORITY: it goes before every creation but a client's first one.
 *
 * It reads BullMQ's prioritized set as BullMQ writes it (getPriorityScore.lua: jobs of one priority in
 * the order they became ready), which libs/orders/src/poll-aging.spec.ts checks against real BullMQ; the
 * move itself is BullMQ's own Job.changePriority. Every worker may run it: a job already moved is skipped.
 * The counter wraps after 2^32 prioritized jobs; a tick at that moment ages nothing (the next ones do).
 */
export class PollAging {
  private readonly samples: { at: number; counter: number }[] = [];
  private defined = false;

  constructor(
    private readonly queue: Queue,
    private readonly maxWaitMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** One tick: returns how many polls and re-checks were moved ahead. */
  async tick(): Promise<number> {
    const client = await this.queue.getBackend().client;
    if (!this.defined) {
      client.defineCommand(COMMAND, { numberOfKeys: 2, lua: READ_BAND });
      this.defined = true;
    }
    const at = this.now();
    const threshold = this.counterBefore(at - this.maxWaitMs);
    const band = BACKGROUND_PRIORITY * COUNTER_SPAN;
    const highest = threshold === null ? -1 : band + (threshold % COUNTER_SPAN);
    const [counter, ids] = (await client.runCommand(COMMAND, [this.queue.keys.pc, this.queue.keys.prioritized, band, highest, MAX_AGED_PER_TICK])) as [number, string[]];
    this.samples.push({ at, counter: Number(counter) });
    let aged = 0;
    for (const id of ids) {
      const job = await Job.fromId(this.queue, id);
      // Taken by a worker meanwhile, or moved by another worker's tick: nothing to do.
      if (!job || job.priority !== BACKGROUND_PRIORITY) continue;
      await job.changePriority({ priority: AGED_PRIORITY });
      aged++;
    }
    return aged;
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
