import { Job, type Queue } from 'bullmq';

/** BullMQ's score of a prioritized job: priority * 2^32 + the queue's priority counter (`pc`) at its insertion. */
const COUNTER_SPAN = 0x100000000;

/**
 * KEYS: the queue's priority counter, its prioritized set, the set of jobs this raised (fleet-wide).
 * ARGV: lowest score, highest score (-1: none), how many raised jobs may wait at once.
 * Forgets raised jobs no longer waiting (taken by a worker, or gone back to the delayed set), then takes
 * as many of the band's jobs between the two scores as the budget leaves and counts them as raised (so two
 * processes' calls never exceed it together). Returns {counter now, those ids}: one round trip.
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
const COMMAND = 'cardpullRaiseBand';

/** What one raise did: the queue's priority counter when it looked, and how many jobs it raised. */
export interface BandRaise {
  counter: number;
  raised: number;
}

/**
 * The waiting jobs of one priority of a BullMQ queue, in the order they became ready, and the move of the
 * oldest of them to a higher priority: BullMQ knows no "waited too long", so this reads its prioritized set
 * as BullMQ writes it (getPriorityScore.lua: score = priority * 2^32 + the queue's priority counter at the
 * insertion). The move itself is BullMQ's own Job.changePriority. The jobs raised and still waiting are
 * counted in a set beside the queue's keys (same prefix, so the same hash slot on a Redis Cluster), so that
 * every process may call it and their raises together stay within the budget.
 *
 * The counter wraps after 2^32 prioritized jobs; a call at that moment raises nothing (the next ones do).
 */
export class PriorityBand {
  private defined = false;

  constructor(
    private readonly queue: Queue,
    private readonly from: number,
    private readonly to: number,
    /** The set's name beside the queue's own keys. */
    private readonly raisedSet: string,
  ) {}

  /**
   * Raises the band's jobs inserted when the priority counter was `upToCounter` or less (null: none), as
   * many as the budget leaves while raised jobs wait, and reads the counter now.
   */
  async raise(upToCounter: number | null, budget: number): Promise<BandRaise> {
    const client = await this.queue.getBackend().client;
    if (!this.defined) {
      client.defineCommand(COMMAND, { numberOfKeys: 3, lua: READ_BAND });
      this.defined = true;
    }
    const band = this.from * COUNTER_SPAN;
    const highest = upToCounter === null ? -1 : band + (upToCounter % COUNTER_SPAN);
    const keys = [this.queue.keys.pc, this.queue.keys.prioritized, this.queue.toKey(this.raisedSet)];
    const [counter, ids] = (await client.runCommand(COMMAND, [...keys, band, highest, budget])) as [number, string[]];
    let raised = 0;
    for (const id of ids) {
      const job = await Job.fromId(this.queue, id);
      // Taken by a worker meanwhile, or raised by another process: nothing to do.
      if (!job || job.priority !== this.from) continue;
      await job.changePriority({ priority: this.to });
      raised++;
    }
    return { counter: Number(counter), raised };
  }
}
