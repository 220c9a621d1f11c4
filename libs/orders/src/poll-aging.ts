import { Job, type Queue } from 'bullmq';
import { AGED_PRIORITY, BACKGROUND_PRIORITY } from './queue-priorities';

/** At most this many moved polls wait ahead of creations at once, whatever the limits. */
const MAX_AHEAD = 500;
/** BullMQ's score of a prioritized job: priority * 2^32 + the queue's priority counter (`pc`) at its insertion. */
const COUNTER_SPAN = 0x100000000;

/**
 * KEYS: the queue's priority counter, its prioritized set, the set of jobs this moved ahead (fleet-wide).
 * ARGV: lowest score, highest score (-1: none), how many moved jobs may wait ahead of creations at once.
 * Forgets moved jobs no longer waiting (taken by a worker, or gone back to the delayed set), then takes
 * as many of the band's jobs between the two scores as the budget leaves and counts them as moved (so two
 * workers' ticks never exceed it together). Returns {counter now, those ids}: one round trip.
 */
const READ_BAND = `
for _, id in ipairs(redis.call('SMEMBERS', KEYS[3])) do
  if not redis.call('ZSCORE', KEYS[2], id) then redis.call('SREM', KEYS[3], id) end
end
local room = tonumber(ARGV[3]) - redis.call('SCARD', KEYS[3])
local ids = {}
if tonumber(ARGV[2]) >= 0 and room > 0 then
  ids = redis.call('ZRANGEBYSCORE', KEYS[2], ARGV[1], ARGV[2], 'LIMIT', 0, room)
  for _, id in ipairs(ids) do redis.call('SADD', KEYS[3], id) end
end
return {tonumber(redis.call('GET', KEYS[1]) or '0'), ids}
`;
const COMMAND = 'cardpullAgePolls';
/** Our own key beside the queue's (same prefix, so the same hash slot on a Redis Cluster). */
const AGED_SET = 'cardpull-aged';

/**
 * Bounds how long new orders hold a due poll back in the queue (issue 12: "new orders never starve polls
 * for more than a bounded time"). Polls and re-checks wait behind every creation (BACKGROUND_PRIORITY, see
 * order-queue.service.ts); under a partner limit a backlog of creations would keep them there until the
 * whole backlog is through. Each tick this reads the queue's priority counter and remembers it; a job of
 * the background band whose counter is no later than the one read PARTNER_POLL_MAX_YIELD_MS ago has waited
 * that long, and gets AGED_PRIORITY: it goes before every creation but a client's first one.
 *
 * Both ways bounded: at most `maxAhead` moved jobs wait ahead of creations at once, fleet-wide (the
 * caller gives a quarter of what the partner's limit lets through in a tick), so a backlog of thousands of
 * due polls never starves new orders either ("a backlog of polls never starves new orders"): under a limit
 * that both saturate, polls get at least that share and new orders the rest.
 *
 * It reads BullMQ's prioritized set as BullMQ writes it (getPriorityScore.lua: jobs of one priority in
 * the order they became ready), which order-queue.service.spec.ts checks against real BullMQ; the move
 * itself is BullMQ's own Job.changePriority. Every worker may run it: a job already moved is skipped, and
 * the budget is counted in Redis. The counter wraps after 2^32 prioritized jobs; a tick at that moment
 * ages nothing (the next ones do).
 */
export class PollAging {
  private readonly samples: { at: number; counter: number }[] = [];
  private defined = false;

  constructor(
    private readonly queue: Queue,
    private readonly maxWaitMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxAhead: number = MAX_AHEAD,
  ) {}

  /** One tick: returns how many polls and re-checks were moved ahead. */
  async tick(): Promise<number> {
    const client = await this.queue.getBackend().client;
    if (!this.defined) {
      client.defineCommand(COMMAND, { numberOfKeys: 3, lua: READ_BAND });
      this.defined = true;
    }
    const at = this.now();
    const threshold = this.counterBefore(at - this.maxWaitMs);
    const band = BACKGROUND_PRIORITY * COUNTER_SPAN;
    const highest = threshold === null ? -1 : band + (threshold % COUNTER_SPAN);
    const budget = Math.max(1, Math.min(MAX_AHEAD, Math.floor(this.maxAhead)));
    const keys = [this.queue.keys.pc, this.queue.keys.prioritized, this.queue.toKey(AGED_SET)];
    const [counter, ids] = (await client.runCommand(COMMAND, [...keys, band, highest, budget])) as [number, string[]];
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
