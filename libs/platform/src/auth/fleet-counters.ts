import type { Cluster, Redis } from 'ioredis';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { FixedWindowThrottlerStorage } from './fixed-window-throttler.storage';

/**
 * The abuse limits as Redis scripts, so that a fleet of API processes counts once, not once per process:
 * the failed logins and API keys per address, the per-client rate limit and the long-polls under way per
 * client. Every decision is one atomic script on Redis's own clock (TIME). Keys carry one hash tag,
 * {abuse}, so a Redis Cluster keeps them in one slot (a script may touch several).
 */
const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/**
 * Attempts in a sliding window, one sorted set (member -> time) per key. KEYS: the counts. ARGV: window ms,
 * the attempt's member ('' : only look), then one limit per key. Returns 0 when every count is under its
 * limit (the attempt, if any, is then recorded under every key), else the position of a key at its limit.
 */
const ATTEMPT = `${NOW}
local window = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  if redis.call('ZCARD', key) >= tonumber(ARGV[i + 2]) then return i end
end
if ARGV[2] ~= '' then
  for _, key in ipairs(KEYS) do
    redis.call('ZADD', key, now, ARGV[2])
    redis.call('PEXPIRE', key, window)
  end
end
return 0
`;

/**
 * A fixed window per key (FixedWindowThrottlerStorage's rule): KEYS[1] a hash of hits, ends, blocked.
 * ARGV: window ms, limit, block ms (0: the window). Returns {hits, ms to the window's end, blocked 1/0, ms to the block's end}.
 */
const HIT = `${NOW}
local ttl = tonumber(ARGV[1])
local w = redis.call('HMGET', KEYS[1], 'hits', 'ends', 'blocked')
local hits, ends, blocked = tonumber(w[1]) or 0, tonumber(w[2]) or 0, tonumber(w[3]) or 0
if blocked > now then return {hits, math.max(0, ends - now), 1, blocked - now} end
if ends <= now then
  hits = 0
  ends = now + ttl
end
hits = hits + 1
if hits > tonumber(ARGV[2]) then
  local block = tonumber(ARGV[3])
  if block <= 0 then block = ttl end
  blocked = now + block
  ends = math.min(ends, blocked)
end
redis.call('HSET', KEYS[1], 'hits', hits, 'ends', ends, 'blocked', blocked)
redis.call('PEXPIRE', KEYS[1], math.max(ends, blocked) - now + 1000)
if blocked > now then return {hits, ends - now, 1, blocked - now} end
return {hits, ends - now, 0, 0}
`;

/**
 * A slot of a concurrency limit: KEYS[1] a sorted set of holders by the end of their lease, so the slots of
 * a process that died free themselves when their leases end. ARGV: holder, limit, lease ms. Returns 1 if taken.
 */
