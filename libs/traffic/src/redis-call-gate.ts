import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { isHeldBack, type AcquireOptions, type CallGate, type CallKind, type CallPermit, type CallResult, type HeldBack } from '@cardpull/partner-client';
import { ACQUIRE, LEARN, LEARNED, PAUSED, RELEASE, SNAPSHOT } from './scripts';
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
  /** How often a gate asks Redis which kinds have learned limits, besides the messages (default 2 s). */
  learnedPollMs?: number;
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
/** How long a kind stays limited by what the fleet learned from its last 429 (refreshed by each one). */
export const LEARNED_TTL_MS = 3_600_000;
/** A gate that missed a message (or just started) asks Redis this often which kinds have learned limits. */
const LEARNED_POLL_MS = 2_000;
const LEARN_KINDS: readonly CallKind[] = ['create', 'poll', 'read'];
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
  gatePaused(...args: (string | number)[]): Promise<number>;
  gateLearn(...args: (string | number)[]): Promise<[number, number, number, string]>;
  gateLearned(...args: (string | number)[]): Promise<number[]>;
  gateSnapshot(...args: (string | number)[]): Promise<[string, number, number, number, number, number]>;
};

/**
 * Calls of a kind a process lets be in flight, without limits, before it has seen them answered (see
 * OpenWindow). Against a fast partner the window, not the rate, is what a process has on its way when the
 * partner's bucket runs out, so it is what the first 429 costs: every call then in flight is refused too.
 * With 4, a fleet of 3 met a partner of 5 creations/s with 13 refusals in its first second (10.3 % of a
 * 40 s run, over the 10 % the learned limits aim at); with 2, about half as many. The window still reaches
 * 256 after about 250 calls answered.
 */
export const OPEN_START_IN_FLIGHT = 2;
const OPEN_UNLIMITED_FROM = 256;

/**
 * A kind's calls in flight in this process while nothing limits it (no round trip to Redis): a slow start,
 * so that a partner whose limits nobody told us is not met with every worker slot at once. The window
 * doubles each time as many calls as it holds were answered without a 429, and is gone from
 * OPEN_UNLIMITED_FROM (after about 250 calls answered). A 429 closes
 * it until the fleet has learned from that answer (the calls of the kind then ask Redis): the slots the
 * refused calls free are not handed to more calls that the partner would refuse too.
 */
const retryAfterOf = (result: CallResult): number => (result.retryAfterMs !== undefined && result.retryAfterMs > 0 ? result.retryAfterMs : 0);
/** An answer the fleet learns limits from: a 429, or a 503 with Retry-After. */
const teaches = (result: CallResult): boolean => result.httpStatus === 429 || (result.httpStatus === 503 && retryAfterOf(result) > 0);

class OpenWindow {
  private inFlight = 0;
  private cap = OPEN_START_IN_FLIGHT;
  private answered = 0;
  /** 429s being learned from: the window admits nothing meanwhile. */
  private closed = 0;
  private readonly waiting: (() => void)[] = [];

  tryEnter(): boolean {
    if (this.closed > 0 || this.inFlight >= this.cap) return false;
    this.inFlight++;
    return true;
  }

  /** Waits for a place up to `ms`; whether it got one. */
  async enter(ms: number): Promise<boolean> {
    const until = Date.now() + ms;
    while (!this.tryEnter()) {
      const left = until - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.waiting.push(done);
      });
    }
    return true;
  }

  leave(answeredWithout429: boolean): void {
    this.inFlight--;
    if (answeredWithout429 && this.cap !== Infinity && ++this.answered >= this.cap) {
      this.cap = this.cap * 2 >= OPEN_UNLIMITED_FROM ? Infinity : this.cap * 2;
      this.answered = 0;
    }
    this.wake();
  }

  /** A 429 came: nothing more through this window until `learned` settles (the fleet knows of it). */
  closeUntil(learned: Promise<unknown>): void {
    this.closed++;
    void learned.finally(() => {
      this.closed--;
      this.wake();
    });
  }

  private wake(): void {
    for (const wake of this.waiting.splice(0)) wake();
  }
}

/** Calls of a kind this process got through (not refused with 429) in the current and the previous second. */
class Admitted {
  private sec = 0;
  private cur = 0;
  private prev = 0;

  add(now = Date.now()): void {
    this.roll(now);
    this.cur++;
  }

