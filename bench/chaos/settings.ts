/**
 * Settings of the chaos run: read from the environment (CHAOS_*, plus the service timings), validated,
 * with every problem named in one error. `runChaos` takes the parsed object, so a test can build one
 * with `chaosSettings({ ...overrides })`.
 */
import { simLimitsSchema, type SimLimits } from '@cardpull/sim-contract';

export interface ChaosSettings {
  /** CHAOS_ORDERS: orders sent. */
  orders: number;
  /** CHAOS_RATE: orders sent per second. */
  rate: number;
  /** CHAOS_ASYNC_SHARE: fraction of the orders sent with mode async. */
  asyncShare: number;
  /** CHAOS_WORKERS: worker processes. */
  workers: number;
  /** CHAOS_KILL_EVERY_S: SIGKILL of a random worker about this often (0: never). */
  killEveryS: number;
  /** CHAOS_MAX_KILLS: at most this many kills (unset: no limit). */
  maxKills: number | null;
  /** CHAOS_FAULT_SHARE: share of each fault family (0: no partner faults). */
  faultShare: number;
  /** CHAOS_FLUSH: one FLUSHALL of the run's own Redis about a third of the way. */
  flush: boolean;
  /** CHAOS_POSTGRES_RESTART: one restart of the run's own Postgres about two thirds of the way. */
  postgresRestart: boolean;
  /**
   * CHAOS_PARTNER_LIMITS: the partner's rate limits for the whole run (the simulator's SIM_LIMITS), given to
   * cardpull's processes as PARTNER_LIMITS too (without retry_after_s); null (`off`): an unlimited partner.
   */
  partnerLimits: SimLimits | null;
  /**
   * CHAOS_HOSTILE_READINGS (default true): the partner's readings that tempt a service to declare a request ID
   * dead on anything but the partner's word about it (faults.ts: inventory_unlimited, read_lag after a 422,
   * other_request_id); false leaves them out (the other readings and faults stay).
   */
  hostileReadings: boolean;
  /** CHAOS_REDIS (or `npm run chaos -- --redis cluster`): `single` (one redis-server) or `cluster` (3 masters, 3 replicas). */
  redis: 'single' | 'cluster';
  /** CHAOS_KILL_MASTER: on a cluster, SIGKILL of the master holding the queues halfway (its replica takes over). */
  killMaster: boolean;
  /** CHAOS_QUIET_TIMEOUT_S: every order must be terminal this long after the faults stop. */
  quietTimeoutS: number;
  /** CHAOS_SKIP_BUILD: use dist/ as it is. */
  skipBuild: boolean;
  /** CHAOS_POSTGRES: `dedicated` (own cluster via initdb, the default) or `shared` (a database on CHAOS_SHARED_DATABASE_URL). */
  postgres: 'dedicated' | 'shared';
  /** CHAOS_SHARED_DATABASE_URL: the shared server, used when no dedicated cluster can be made (database part ignored). */
  sharedDatabaseUrl: string;
  /** CHAOS_REPORT_DIR: where logs and report.json go (default reports/chaos-<timestamp>). */
  reportDir: string | null;
  /** Service and simulator timings passed to the processes (compressed defaults, each overridable by its own env var). */
  timings: Record<string, string>;
}

/** The spec's timings compressed so a run takes minutes; any of them can be overridden by its env var. */
export const TIMING_DEFAULTS: Record<string, string> = {
  PARTNER_TIMEOUT_MS: '2000',
  SYNC_RETRY_FIRST_DELAY_MS: '3000',
  SYNC_RETRY_INTERVAL_MS: '1000',
  ASYNC_POLL_FIRST_DELAY_MS: '500',
  ASYNC_POLL_INTERVAL_MIN_MS: '500',
  ASYNC_POLL_INTERVAL_MAX_MS: '1000',
  UNKNOWN_OUTCOME_WINDOW_MS: '600000',
  PULL_REQUEST_SETTLE_MS: '10000',
  AWAIT_RECHECK_INTERVAL_MS: '1000',
  WORKER_LOCK_MS: '5000',
  WORKER_STALLED_INTERVAL_MS: '2000',
  SWEEP_INTERVAL_MS: '2000',
  SIM_ASYNC_DELAY_MS: '1000',
  WORKER_CONCURRENCY: '32',
};