const TAKE = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
local lease = tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
if redis.call('PTTL', KEYS[1]) < lease then redis.call('PEXPIRE', KEYS[1], lease) end
return 1
`;

/** What ThrottlerStorage.increment answers (times in whole seconds, as @nestjs/throttler's guard expects). */
export interface ThrottlerRecord {
  totalHits: number;
  timeToExpire: number;
  isBlocked: boolean;
  timeToBlockExpire: number;
}

const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

/**
 * The same counts in this process's memory: what each process falls back to while Redis does not answer
 * (then each process counts on its own, as before issue 21). Bounded: at most 10,000 keys per kind.
 */
class LocalCounters {
  private readonly attempts = new Map<string, { at: number; member: string }[]>();
  private readonly windows = new FixedWindowThrottlerStorage();
  private readonly slots = new Map<string, Map<string, number>>();

  attempt(keys: string[], limits: number[], windowMs: number, member: string | null): number {
    const now = Date.now();
    const recent = keys.map((k) => (this.attempts.get(k) ?? []).filter((a) => now - a.at < windowMs));
    const over = recent.findIndex((r, i) => r.length >= limits[i]!);
    if (over >= 0) return over + 1;
    if (member !== null) keys.forEach((k, i) => this.remember(this.attempts, k, [...recent[i]!, { at: now, member }]));
    return 0;
  }

  forget(clear: string[], unnote: string[], member: string): void {
    for (const k of clear) this.attempts.delete(k);
    for (const k of unnote) {
      const left = (this.attempts.get(k) ?? []).filter((a) => a.member !== member);
      if (left.length) this.attempts.set(k, left);
      else this.attempts.delete(k);
    }
  }

  hit(key: string, ttlMs: number, limit: number, blockMs: number): Promise<ThrottlerRecord> {
    return this.windows.increment(key, ttlMs, limit, blockMs, 'fleet');
  }

  take(key: string, holder: string, limit: number, leaseMs: number): boolean {
    const now = Date.now();
    const held = this.slots.get(key) ?? new Map<string, number>();
    for (const [h, until] of held) if (until <= now) held.delete(h);
    if (held.size >= limit) return false;
    held.set(holder, now + leaseMs);
    this.remember(this.slots, key, held);
    return true;
  }

  free(key: string, holder: string): void {
    const held = this.slots.get(key);
    held?.delete(holder);
    if (held?.size === 0) this.slots.delete(key);
  }

  close(): void {
    this.windows.onApplicationShutdown();
  }

  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    // Forget the oldest key when too many are tracked.
    if (map.size >= 10_000 && !map.has(key)) map.delete(map.keys().next().value!);
    map.set(key, value);
  }
}

type Scripts = (Redis | Cluster) & {
  abuseAttempt(...args: (string | number)[]): Promise<number>;
  abuseHit(...args: (string | number)[]): Promise<[number, number, number, number]>;
  abuseTake(...args: (string | number)[]): Promise<number>;
};

export interface FleetCountersOptions {
  /** REDIS_PREFIX: deployments sharing one Redis keep their own counts. */
  prefix: string;
  log: { warn(obj: object, msg: string): void };
}

const REDIS_TIMEOUT_MS = 1_000;
/** ioredis statuses of a connection that was lost (not one still being made at start-up). */
const LOST = new Set(['close', 'reconnecting', 'end']);

/**
 * The abuse limits' counts, shared by every API process through Redis (the scripts above), so N processes
 * allow what one allows. If Redis does not answer within a second, or the connection is lost, the process
 * counts in its own memory meanwhile (logged at most every 10 s): the limits then hold per process, as they
 * did before, and no request waits on Redis for longer than that second (not at all once it is known lost). Without a Redis client (unit tests), memory only.
 */
export class FleetCounters {
  private readonly redis: Scripts | null;
  private readonly local = new LocalCounters();
  /** Slots this process took in memory while Redis did not answer: they are given back there. */
  private readonly localSlots = new Set<string>();
  private lastWarning = 0;

  constructor(
    redis: Redis | Cluster | null,
    private readonly options: FleetCountersOptions,
  ) {
    if (redis) {
      redis.defineCommand('abuseAttempt', { lua: ATTEMPT });
      redis.defineCommand('abuseHit', { numberOfKeys: 1, lua: HIT });
      redis.defineCommand('abuseTake', { numberOfKeys: 1, lua: TAKE });
    }
    this.redis = redis as Scripts | null;
  }

  private key(name: string): string {
    return `${this.options.prefix}:{abuse}:${name}`;
  }

  /**
   * An attempt counted under `names` in a sliding window of `windowMs`: refused (false, and not recorded)
   * when a name already holds its limit of attempts in the window; otherwise recorded under every name
   * when `member` is given (a unique id of the attempt), or only looked at when it is null.
   */
  async attempt(names: string[], limits: number[], windowMs: number, member: string | null): Promise<boolean> {
    const keys = names.map((n) => this.key(n));
    const over = await this.guarded(
      (r) => r.abuseAttempt(keys.length, ...keys, windowMs, member ?? '', ...limits),
      () => this.local.attempt(keys, limits, windowMs, member),
    );
    return Number(over) === 0;
  }

  /** Forgets the attempts of `clear` and takes the attempt `member` back from `unnote` (a login that succeeded). */
  async forget(clear: string[], unnote: string[], member: string): Promise<void> {
    const c = clear.map((n) => this.key(n));
    const u = unnote.map((n) => this.key(n));
    await this.guarded(
      async (r) => {
        const multi = r.multi();
        if (c.length) multi.del(...c);
        for (const k of u) multi.zrem(k, member);
        await multi.exec();
      },
      () => this.local.forget(c, u, member),
    );
  }

  /** One request in a fixed window of `ttlMs` per name (the per-client rate limit; see HIT). */
  async hit(name: string, ttlMs: number, limit: number, blockMs: number): Promise<ThrottlerRecord> {
    const key = this.key(name);
    return this.guarded(
      async (r) => {
        const [hits, toEnd, blocked, toBlockEnd] = await r.abuseHit(key, ttlMs, limit, blockMs);
        return { totalHits: Number(hits), timeToExpire: seconds(Number(toEnd)), isBlocked: Number(blocked) === 1, timeToBlockExpire: seconds(Number(toBlockEnd)) };
      },
      () => this.local.hit(key, ttlMs, limit, blockMs),
    );
  }

  /**
   * A slot of `name`'s concurrency limit for `holder` (a unique id), for at most `leaseMs`: false when
   * `limit` holders have one. Give it back with free(); a holder that dies holds it until the lease ends.
   */
  async take(name: string, holder: string, limit: number, leaseMs: number): Promise<boolean> {
    const key = this.key(name);
    let inMemory = false;
    const taken = await this.guarded(
      async (r) => Number(await r.abuseTake(key, holder, limit, leaseMs)) === 1,
      () => {
        inMemory = true;
        return this.local.take(key, holder, limit, leaseMs);
      },
    );
    if (taken && inMemory) this.localSlots.add(holder);
    return taken;
  }

  async free(name: string, holder: string): Promise<void> {
    const key = this.key(name);
    if (this.localSlots.delete(holder)) return this.local.free(key, holder);
    // If Redis does not answer, the slot frees itself when its lease ends.
    await this.guarded(
      (r) => r.zrem(key, holder),
      () => 0,
    );
  }

  /** Closes the connection (the counters own the one they are given). */
  close(): void {
    this.local.close();
    if (this.redis && this.redis.status !== 'end') this.redis.disconnect();
  }

  /** A Redis call with a deadline; the in-memory count when there is no Redis or it does not answer in time. */
  private async guarded<T>(call: (r: Scripts) => Promise<T>, fallback: () => T | Promise<T>): Promise<T> {
    if (!this.redis) return fallback();
    // A connection known to be lost: no request waits out the deadline while it reconnects.
    if (LOST.has(this.redis.status)) {
      this.warn(`Redis connection ${this.redis.status}`);
      return fallback();
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        call(this.redis),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`Redis did not answer within ${REDIS_TIMEOUT_MS} ms`)), REDIS_TIMEOUT_MS))),
      ]);
    } catch (error) {
      this.warn((error as Error).message);
      return fallback();
    } finally {
      clearTimeout(timer);
    }
  }

  /** At most every 10 s. */
  private warn(err: string): void {
    if (Date.now() - this.lastWarning <= 10_000) return;
    this.lastWarning = Date.now();
    this.options.log.warn({ err }, 'abuse limits unavailable (Redis): each API process counts on its own meanwhile');
  }
}

/**
 * The per-client rate limit's storage for @nestjs/throttler (RATE_LIMIT_PER_CLIENT per RATE_LIMIT_WINDOW_MS):
 * fixed windows counted across the fleet (FleetCounters.hit), O(1) per request.
 */
export class FleetThrottlerStorage implements ThrottlerStorage {
  constructor(private readonly counters: FleetCounters) {}

  increment(key: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<ThrottlerRecord> {
    return this.counters.hit(`rate:${throttlerName}:${key}`, ttl, limit, blockDuration);
  }
}
