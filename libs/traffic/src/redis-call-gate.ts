import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import type { AcquireOptions, CallGate, CallKind, CallPermit, CallResult, HeldBack } from '@cardpull/partner-client';
import { ACQUIRE, CUT, PAUSE, PAUSED, RELEASE, SNAPSHOT } from './scripts';
import { SCOPES, type PartnerLimits, type Scope } from './limits';

export interface GateOptions {
  /** Key prefix (REDIS_PREFIX): deployments sharing one Redis keep their own limits. */
  prefix: string;
  limits: PartnerLimits;
  /** How long a permit's place in flight lasts if its holder dies: the call's lease. */
  leaseMs: number;
  /** PARTNER_POLL_MAX_YIELD_MS: a poll held back this long no longer yields to creations. */
  maxYieldMs: number;
  /** PARTNER_BACKOFF_FLOOR_PER_SECOND. */
  floorPerSecond: number;
  log: { warn(obj: object, msg: string): void; log(obj: object, msg: string): void };
}

/** One scope as the operations page and the metrics show it. */
export interface ScopeView {
  scope: Scope;
  /** Configured calls per second (0: unlimited) and in flight (0: unlimited). */
  limitPerSecond: number;
  limitInFlight: number;
  /** The rate in force: the configured one, or lower while adapting to 429s without Retry-After (0: unlimited). */
  ratePerSecond: number;
  adaptive: boolean;
  /** Calls admitted in the last whole second, fleet-wide. */
  lastSecond: number;
  inFlight: number;
  pausedUntil: Date | null;
  rateLimitedLastHour: number;
}

/** Our own count of permits refused in this process, per kind and reason (for the metrics). */
export type HeldBackCounts = Record<CallKind, Record<HeldBack['reason'], number>>;

const REDIS_TIMEOUT_MS = 1_000;
const WANT_TTL_MS = 250;
/** A held-back call that lets a better-ranked one of this process go first looks again this often. */
const LOCAL_TURN_MS = 10;
/** A permit older than this asks Redis again, before its call is recorded as sent, whether a pause began since. */
const RECHECK_AFTER_MS = 20;

/**
 * This process's calls held back by the limits, with their rank (AcquireOptions.rank): a call asks Redis
 * only while no call of better rank waits here, so the queue's priorities (a client's fair share) also
 * decide who of the calls already in a worker's hands gets the next token. Only held-back calls enter:
 * with no limit in play nothing waits here and nothing changes.
 */
class RankedWaiters {
  private readonly ranks = new Map<number, number>();
  private seq = 0;

  enter(rank: number): number {
    this.ranks.set(++this.seq, rank);
    return this.seq;
  }

  leave(id: number): void {
    this.ranks.delete(id);
  }

  betterThan(id: number): boolean {
    const mine = this.ranks.get(id);
    if (mine === undefined) return false;
    for (const r of this.ranks.values()) if (r < mine) return true;
    return false;
  }
}

type Scripts = Redis & {
  gateAcquire(...args: (string | number)[]): Promise<[number, number, string]>;
  gateRelease(...args: (string | number)[]): Promise<number>;
  gatePause(...args: (string | number)[]): Promise<[number, number]>;
  gatePaused(...args: (string | number)[]): Promise<number>;
  gateCut(...args: (string | number)[]): Promise<[number, string]>;
  gateSnapshot(...args: (string | number)[]): Promise<[string, number, number, number, number, number]>;
};

/**
 * The fleet's limits on partner calls, in Redis (see scripts.ts): a token bucket and a count in flight per
 * kind of call and overall, a pause per kind when the partner sends Retry-After with a 429 or 503, and
 * without it an adaptive rate (halved on a 429, raised additively, never below a floor). Creations go
 * first: while one waits on the shared limits, polls and re-checks yield, for PARTNER_POLL_MAX_YIELD_MS at
 * most. If Redis does not answer, calls go on unlimited (logged): the orders' safety never depends on it.
 */
export class RedisCallGate implements CallGate {
  private readonly redis: Scripts;
  private lastRedisWarning = 0;
  readonly heldBack: HeldBackCounts = {
    create: { paused: 0, rate: 0, in_flight: 0, yield: 0 },
    poll: { paused: 0, rate: 0, in_flight: 0, yield: 0 },
    read: { paused: 0, rate: 0, in_flight: 0, yield: 0 },
  };
  private readonly pauseTimers = new Map<CallKind, NodeJS.Timeout>();
  private readonly waiters: Record<CallKind, RankedWaiters> = { create: new RankedWaiters(), poll: new RankedWaiters(), read: new RankedWaiters() };

