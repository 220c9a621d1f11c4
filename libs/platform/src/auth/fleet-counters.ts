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
 * the attempt's member ('' : only look), the channel that tells every process of an attempt recorded, then
 * one limit per key. Returns 0 when every count is under its limit (the attempt, if any, is then recorded
 * under every key and its keys published on the channel, in the same atomic step: every look a process
 * keeps in memory for those keys is dropped before anyone hears of the attempt), else the position of a
 * key at its limit.
 */
const ATTEMPT = `${NOW}
local window = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  if redis.call('ZCARD', key) >= tonumber(ARGV[i + 3]) then return i end
end
if ARGV[2] ~= '' then
  for _, key in ipairs(KEYS) do
    redis.call('ZADD', key, now, ARGV[2])
    redis.call('PEXPIRE', key, window)
  end
  redis.call('PUBLISH', ARGV[3], table.concat(KEYS, '\\n'))
end
return 0
`;

/**
 * ATTEMPT's look (no attempt to record), read-only: what every request with a valid key asks. KEYS: the
 * counts. ARGV: window ms, then one limit per key. Returns 0 when every count is under its limit, else the
 * position of a key at its limit.
 */
const LOOK = `${NOW}
local from = now - tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  if redis.call('ZCOUNT', key, '(' .. from, '+inf') >= tonumber(ARGV[i + 1]) then return i end
end
return 0
`;

/**
 * A fixed window per key (FixedWindowThrottlerStorage's rule), handed out in leases: KEYS[1] a hash of hits,
 * ends, blocked. ARGV: window ms, limit, block ms (0: the window), hits wanted. Grants at most what is left
 * of the window's limit (the hits are counted when granted); when nothing is left, the request that found
 * it so is the one over the limit and the key is blocked. Returns {hits granted, ms to the window's end,
 * ms to the block's end (0: not blocked), hits counted in the window}.
 */