  /** Over the last second (the previous second's count weighted by the part of it still in the window). */
  lastSecond(now = Date.now()): number {
    this.roll(now);
    return this.cur + this.prev * (1 - (now % 1000) / 1000);
  }

  private roll(now: number): void {
    const sec = Math.floor(now / 1000);
    if (sec === this.sec) return;
    this.prev = sec === this.sec + 1 ? this.cur : 0;
    this.cur = 0;
    this.sec = sec;
  }
}

/**
 * The fleet's limits on partner calls, in Redis (see scripts.ts): a token bucket and a count in flight per
 * kind of call and overall, a pause per kind when the partner sends Retry-After with a 429 or 503, and a
 * rate learned from the partner's 429s. Creations go first: while one waits on the shared limits, polls and
 * re-checks yield, for PARTNER_POLL_MAX_YIELD_MS at most. If Redis does not answer, calls go on unlimited
 * (logged): the orders' safety never depends on it.
 *
 * A kind with no configured limit (PARTNER_LIMITS: neither its own nor `any`) and nothing learned costs no
 * Redis round trip at all: its permits are given here (after a slow start of the calls in flight, see
 * OpenWindow). Its first 429 (or 503 with Retry-After) is learned
 * fleet-wide (LEARN: a pause, a paced release after it, a rate that starts at what this process got through
 * and climbs until the partner refuses again) and published; every gate then asks Redis for that kind (one
 * script per call) until LEARNED_TTL_MS after its last 429. A gate that missed the message finds the
 * learned state within LEARNED_POLL_MS. Where a limit is configured, one script per call (plus one more
 * only where an in-flight limit is set, a call was not sent, or the partner answered 429).
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
  /** Until when (this process's clock) each kind is limited by what the fleet learned; 0: not. */
  private readonly learnedUntil: Record<CallKind, number> = { create: 0, poll: 0, read: 0 };
  private readonly admitted: Record<CallKind, Admitted> = { create: new Admitted(), poll: new Admitted(), read: new Admitted() };
  private readonly openWindow: Record<CallKind, OpenWindow> = { create: new OpenWindow(), poll: new OpenWindow(), read: new OpenWindow() };
  private readonly subscriber: Redis | Cluster;
  private readonly learnedPoll: NodeJS.Timeout;
  /** This gate (one per process) among the fleet's: its seed of a first learned rate counts once. */
  private readonly id = randomUUID();

  constructor(
    redis: Redis | Cluster,
    readonly options: GateOptions,
  ) {
    redis.defineCommand('gateAcquire', { numberOfKeys: 9, lua: ACQUIRE });
    redis.defineCommand('gateRelease', { numberOfKeys: 5, lua: RELEASE });
    redis.defineCommand('gatePaused', { numberOfKeys: 2, lua: PAUSED });
    redis.defineCommand('gateLearn', { numberOfKeys: 4, lua: LEARN });
    redis.defineCommand('gateLearned', { numberOfKeys: 6, lua: LEARNED });
    redis.defineCommand('gateSnapshot', { numberOfKeys: 5, lua: SNAPSHOT });
    this.redis = redis as unknown as Scripts;
    // What another process learns reaches this one as a message on its own connection (subscribed, it can
    // do nothing else), and, should one be missed, by asking Redis every LEARNED_POLL_MS.
    this.subscriber = (redis as Redis).duplicate();
    this.subscriber.on('error', () => undefined);
    this.subscriber.on('message', (_channel: string, kind: string) => this.heard(kind as CallKind, LEARNED_TTL_MS, 'message'));
    const subscribed = this.subscriber.subscribe(this.channel()).then(
      () => undefined,
      () => undefined,
    );
    this.learnedPoll = setInterval(() => void this.refreshLearned(), options.learnedPollMs ?? LEARNED_POLL_MS);
    this.learnedPoll.unref();
    this.listening = Promise.all([subscribed, this.refreshLearned()]).then(() => undefined);
  }

  /** Resolves once this gate listens for what others learn and has asked Redis what is learned already (or could not). */
  readonly listening: Promise<void>;

  private channel(): string {
    return this.key('any', 'learned');
  }

  /** Whether a kind's calls can go without asking Redis: nothing configured for it or `any`, nothing learned. */
  private open(kind: CallKind): boolean {
    const { limits } = this.options;
    const configured = limits[kind].perSecond > 0 || limits[kind].inFlight > 0 || limits.any.perSecond > 0 || limits.any.inFlight > 0;
    return !configured && this.learnedUntil[kind] <= Date.now();
  }

  /** Whether a permit takes a place in flight in Redis (only where an in-flight limit is set). */
  private tracksFlight(kind: CallKind): boolean {
    return this.options.limits[kind].inFlight > 0 || this.options.limits.any.inFlight > 0;
  }

  private heard(kind: CallKind, ttlMs: number, via: 'message' | 'poll' | 'own'): void {
    if (!LEARN_KINDS.includes(kind) || ttlMs <= 0) return;
    const wasOpen = this.learnedUntil[kind] <= Date.now();
    this.learnedUntil[kind] = Math.max(this.learnedUntil[kind], Date.now() + ttlMs);
    if (wasOpen) {
      this.options.log.log({ partnerLimits: { kind, learnedAtMs: Date.now(), via } }, `partner limits learned for ${kind} calls: this process now asks Redis before each one`);
    }
  }

  private async refreshLearned(): Promise<void> {
    const keys = LEARN_KINDS.flatMap((k) => [this.key(k, 'adapt'), this.key(k, 'pause')]);
    const ttl = await this.guarded(() => this.redis.gateLearned(...keys));
    if (ttl) LEARN_KINDS.forEach((k, i) => this.heard(k, Number(ttl[i]), 'poll'));
  }

  private key(scope: Scope | 'want', part?: string): string {
    return `${this.options.prefix}:{traffic}:${scope}${part ? `:${part}` : ''}`;
  }

  private scopeKeys(scope: Scope): string[] {
    return [this.key(scope, 'bucket'), this.key(scope, 'flight'), this.key(scope, 'pause'), this.key(scope, 'adapt')];
  }

  async acquire(kind: CallKind, opts: AcquireOptions): Promise<CallPermit | HeldBack> {
    if (this.open(kind)) {
      const window = this.openWindow[kind];
      if (!window.tryEnter() && !(await window.enter(opts.maxWaitMs))) return { heldBack: true, waitMs: LOCAL_TURN_MS * 2, reason: 'in_flight' };
      return this.permit(kind, null, Date.now(), 0, window);
    }
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
            this.tracksFlight(kind) ? 1 : 0,
          ),
        );
        if (!answer || answer[0] === 1) return this.permit(kind, answer ? id : null, askedAt, answer ? Number(answer[1]) : 0);
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

  /**
   * `id`: the permit's id in Redis (null: given here, without asking Redis, or Redis did not answer);
   * `admittedAtRedis`: when Redis admitted it (its clock; 0: it did not), so a 429 to a call sent before
   * the fleet's last cut does not cut again.
   */
  private permit(kind: CallKind, id: string | null, askedAt: number, admittedAtRedis: number, window?: OpenWindow): CallPermit {
    let done = false;
    const grantedAt = Date.now();
    let checkedAt = askedAt;
    /** A permit given here while the kind was open, asked of Redis again once the fleet learned a limit. */
    let reasked: CallPermit | null = null;
    return {
      kind,
      get checkedAt() {
        return reasked?.checkedAt ?? checkedAt;
      },
      recheck: () => {
        const at = Date.now();
        if (window) {
          // Given here, without Redis. Still nothing learned: nothing to ask. Learned since: the call is
          // one of the fleet's now, and asks for a token like any (held back: it goes later, not now).
          if (this.open(kind)) {
            checkedAt = at;
            return 0;
          }
          if (reasked) return reasked.recheck();
          return this.acquire(kind, { maxWaitMs: 0, urgent: true }).then((got) => {
            if (isHeldBack(got)) return Math.max(1, got.waitMs);
            reasked = got;
            return 0;
          });
        }
        // A permit a few ms old saw the latest pause already: no round trip.
        if (at - grantedAt < RECHECK_AFTER_MS) return 0;
        return this.guarded(() => this.redis.gatePaused(this.key(kind, 'pause'), this.key('any', 'pause'))).then((paused) => {
          checkedAt = at;
          return Number(paused ?? 0);
        });
      },
      done: (result: CallResult) => {
        if (done) return;
        done = true;
        window?.leave(result.sent && result.httpStatus !== 429);
        if (reasked) return reasked.done(result);
        if (result.sent && result.httpStatus !== 429) this.admitted[kind].add();
        // Most calls have nothing for Redis (no 429, no place in flight or token to give back): no report then.
        if (!(id !== null && this.givesBack(kind, result)) && !teaches(result)) return;
        const report = this.afterCall(kind, id, admittedAtRedis, result);
        if (window && teaches(result)) window.closeUntil(report);
        this.track(report);
      },
    };
  }

  private readonly reporting = new Set<Promise<void>>();

  /** A permit's report, run in the background (the call's answer does not wait for Redis). */
  private track(report: Promise<void>): void {
    this.reporting.add(report);
    void report.finally(() => this.reporting.delete(report));
  }

  /** Resolves once every permit's report given so far has reached Redis (or given up): for tests and shutdown. */
  async idle(): Promise<void> {
    while (this.reporting.size) await Promise.allSettled([...this.reporting]);
  }

  /** Whether a finished call, if Redis admitted it (its permit has an id), gives something back there: its place in flight, or its token (not sent, or refused). */
  private givesBack(kind: CallKind, result: CallResult): boolean {
    return this.tracksFlight(kind) || !result.sent || result.httpStatus === 429;
  }

  /** A finished call's report to Redis (its permit's `done` counted it already): what it gives back, and a 429 to learn from. */
  private async afterCall(kind: CallKind, id: string | null, admittedAtRedis: number, result: CallResult): Promise<void> {
    const { limits } = this.options;
    if (id !== null && this.givesBack(kind, result)) {
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
          0,
        ),
      );
    }
    if (teaches(result)) await this.learn(kind, retryAfterOf(result), admittedAtRedis, result.httpStatus!);
  }

  /**
   * The partner answered 429 (or 503 with Retry-After): the fleet learns from it (see LEARN in scripts.ts):
   * a pause until the Retry-After, logged where it starts and ends, and a rate it may not exceed.
   */
  private async learn(kind: CallKind, retryAfterMs: number, admittedAtRedis: number, httpStatus: number): Promise<void> {
    const answer = await this.guarded(() =>
      this.redis.gateLearn(
        this.key(kind, 'adapt'),
        this.key(kind, 'bucket'),
        this.key(kind, 'pause'),
        this.key(kind, 'r429'),
        this.options.limits[kind].perSecond,
        this.options.floorPerSecond,
        Math.round(retryAfterMs),
        admittedAtRedis,
        Math.floor(this.admitted[kind].lastSecond()),
        this.channel(),
        kind,
        LEARNED_TTL_MS,
        httpStatus === 429 ? 1 : 0,
        this.id,
      ),
    );
    if (!answer) return;
    this.heard(kind, LEARNED_TTL_MS, 'own');
    const [paused, untilMs, cut, rate] = [Number(answer[0]), Number(answer[1]), Number(answer[2]), Number(answer[3])];
    if (paused > 0) this.paused(kind, retryAfterMs, httpStatus, paused, new Date(untilMs));
    if (cut === 1 && rate > 0) {
      const how = retryAfterMs > 0 ? `answered ${httpStatus} with Retry-After` : `answered 429 without Retry-After`;
      this.options.log.warn({ partnerBackoff: { kind, ratePerSecond: rate } }, `partner ${how}: ${kind} calls slowed to ${rate.toFixed(1)}/s fleet-wide, recovering step by step`);
    }
  }

  private paused(kind: CallKind, ms: number, httpStatus: number, how: number, until: Date): void {
    this.options.log.warn(
      { partnerPause: { kind, until: until.toISOString(), retryAfterMs: ms, httpStatus } },
      how === 1 ? `partner asked for a pause: no ${kind} call from any worker until ${until.toISOString()}` : `partner pause of ${kind} calls lengthened to ${until.toISOString()}`,
    );
    clearTimeout(this.pauseTimers.get(kind));
    const timer = setTimeout(() => {
      this.pauseTimers.delete(kind);
      this.options.log.log({ partnerPause: { kind, ended: new Date().toISOString() } }, `partner pause of ${kind} calls over`);
    }, Math.max(0, until.getTime() - Date.now()));
    timer.unref();
    this.pauseTimers.set(kind, timer);
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
    clearInterval(this.learnedPoll);
    this.subscriber.disconnect();
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