  constructor(
    redis: Redis | Cluster,
    readonly options: GateOptions,
  ) {
    redis.defineCommand('gateAcquire', { numberOfKeys: 9, lua: ACQUIRE });
    redis.defineCommand('gateRelease', { numberOfKeys: 5, lua: RELEASE });
    redis.defineCommand('gatePause', { numberOfKeys: 1, lua: PAUSE });
    redis.defineCommand('gatePaused', { numberOfKeys: 2, lua: PAUSED });
    redis.defineCommand('gateCut', { numberOfKeys: 2, lua: CUT });
    redis.defineCommand('gateSnapshot', { numberOfKeys: 5, lua: SNAPSHOT });
    this.redis = redis as unknown as Scripts;
  }

  private key(scope: Scope | 'want', part?: string): string {
    return `${this.options.prefix}:{traffic}:${scope}${part ? `:${part}` : ''}`;
  }

  private scopeKeys(scope: Scope): string[] {
    return [this.key(scope, 'bucket'), this.key(scope, 'flight'), this.key(scope, 'pause'), this.key(scope, 'adapt')];
  }

  async acquire(kind: CallKind, opts: AcquireOptions): Promise<CallPermit | HeldBack> {
    const { limits, leaseMs, maxYieldMs } = this.options;
    const started = Date.now();
    const heldSince = opts.heldSince ?? started;
    const waiters = this.waiters[kind];
    /** This call's place among the process's held-back calls of its kind (once it has been held back). */
    let place: number | null = null;
    try {
      for (;;) {
        if (place !== null && waiters.betterThan(place)) {
          const left = started + opts.maxWaitMs - Date.now();
          if (left <= 0) return { heldBack: true, waitMs: LOCAL_TURN_MS, reason: 'rate' };
          await sleep(Math.min(left, LOCAL_TURN_MS));
          continue;
        }
        const id = randomUUID();
        const askedAt = Date.now();
        const yields = kind !== 'create' && !opts.urgent && Date.now() - heldSince < maxYieldMs;
        const answer = await this.guarded(() =>
          this.redis.gateAcquire(
            ...this.scopeKeys(kind),
            ...this.scopeKeys('any'),
            this.key('want'),
            id,
            leaseMs,
            limits[kind].perSecond,
            limits[kind].inFlight,
            limits.any.perSecond,
            limits.any.inFlight,
            kind,
            yields ? 1 : 0,
            WANT_TTL_MS,
          ),
        );
        if (!answer || answer[0] === 1) return this.permit(kind, answer ? id : null, askedAt);
        const waitMs = Number(answer[1]);
        const reason = answer[2] as HeldBack['reason'];
        this.heldBack[kind][reason]++;
        if (place === null && opts.rank !== undefined) place = waiters.enter(opts.rank);
        const left = started + opts.maxWaitMs - Date.now();
        if (waitMs > left) return { heldBack: true, waitMs, reason };
        await sleep(waitMs + Math.random() * Math.min(20, waitMs));
      }
    } finally {
      if (place !== null) waiters.leave(place);
    }
  }

  private permit(kind: CallKind, id: string | null, askedAt: number): CallPermit {
    let done = false;
    const grantedAt = Date.now();
    let checkedAt = askedAt;
    return {
      kind,
      get checkedAt() {
        return checkedAt;
      },
      recheck: async () => {
        // A permit a few ms old saw the latest pause already: no round trip.
        if (Date.now() - grantedAt < RECHECK_AFTER_MS) return 0;
        const at = Date.now();
        const paused = Number((await this.guarded(() => this.redis.gatePaused(this.key(kind, 'pause'), this.key('any', 'pause')))) ?? 0);
        checkedAt = at;
        return paused;
      },
      done: (result: CallResult) => {
        if (done) return;
        done = true;
        void this.afterCall(kind, id, result);
      },
    };
  }