const LEASE = `${NOW}
local ttl = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local w = redis.call('HMGET', KEYS[1], 'hits', 'ends', 'blocked')
local hits, ends, blocked = tonumber(w[1]) or 0, tonumber(w[2]) or 0, tonumber(w[3]) or 0
if blocked > now then return {0, math.max(0, ends - now), blocked - now, hits} end
if ends <= now then
  hits = 0
  ends = now + ttl
end
local grant = math.min(tonumber(ARGV[4]), limit - hits)
if grant <= 0 then
  grant = 0
  hits = hits + 1
  local block = tonumber(ARGV[3])
  if block <= 0 then block = ttl end
  blocked = now + block
  ends = math.min(ends, blocked)
else
  hits = hits + grant
end
redis.call('HSET', KEYS[1], 'hits', hits, 'ends', ends, 'blocked', blocked)
redis.call('PEXPIRE', KEYS[1], math.max(ends, blocked) - now + 1000)
return {grant, ends - now, math.max(0, blocked - now), hits}
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

/** Hits of a rate limit a process takes from Redis at once: 1/50 of the limit, 1 to 100. */
export const leaseSize = (limit: number): number => Math.max(1, Math.min(100, Math.floor(limit / 50)));

/** A lease of a window's hits (see LEASE), on this process's clock. */
interface Lease {
  left: number;
  /** The window's hits counted in Redis when the lease was granted (this lease's included). */
  hits: number;
  endsAt: number;
  blockedUntil: number;
}

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

/**
 * The looks Redis allowed, kept in this process (FleetCounters.look), and the subscription that drops them:
 * ATTEMPT publishes the keys of every attempt it records on `channel`, in the script that records it, so
 * the message is on its way to every subscribed process before the recording process has its answer.
 * Nothing is kept unless the subscription is confirmed live (SUBSCRIBE answered on the current connection);
 * losing the connection drops everything. `epoch` moves with every drop and every change of the
 * subscription, so a look that was under way meanwhile is not kept (its answer may predate an attempt).
 */
class AllowedLooks {
  private readonly sub: Redis | Cluster | null;
  private live = false;
  private epoch = 0;
  /** Moves when the subscription's connection is lost: a SUBSCRIBE answered on an older one does not count. */
  private connection = 0;
  private readonly kept = new Map<string, { until: number; keys: string[] }>();
  private readonly byKey = new Map<string, Set<string>>();
  private readonly pending = new Map<string, Promise<{ allowed: boolean; current: boolean }>>();

  constructor(redis: Redis | Cluster | null, private readonly channel: string) {
    this.sub = redis ? (redis as Redis).duplicate() : null;
    if (!this.sub) return;
    const sub = this.sub;
    sub.on('error', () => undefined);
    for (const event of ['close', 'end', 'reconnecting']) sub.on(event, () => this.down());
    sub.on('message', (from: string, message: string) => {
      if (from === this.channel) this.drop(message.split('\n'));
    });
    const subscribe = () => {
      const on = this.connection;
      sub.subscribe(this.channel).then(
        () => {
          // Only if the connection was not lost while SUBSCRIBE was under way.
          if (this.connection !== on) return;
          this.live = true;
          this.epoch++;
        },
        () => this.down(),
      );
    };
    sub.on('ready', subscribe);
    if (sub.status === 'ready') subscribe();
  }

  /** Whether a look kept for `id` still allows (live subscription, within ALLOWED_LOOK_MS). */
  allows(id: string): boolean {
    if (!this.live) return false;
    const k = this.kept.get(id);
    if (!k) return false;
    if (k.until > Date.now()) return true;
    this.remove(id);
    return false;
  }

  asking(id: string): Promise<{ allowed: boolean; current: boolean }> | undefined {
    return this.pending.get(id);
  }

  ask(id: string, answer: Promise<{ allowed: boolean; current: boolean }>): void {
    this.pending.set(id, answer);
    void answer.finally(() => {
      if (this.pending.get(id) === answer) this.pending.delete(id);
    });
  }

  /** Taken before a look is sent; unchangedSince() tells whether its answer may be kept. */
  mark(): number {
    return this.live ? this.epoch : -1;
  }

  unchangedSince(mark: number): boolean {
    return mark >= 0 && this.live && this.epoch === mark;
  }

  keep(id: string, keys: string[]): void {
    if (this.kept.size >= 10_000 && !this.kept.has(id)) this.remove(this.kept.keys().next().value!);
    this.kept.set(id, { until: Date.now() + ALLOWED_LOOK_MS, keys });
    for (const key of keys) {
      let ids = this.byKey.get(key);
      if (!ids) this.byKey.set(key, (ids = new Set()));
      ids.add(id);
    }
  }

  /** An attempt was (or is about to be) recorded under `keys`: what was kept for them no longer holds. */
  drop(keys: string[]): void {
    this.epoch++;
    for (const key of keys) for (const id of this.byKey.get(key) ?? []) this.remove(id);
  }

  forgetAll(): void {
    this.epoch++;
    this.kept.clear();
    this.byKey.clear();
  }

  close(): void {
    this.down();
    if (this.sub && this.sub.status !== 'end') this.sub.disconnect();
  }

  private down(): void {
    this.connection++;
    this.live = false;
    this.forgetAll();
  }

  private remove(id: string): void {
    const k = this.kept.get(id);
    if (!k) return;
    this.kept.delete(id);
    for (const key of k.keys) {
      const ids = this.byKey.get(key);
      ids?.delete(id);
      if (ids?.size === 0) this.byKey.delete(key);
    }
  }
}

type Scripts = (Redis | Cluster) & {
  abuseAttempt(...args: (string | number)[]): Promise<number>;
  abuseLook(...args: (string | number)[]): Promise<number>;
  abuseLease(...args: (string | number)[]): Promise<[number, number, number, number]>;
  abuseTake(...args: (string | number)[]): Promise<number>;
};

export interface FleetCountersOptions {
  /** REDIS_PREFIX: deployments sharing one Redis keep their own counts. */
  prefix: string;
  log: { warn(obj: object, msg: string): void };
}

const REDIS_TIMEOUT_MS = 1_000;
/**
 * How long a look that Redis allowed is answered from this process's memory at most. The attempts that
 * could end it (recorded by any process) drop it at once through the channel; this bound only matters
 * when a message was lost (a subscription broken without the connection noticing).
 */
export const ALLOWED_LOOK_MS = 1_000;
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
  /** Looks Redis allowed, answered from memory meanwhile (see look()). */
  private readonly looks: AllowedLooks;
  /** The rate limit's hits this process leased and has not spent yet, per key (hit()). */
  private readonly leases = new Map<string, Lease>();
  private readonly leasing = new Map<string, Promise<ThrottlerRecord>>();
  /** Slots this process took in memory while Redis did not answer: they are given back there. */
  private readonly localSlots = new Set<string>();
  private lastWarning = 0;

  constructor(
    redis: Redis | Cluster | null,
    private readonly options: FleetCountersOptions,
  ) {
    if (redis) {
      redis.defineCommand('abuseAttempt', { lua: ATTEMPT });
      redis.defineCommand('abuseLook', { lua: LOOK, readOnly: true });
      redis.defineCommand('abuseLease', { numberOfKeys: 1, lua: LEASE });
      redis.defineCommand('abuseTake', { numberOfKeys: 1, lua: TAKE });
    }
    this.redis = redis as Scripts | null;
    this.looks = new AllowedLooks(redis, this.channel);
  }

  private key(name: string): string {
    return `${this.options.prefix}:{abuse}:${name}`;
  }

  /** Where ATTEMPT tells every process which keys it recorded an attempt under. */
  private get channel(): string {
    return `${this.options.prefix}:{abuse}:recorded`;
  }

  /**
   * An attempt counted under `names` in a sliding window of `windowMs`: refused (false, and not recorded)
   * when a name already holds its limit of attempts in the window; otherwise recorded under every name
   * when `member` is given (a unique id of the attempt), or only looked at when it is null.
   */
  async attempt(names: string[], limits: number[], windowMs: number, member: string | null): Promise<boolean> {
    const keys = names.map((n) => this.key(n));
    if (member === null) return this.look(keys, limits, windowMs);
    // What this process allowed for these keys no longer holds (the channel tells the other processes).
    this.looks.drop(keys);
    const over = await this.guarded(
      (r) => r.abuseAttempt(keys.length, ...keys, windowMs, member, this.channel, ...limits),
      () => this.local.attempt(keys, limits, windowMs, member),
    );
    return Number(over) === 0;
  }

  /**
   * A look (LOOK), answered from memory while Redis's last answer for the same keys allowed it: what every
   * request with a valid API key asks, so most ask nothing of Redis. Only an allowing answer is kept (a
   * count only grows by an attempt recorded, and every recorded attempt drops the kept answers of its keys
   * in every process before the attempt's own caller hears of it: see AllowedLooks), for ALLOWED_LOOK_MS at
   * most, and only while this process's subscription to the channel is known to be live. Concurrent looks
   * of the same keys share one round trip.
   */
  private async look(keys: string[], limits: number[], windowMs: number): Promise<boolean> {
    const id = `${windowMs}|${limits.join(',')}|${keys.join('\n')}`;
    if (this.looks.allows(id)) return true;
    const asking = this.looks.asking(id);
    if (asking) {
      const shared = await asking;
      // An attempt was recorded while that look was under way: this request asks on its own.
      if (shared.current) return shared.allowed;
    }
    const since = this.looks.mark();
    let fromRedis = false;
    const answer = this.guarded(
      async (r) => {
        const over = Number(await r.abuseLook(keys.length, ...keys, windowMs, ...limits));
        fromRedis = true;
        return over;
      },
      () => this.local.attempt(keys, limits, windowMs, null),
    ).then((over) => {
      const allowed = Number(over) === 0;
      const current = this.looks.unchangedSince(since);
      if (allowed && fromRedis && current) this.looks.keep(id, keys);
      return { allowed, current };
    });
    this.looks.ask(id, answer);
    return (await answer).allowed;
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

  /**
   * One request in a fixed window of `ttlMs` per name (the per-client rate limit). Not a round trip per
   * request: the process takes the window's hits from Redis in leases of leaseSize(limit) (LEASE) and
   * spends them here, so the fleet never admits more than `limit` in a window; hits a process leased and
   * did not spend before the window ended are lost (a client may meet the limit up to a lease per process
   * early: 1/50 of the limit at most, a single hit for limits under 100). A block Redis answered is kept
   * here until it ends.
   */
  async hit(name: string, ttlMs: number, limit: number, blockMs: number): Promise<ThrottlerRecord> {
    const key = this.key(name);
    const now = Date.now();
    const held = this.leases.get(key);
    if (held && now < held.endsAt) {
      if (held.blockedUntil > now) return { totalHits: limit + 1, timeToExpire: seconds(held.endsAt - now), isBlocked: true, timeToBlockExpire: seconds(held.blockedUntil - now) };
      if (held.left > 0) {
        held.left--;
        return { totalHits: held.hits - held.left, timeToExpire: seconds(held.endsAt - now), isBlocked: false, timeToBlockExpire: 0 };
      }
    }
    // One lease asked at a time per key: the requests that find it spent meanwhile wait for it.
    const asking = this.leasing.get(key);
    if (asking) {
      await asking;
      return this.hit(name, ttlMs, limit, blockMs);
    }
    const leased = this.guarded(
      async (r) => {
        const [granted, toEnd, toBlockEnd, hits] = (await r.abuseLease(key, ttlMs, limit, blockMs, leaseSize(limit))).map(Number) as [number, number, number, number];
        const at = Date.now();
        // The first granted hit is this request's; the rest are spent by the next ones.
        this.remember(key, { left: Math.max(0, granted - 1), hits, endsAt: at + Math.max(toEnd, toBlockEnd), blockedUntil: toBlockEnd > 0 ? at + toBlockEnd : 0 });
        return granted > 0
          ? { totalHits: hits - Math.max(0, granted - 1), timeToExpire: seconds(toEnd), isBlocked: false, timeToBlockExpire: 0 }
          : { totalHits: Math.max(hits, limit + 1), timeToExpire: seconds(toEnd), isBlocked: true, timeToBlockExpire: seconds(toBlockEnd) };
      },
      () => this.local.hit(key, ttlMs, limit, blockMs),
    );
    this.leasing.set(key, leased);
    try {
      return await leased;
    } finally {
      this.leasing.delete(key);
    }
  }

  private remember(key: string, lease: Lease): void {
    if (this.leases.size >= 10_000 && !this.leases.has(key)) this.leases.delete(this.leases.keys().next().value!);
    this.leases.set(key, lease);
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
    this.looks.close();
    if (this.redis && this.redis.status !== 'end') this.redis.disconnect();
  }

  /** A Redis call with a deadline; the in-memory count when there is no Redis or it does not answer in time. */
  private async guarded<T>(call: (r: Scripts) => Promise<T>, fallback: () => T | Promise<T>): Promise<T> {
    if (!this.redis) return fallback();
    // A connection known to be lost: no request waits out the deadline while it reconnects.
    if (LOST.has(this.redis.status)) {
      this.looks.forgetAll();
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
 * fixed windows counted across the fleet (FleetCounters.hit), leased from Redis a few hits at a time.
 */
export class FleetThrottlerStorage implements ThrottlerStorage {
  constructor(private readonly counters: FleetCounters) {}

  increment(key: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<ThrottlerRecord> {
    return this.counters.hit(`rate:${throttlerName}:${key}`, ttl, limit, blockDuration);
  }
}