/**
 * The default partner of the run takes fewer creations a second (40) than the orders arrive (50/s, plus the
 * re-sends the faults cause): the fleet's shared limit holds creations back all through the fault phase,
 * across the kills, the FLUSHALL (which empties the limits' state in Redis) and the Postgres restart
 * (issue 12). `CHAOS_PARTNER_LIMITS=off` for an unlimited partner.
 */
export const PARTNER_LIMITS_DEFAULT = '{"create":{"per_second":40}}';

/** PARTNER_LIMITS for cardpull: the partner's limits without what only the partner says (retry_after_s). */
export function servicePartnerLimits(limits: SimLimits): string {
  const out: Record<string, { per_second?: number; in_flight?: number }> = {};
  for (const [kind, limit] of Object.entries(limits)) {
    if (!limit) continue;
    out[kind] = { ...(limit.per_second !== undefined ? { per_second: limit.per_second } : {}), ...(limit.in_flight !== undefined ? { in_flight: limit.in_flight } : {}) };
  }
  return JSON.stringify(out);
}

export class ChaosSettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid chaos settings:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

type Env = Record<string, string | undefined>;

/** Parses the environment; throws ChaosSettingsError naming every bad setting. */
export function settingsFromEnv(env: Env = process.env): ChaosSettings {
  const problems: string[] = [];
  const raw = (name: string) => {
    const v = env[name]?.trim();
    return v === undefined || v === '' ? undefined : v;
  };
  const num = (name: string, def: number, min: number, max: number, integer = true): number => {
    const v = raw(name);
    if (v === undefined) return def;
    const n = Number(v);
    if (!Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < min || n > max) {
      problems.push(`${name}=${v}: must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}`);
      return def;
    }
    return n;
  };
  const bool = (name: string, def: boolean): boolean => {
    const v = raw(name)?.toLowerCase();
    if (v === undefined) return def;
    if (['true', '1', 'yes', 'on'].includes(v)) return true;
    if (['false', '0', 'no', 'off'].includes(v)) return false;
    problems.push(`${name}=${v}: must be true or false`);
    return def;
  };
  const postgres = raw('CHAOS_POSTGRES') ?? 'dedicated';
  if (postgres !== 'dedicated' && postgres !== 'shared') problems.push(`CHAOS_POSTGRES=${postgres}: must be dedicated or shared`);
  const sharedDatabaseUrl = raw('CHAOS_SHARED_DATABASE_URL') ?? env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  if (!/^postgres(ql)?:\/\//.test(sharedDatabaseUrl)) problems.push(`CHAOS_SHARED_DATABASE_URL=${sharedDatabaseUrl}: must be a postgresql:// URL`);

  const timings: Record<string, string> = {};
  for (const [name, def] of Object.entries(TIMING_DEFAULTS)) {
    const v = raw(name) ?? def;
    if (!/^\d+$/.test(v)) problems.push(`${name}=${v}: must be a whole number of ${name.endsWith('_MS') ? 'milliseconds' : 'units'}`);
    timings[name] = v;
  }
  const limitsRaw = raw('CHAOS_PARTNER_LIMITS') ?? PARTNER_LIMITS_DEFAULT;
  let partnerLimits: SimLimits | null = null;
  if (!['off', 'none', 'false', '0'].includes(limitsRaw.toLowerCase())) {
    let json: unknown;
    try {
      json = JSON.parse(limitsRaw);
    } catch {
      problems.push(`CHAOS_PARTNER_LIMITS=${limitsRaw}: not JSON (e.g. ${PARTNER_LIMITS_DEFAULT}, or off)`);
    }
    if (json !== undefined) {
      const parsed = simLimitsSchema.safeParse(json);
      if (parsed.success) partnerLimits = parsed.data;
      else problems.push(`CHAOS_PARTNER_LIMITS=${limitsRaw}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
    }
  }
  const redis = raw('CHAOS_REDIS') ?? 'single';
  if (redis !== 'single' && redis !== 'cluster') problems.push(`CHAOS_REDIS=${redis}: must be single or cluster`);
  const maxKillsRaw = raw('CHAOS_MAX_KILLS');
  const settings: ChaosSettings = {
    orders: num('CHAOS_ORDERS', 2000, 1, 1_000_000),
    rate: num('CHAOS_RATE', 50, 0.1, 10_000, false),
    asyncShare: num('CHAOS_ASYNC_SHARE', 0.5, 0, 1, false),
    workers: num('CHAOS_WORKERS', 3, 1, 32),
    killEveryS: num('CHAOS_KILL_EVERY_S', 20, 0, 3600, false),
    maxKills: maxKillsRaw === undefined ? null : num('CHAOS_MAX_KILLS', 0, 0, 10_000),
    faultShare: num('CHAOS_FAULT_SHARE', 0.1, 0, 1, false),
    flush: bool('CHAOS_FLUSH', true),
    postgresRestart: bool('CHAOS_POSTGRES_RESTART', true),
    partnerLimits,
    hostileReadings: bool('CHAOS_HOSTILE_READINGS', true),
    redis: redis === 'cluster' ? 'cluster' : 'single',
    killMaster: bool('CHAOS_KILL_MASTER', true),
    quietTimeoutS: num('CHAOS_QUIET_TIMEOUT_S', 300, 1, 24 * 3600, false),
    skipBuild: bool('CHAOS_SKIP_BUILD', false),
    postgres: postgres === 'shared' ? 'shared' : 'dedicated',
    sharedDatabaseUrl,
    reportDir: raw('CHAOS_REPORT_DIR') ?? null,
    timings,
  };
  problems.push(...checkSettings(settings));
  if (problems.length) throw new ChaosSettingsError(problems);
  return settings;
}

/** Cross-field rules (also applied to settings built in code). */
export function checkSettings(s: ChaosSettings): string[] {
  const problems: string[] = [];
  const t = (name: string) => Number(s.timings[name] ?? TIMING_DEFAULTS[name]);
  if (t('ASYNC_POLL_INTERVAL_MIN_MS') > t('ASYNC_POLL_INTERVAL_MAX_MS')) problems.push('ASYNC_POLL_INTERVAL_MIN_MS must not exceed ASYNC_POLL_INTERVAL_MAX_MS');
  if (t('PARTNER_TIMEOUT_MS') < 100) problems.push('PARTNER_TIMEOUT_MS must be at least 100');
  // The run's read copies lag 2 x PARTNER_TIMEOUT_MS (faults.ts): 404s spread over less than that prove nothing.
  if (t('PULL_REQUEST_SETTLE_MS') <= 2 * t('PARTNER_TIMEOUT_MS')) problems.push(`PULL_REQUEST_SETTLE_MS must exceed the run's read lag (2 x PARTNER_TIMEOUT_MS = ${2 * t('PARTNER_TIMEOUT_MS')} ms)`);
  if (s.killEveryS > 0 && s.killEveryS < 2) problems.push(`CHAOS_KILL_EVERY_S=${s.killEveryS}: at least 2 s (a killed worker is restarted 1-2 s later), or 0 for no kills`);
  return problems;
}

/** The defaults with some fields replaced (the test's small run). */
export function chaosSettings(overrides: Partial<ChaosSettings> = {}, env: Env = {}): ChaosSettings {
  const s = { ...settingsFromEnv(env), ...overrides };
  s.timings = { ...settingsFromEnv(env).timings, ...overrides.timings };
  const problems = checkSettings(s);
  if (problems.length) throw new ChaosSettingsError(problems);
  return s;
}

/** One line per setting, for the start of the run. */
export function describeSettings(s: ChaosSettings): string[] {
  return [
    `orders ${s.orders} at ${s.rate}/s, async share ${s.asyncShare}, ${s.workers} workers`,
    `kills every ~${s.killEveryS || '-'} s${s.maxKills !== null ? ` (at most ${s.maxKills})` : ''}, fault share ${s.faultShare} per family, ` +
      `FLUSHALL ${s.flush ? 'yes' : 'no'}, Postgres restart ${s.postgresRestart ? 'yes' : 'no'} (${s.postgres})`,
    `Redis ${s.redis === 'cluster' ? `cluster (3 masters, 3 replicas), master killed halfway ${s.killMaster ? 'yes' : 'no'}` : 'single'}`,
    `partner limits ${s.partnerLimits ? `${JSON.stringify(s.partnerLimits)} (the simulator's SIM_LIMITS; cardpull's PARTNER_LIMITS ${servicePartnerLimits(s.partnerLimits)})` : 'none'}`,
    `hostile readings (inventory_unlimited, read_lag after a 422, other_request_id) ${s.hostileReadings ? 'on' : 'off'}`,
    `quiet timeout ${s.quietTimeoutS} s, skip build ${s.skipBuild}`,
    `timings ${Object.entries(s.timings).map(([k, v]) => `${k}=${v}`).join(' ')}`,
  ];
}