  private async afterCall(kind: CallKind, id: string | null, result: CallResult): Promise<void> {
    const { limits } = this.options;
    const limited = result.httpStatus === 429;
    if (id) {
      await this.guarded(() =>
        this.redis.gateRelease(
          this.key(kind, 'bucket'),
          this.key(kind, 'flight'),
          this.key('any', 'bucket'),
          this.key('any', 'flight'),
          this.key(kind, 'r429'),
          id,
          result.sent ? 0 : 1,
          limits[kind].perSecond,
          limits.any.perSecond,
          limited ? 1 : 0,
        ),
      );
    }
    if (result.retryAfterMs !== undefined && (limited || result.httpStatus === 503)) {
      await this.pause(kind, result.retryAfterMs, result.httpStatus!);
    } else if (limited) {
      await this.slowDown(kind);
    }
  }

  /** Every process holds calls of `kind` back for `ms` (the partner's Retry-After); logged where it starts and ends. */
  async pause(kind: CallKind, ms: number, httpStatus: number): Promise<void> {
    if (ms <= 0) return;
    const answer = await this.guarded(() => this.redis.gatePause(this.key(kind, 'pause'), Math.round(ms)));
    if (!answer || answer[0] === 0) return;
    const until = new Date(Number(answer[1]));
    this.options.log.warn(
      { partnerPause: { kind, until: until.toISOString(), retryAfterMs: ms, httpStatus } },
      answer[0] === 1 ? `partner asked for a pause: no ${kind} call from any worker until ${until.toISOString()}` : `partner pause of ${kind} calls lengthened to ${until.toISOString()}`,
    );
    clearTimeout(this.pauseTimers.get(kind));
    const timer = setTimeout(() => {
      this.pauseTimers.delete(kind);
      this.options.log.log({ partnerPause: { kind, ended: new Date().toISOString() } }, `partner pause of ${kind} calls over`);
    }, Math.max(0, until.getTime() - Date.now()));
    timer.unref();
    this.pauseTimers.set(kind, timer);
  }

  /** A 429 without Retry-After: the kind's rate is halved fleet-wide (at most once a second), then recovers. */
  async slowDown(kind: CallKind): Promise<void> {
    const answer = await this.guarded(() =>
      this.redis.gateCut(this.key(kind, 'adapt'), this.key(kind, 'bucket'), this.options.limits[kind].perSecond, this.options.floorPerSecond),
    );
    if (answer?.[0] === 1) {
      this.options.log.warn({ partnerBackoff: { kind, ratePerSecond: Number(answer[1]) } }, `partner answered 429 without Retry-After: ${kind} calls slowed to ${Number(answer[1]).toFixed(1)}/s fleet-wide, recovering step by step`);
    }
  }

  /** Every scope as it stands in Redis now (the operations page, the metrics); null if Redis does not answer. */
  async snapshot(): Promise<ScopeView[] | null> {
    const views: ScopeView[] = [];
    for (const scope of SCOPES) {
      const limit = this.options.limits[scope];
      const s = await this.guarded(() => this.redis.gateSnapshot(...this.scopeKeys(scope), this.key(scope, 'r429'), limit.perSecond));
      if (!s) return null;
      views.push({
        scope,
        limitPerSecond: limit.perSecond,
        limitInFlight: limit.inFlight,
        ratePerSecond: Number(s[0]),
        adaptive: Number(s[5]) === 1,
        lastSecond: Number(s[4]),
        inFlight: Number(s[1]),
        pausedUntil: Number(s[2]) > 0 ? new Date(Number(s[2])) : null,
        rateLimitedLastHour: Number(s[3]),
      });
    }
    return views;
  }

  /** Stops the pause timers and closes the connection (the gate owns the one it is given). */
  close(): void {
    for (const timer of this.pauseTimers.values()) clearTimeout(timer);
    this.redis.disconnect();
  }

  /** A Redis call with a deadline; null (logged, at most every 10 s) when Redis does not answer in time. */
  private async guarded<T>(call: () => Promise<T>): Promise<T | null> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        call(),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`Redis did not answer within ${REDIS_TIMEOUT_MS} ms`)), REDIS_TIMEOUT_MS))),
      ]);
    } catch (error) {
      if (Date.now() - this.lastRedisWarning > 10_000) {
        this.lastRedisWarning = Date.now();
        this.options.log.warn({ err: (error as Error).message }, 'partner limits unavailable (Redis): calls go on without the fleet-wide limits meanwhile');
      }
      return null;
    } finally {
      clearTimeout(timer);
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
