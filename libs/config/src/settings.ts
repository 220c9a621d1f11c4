import { z } from 'zod';
import { parseSettings } from './config-error';
import { amountSetting, boolSetting, isObject, jsonSetting, enumSetting, hexKeySetting, intSetting, optionalUrlSetting, requiredHexKey, requiredText, textSetting, urlSetting } from './parsers';
import { parseApiKeys, type ApiClient } from './api-keys';
import { parseEncryptionKeys, type EncryptionKey } from './encryption-keys';
import { parseAdminUsers } from './admin-users';
import { parseCallbackHosts, parseCallbackSecrets, parseCallbackUrls, parseClientWeights, parseSpendLimits } from './callbacks';
import { callbackUrlProblem } from './callback-target';
import { readFileSync } from 'node:fs';
import { LOCAL_DEFAULTS, REQUIRED_OUTSIDE_LOCAL, withKeyFile, withLocalCallbacks, withProfileDefaults } from './defaults';
import { checkEnvironment } from './environment';

export { LOCAL_CALLBACKS, LOCAL_DEFAULTS } from './defaults';

const timing = (def: number, min = 0) => intSetting(def, min, 24 * 3600 * 1000);

const serviceObject = z.object({
    LOG_LEVEL: enumSetting(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
    /**
     * OpenTelemetry traces (off unless set): the OTLP/HTTP collector's base URL (spans go to <url>/v1/traces),
     * e.g. http://127.0.0.1:4318. One trace per order, from intake through its jobs to every partner call.
     */
    OTEL_EXPORTER_OTLP_ENDPOINT: optionalUrlSetting(['http:', 'https:']),
    DATABASE_URL: urlSetting('postgresql://postgres@127.0.0.1:5432/cardpull', ['postgresql:', 'postgres:']),
    DATABASE_POOL_SIZE: intSetting(10, 1, 500),
    /**
     * Named prepared statements for the hot statements (libs/orders prepared.ts). Set false behind a
     * transaction pooler that does not keep them across transactions (PgBouncer before 1.21 in transaction
     * mode): every statement is then parsed and planned each time (docs/SCALING.md says what that costs).
     */
    DATABASE_PREPARED_STATEMENTS: boolSetting(true),
    REDIS_URL: urlSetting('redis://127.0.0.1:6379/0', ['redis:', 'rediss:']),
    /**
     * A Redis Cluster: its seed nodes, `host:port,host:port,...` (any of its nodes; the rest are found).
     * Set, every connection is an ioredis Cluster, REDIS_URL gives only the credentials and TLS (rediss:),
     * and the queues' prefix is a hash tag, {REDIS_PREFIX}, so each queue's keys live in one slot.
     */
    REDIS_CLUSTER_NODES: z
      .string()
      .optional()
      .transform((v, ctx) => {
        const nodes = (v ?? '').split(',').map((n) => n.trim()).filter(Boolean);
        return nodes.flatMap((n) => {
          const m = /^([A-Za-z0-9.-]+|\[[0-9a-fA-F:]+\]):(\d{1,5})$/.exec(n);
          if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) {
            ctx.addIssue({ code: 'custom', message: `"${n}": expected host:port` });
            return [];
          }
          return [{ host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]) }];
        });
      }),
    /** Key prefix of every queue in Redis, so several deployments (or test suites) can share one Redis. */
    REDIS_PREFIX: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1-64 letters, digits, "_", "." or "-"')
      .prefault('cardpull'),
    PORT: intSetting(3000, 0, 65535),
    HOST: textSetting('127.0.0.1'),
    WORKER_PORT: intSetting(3001, 0, 65535),
    /** `local`: the public development values (LOCAL_DEFAULTS) fill what is unset; anything else (the default) refuses them. */
    CARDPULL_PROFILE: enumSetting(['local', 'deployed'], 'deployed'),
    API_KEYS: requiredText(REQUIRED_OUTSIDE_LOCAL, 100_000).transform((v, ctx) => parseApiKeys(v, ctx)),
    PARTNER_ENV: enumSetting(['staging', 'production'], 'staging'),
    /** The partner's base URL; when unset, the URL of PARTNER_ENV's environment below (staging: the local simulator). */
    PARTNER_BASE_URL: optionalUrlSetting(['http:', 'https:']),
    PARTNER_STAGING_BASE_URL: urlSetting('http://127.0.0.1:4010', ['http:', 'https:']),
    PARTNER_PRODUCTION_BASE_URL: optionalUrlSetting(['http:', 'https:']),
    PARTNER_API_KEY: requiredText(REQUIRED_OUTSIDE_LOCAL),
    PARTNER_IDENTIFIER: requiredText(REQUIRED_OUTSIDE_LOCAL),
    PARTNER_SHARED_KEY: requiredHexKey(REQUIRED_OUTSIDE_LOCAL),
    /** `example`: verb+url+payload+identifier+timestamp (the spec's worked example); `formula`: without the identifier. */
    PARTNER_SIGNATURE_FORM: enumSetting(['example', 'formula'], 'example'),
    /** The unit of the catalog's `discount` (not shown by the spec): `percent` (3.5 is 3.5 % off) or `fraction` (0.035). */
    PARTNER_DISCOUNT_UNIT: enumSetting(['percent', 'fraction'], 'percent'),
    /** The unit of `balance.amount` (not shown): `major` (a decimal in currency units, 25.00) or `minor` (an integer, 2500). */
    PARTNER_BALANCE_UNIT: enumSetting(['major', 'minor'], 'major'),
    /** The partner account's currency (ISO 4217; the spec shows none): the ledger's entries are in its minor unit. */
    PARTNER_CURRENCY: z
      .string()
      .trim()
      .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code of three capital letters')
      .prefault('EUR'),
    /** The ledger's name for this partner account (its entries are per partner account). */
    PARTNER_ACCOUNT: textSetting('partner', 100),
    /**
     * The partner profile `npm run probe` wrote (JSON, committed by the operator): the worker refuses to start
     * when a setting contradicts it; no file there, nothing is checked.
     */
    PARTNER_PROFILE: textSetting('partner-profile.json', 4096),
    /** A file holding CARD_ENCRYPTION_KEYS (one entry per line): a secret manager's mount, or the data keys a KMS unwrapped at start. */
    CARD_ENCRYPTION_KEYS_FILE: z.string().optional(),
    CARD_ENCRYPTION_KEYS: requiredText(REQUIRED_OUTSIDE_LOCAL, 100_000).transform((v, ctx) =>
      parseEncryptionKeys(v, ctx),
    ),
    PARTNER_TIMEOUT_MS: timing(10_000, 100),
    /**
     * Per kind of partner call, the whole-call deadline; unset, PARTNER_TIMEOUT_MS (the spec's 10 s). Sync
     * pulls (POST /cards), async creations (POST /pull_requests), polls (GET /pull_requests/:id) and reads
     * (catalog, inventory, balance, GET /cards/:id). A pull call's lease covers the longest of the first three.
     */
    PARTNER_TIMEOUT_SYNC_MS: intSetting(0, 0, 3_600_000),
    PARTNER_TIMEOUT_CREATE_MS: intSetting(0, 0, 3_600_000),
    PARTNER_TIMEOUT_POLL_MS: intSetting(0, 0, 3_600_000),
    PARTNER_TIMEOUT_READ_MS: intSetting(0, 0, 3_600_000),
    /**
     * Fleet-wide limits on calls to the partner, shared by every process through Redis: a JSON object with,
     * per kind (create, poll, read, any), `per_second` (a token bucket holding half a second) and `in_flight`,
     * e.g. {"any":{"per_second":50},"create":{"in_flight":8}} (the simulator's SIM_LIMITS shape). Unset: no
     * fleet-wide limit (each worker's WORKER_CONCURRENCY bounds its own calls, as before).
     */
    PARTNER_LIMITS: jsonSetting({} as Record<string, unknown>, (v) => isObject(v), 'must be a JSON object of limits per kind (create, poll, read, any), e.g. {"any":{"per_second":50}}'),
    /** Weights of the calling clients' shares of the partner under a limit: client=<weight>,... (unlisted: 1). */
    CLIENT_WEIGHTS: z.string().optional().transform((v, ctx) => parseClientWeights(v, ctx)),
    /** A poll or re-check yields to new orders' pull creations (in the queue, PollAging; at the gate, RedisCallGate) for at most this long, then goes first. */
    PARTNER_POLL_MAX_YIELD_MS: timing(5_000),
    /** Without Retry-After, a 429 halves the kind's rate, never below this many calls per second; it then recovers additively. */
    PARTNER_BACKOFF_FLOOR_PER_SECOND: intSetting(1, 1, 100_000),
    /** Same-ID re-send of a sync pull after a timeout or an interrupted call (the partner may still be working): the spec's minute. */
    SYNC_RETRY_FIRST_DELAY_MS: timing(60_000),
    /** Same-ID re-send of a sync pull after "come back later", a 5xx, a reset, a 429 without Retry-After, an unreadable answer. */
    SYNC_RETRY_INTERVAL_MS: timing(10_000, 1),
    /**
     * The shortest wait before a request ID is asked again: after a call that never reached the partner
     * (connection refused, DNS failure), doubling from it up to SYNC_RETRY_INTERVAL_MS; and the floor under a
     * Retry-After of 0. Never more than SYNC_RETRY_INTERVAL_MS.
     */
    RETRY_MIN_DELAY_MS: timing(1_000, 1),
    ASYNC_POLL_FIRST_DELAY_MS: timing(2_000),
    ASYNC_POLL_INTERVAL_MIN_MS: timing(5_000, 1),
    ASYNC_POLL_INTERVAL_MAX_MS: timing(10_000, 1),
    /**
     * How long a request ID of unknown outcome is asked on the spec's cadence (sync re-sends, async polls) before
     * its order is `needs_attention` (outcome_unknown). The asking goes on after it, on the same ID, ever slower.
     */
    UNKNOWN_OUTCOME_WINDOW_MS: timing(30 * 60_000, 1),
    /**
     * Past UNKNOWN_OUTCOME_WINDOW_MS, the same request ID is asked again after as long as it has been past the
     * window (each wait doubles), at most this long apart: until the partner answers, or an operator declares it dead.
     */
    UNKNOWN_OUTCOME_MAX_INTERVAL_MS: timing(3_600_000, 1),
    /**
     * After a business error answered to the re-creation of a pull request the partner never showed, 404s on
     * GET /pull_requests/:id spread over this long send the creation again, with the SAME request ID (a 404 is
     * never proof of anything: a read copy may lag; the same ID cannot issue a second card).
     */
    PULL_REQUEST_SETTLE_MS: timing(3 * 60_000, 1),
    SWEEP_INTERVAL_MS: timing(5_000, 100),
    /** Terminal orders untouched this many days move to orders_archive (0: never; the default keeps every order). */
    RETENTION_DAYS: intSetting(0, 0, 36_500),
    /** Card secrets of archived orders are destroyed this many days after the order ended, unless disputed (0: never). */
    RETENTION_SECRETS_DAYS: intSetting(0, 0, 36_500),
    /** The retention task's period; each run archives in batches of RETENTION_BATCH for at most a minute. */
    RETENTION_INTERVAL_MS: timing(3_600_000, 1_000),
    RETENTION_BATCH: intSetting(500, 1, 10_000),
    /** Orders a bulk action (operations page) re-drives or marks failed per second, fleet-wide. */
    BULK_ACTIONS_PER_SECOND: intSetting(10, 1, 1_000),
    /**
     * How long a run of a periodic task (sweeper, reconciler, ...) may last before another worker may run
     * it again: the time a worker killed mid-run holds the task (periodic_task_runs).
     */
    PERIODIC_TASK_LEASE_MS: timing(60_000, 100),
    /** Maximum number of async attempts (request IDs) of one order that may end in status `error`. */
    ASYNC_MAX_ATTEMPTS: intSetting(3, 1, 100),
    /** How often an order waiting for funds or stock (awaiting_funds / awaiting_stock) checks the partner again. */
    AWAIT_RECHECK_INTERVAL_MS: timing(60_000, 100),
    /** How long an order may wait for funds or stock before it fails with the partner's reason. */
    AWAIT_DEADLINE_MS: timing(24 * 3600_000, 1000),
    /** While the partner refuses our credentials: how often the circuit probe calls GET /balance. */
    CIRCUIT_PROBE_INTERVAL_MS: timing(10_000, 100),
    /** While the circuit is open, steps that met it are retried after this delay (the queue is paused meanwhile). */
    CIRCUIT_RETRY_MS: timing(5_000, 100),
    WORKER_CONCURRENCY: intSetting(32, 1, 1000),
    /**
     * BullMQ job lock: a live worker renews it every half period (or sooner), so it bounds only how long a
     * killed worker's job stays stuck (lock + stalled check interval, 3 s by default) before another worker
     * takes it; with the order's lease (ORDER_LEASE_MS) that keeps a killed worker's orders within 5 s of resuming.
     */
    WORKER_LOCK_MS: timing(2_000, 500),
    WORKER_STALLED_INTERVAL_MS: timing(1_000, 200),
    /**
     * The lease of a partner call (sync pull, pull request creation) on its order: one sender per request ID.
     * Renewed every third of it while the call is in flight; a caller that could not renew it aborts its call
     * before it runs out, so it never expires while its holder may still be sending. A killed worker's orders
     * are taken over at most this long after its last renewal (docs/ARCHITECTURE.md, "Leases").
     */
    ORDER_LEASE_MS: timing(3_000, 600),
    CATALOG_REFRESH_INTERVAL_MS: timing(5 * 60_000, 1000),
    /**
     * The catalog change feed records a gift card's `discount` change only when it moved this much from the
     * discount last announced, in the discount's own unit (PARTNER_DISCOUNT_UNIT); 0: any change. Unset: half a
     * percentage point (0.5 in percent, 0.005 in fraction): less is noise to a checkout, not news.
     */
    CATALOG_DISCOUNT_CHANGE_THRESHOLD: z
      .string()
      .trim()
      .optional()
      .transform((v, ctx) => {
        if (v === undefined || v === '') return null;
        if (!/^\d+(\.\d+)?$/.test(v)) {
          ctx.addIssue({ code: 'custom', message: 'must be a non-negative number in the unit of PARTNER_DISCOUNT_UNIT, e.g. 0.5' });
          return null;
        }
        return Number(v);
      }),
    /** Freshness of the cached partner balance and inventories (API views, health probe, waiting checks). */
    PARTNER_CACHE_TTL_MS: timing(30_000, 0),
    /** Below this balance (currency units) a warning is logged, shown on the operations page and exported. */
    LOW_BALANCE_THRESHOLD: amountSetting('100'),
    BALANCE_WATCH_INTERVAL_MS: timing(60_000, 1000),
    /** The balance drift check (the partner's balance against the ledger), once per interval across the fleet. */
    BALANCE_DRIFT_INTERVAL_MS: timing(60_000, 200),
    /** Runway: the spend rate is read over this window (smoothed across the drift samples). */
    RUNWAY_WINDOW_MS: timing(3_600_000, 1000),
    /** Runway below this many hours: `approaching` (a ticket); below RUNWAY_BELOW_HOURS: `below` (a page). Each is left a quarter above. */
    RUNWAY_APPROACHING_HOURS: intSetting(24, 1, 24 * 365),
    RUNWAY_BELOW_HOURS: intSetting(6, 1, 24 * 365),
    /** Re-check of attempts left unknown (needs_attention orders): same request ID again, or GET the pull request. */
    RECONCILE_INTERVAL_MS: timing(15 * 60_000, 1000),
    /**
     * An async request ID an operator declared dead is still polled for a card by the reconciler this long (a
     * GET cannot issue one; a card that arrives is stored and flagged). Retention keeps its order meanwhile.
     * Also the re-check of IDs that versions before 2026-11-25 declared dead by inference.
     */
    RECONCILE_DEAD_RECHECK_MS: intSetting(7 * 24 * 3600_000, 0, 365 * 24 * 3600_000),
    /** Operations page and job dashboard users: name:password or name:scrypt$salt$hash, optionally :viewer. */
    ADMIN_USERS: requiredText(REQUIRED_OUTSIDE_LOCAL, 10_000).transform((v, ctx) => parseAdminUsers(v, ctx)),
    /** Everyone is a viewer: no re-drive, no mark-failed, bull-board read-only. */
    ADMIN_READ_ONLY: boolSetting(false),
    /** Signs admin session cookies; when unset, a random one per process (sessions end with the process). */
    ADMIN_SESSION_SECRET: z.string().trim().min(16, 'must have at least 16 characters').optional(),
    ADMIN_SESSION_TTL_MS: timing(8 * 3600_000, 60_000),
    /** An admin session with no request for this long ends (each page renews it). */
    ADMIN_SESSION_IDLE_MS: timing(30 * 60_000, 10_000),
    /**
     * The reverse proxies (addresses or CIDRs, comma-separated) whose X-Forwarded-For and X-Forwarded-Proto
     * are believed: the client address of the throttles, and the Secure admin cookie behind a TLS proxy.
     */
    TRUSTED_PROXIES: z.string().trim().optional().transform((v) => (v ? v.split(',').map((p) => p.trim()).filter(Boolean) : [])),
    /**
     * Default callback URL per client: client=https://... (an order may give its own callback_url). Under the
     * local profile the local client's defaults to the simulator's receiver (LOCAL_CALLBACKS).
     */
    CALLBACK_URLS: z.string().optional().transform((v, ctx) => parseCallbackUrls(v, ctx)),
    /**
     * Clients that subscribe to `balance.low` (comma-separated): a signed callback to each one's CALLBACK_URLS
     * when the runway becomes `approaching` or `below`. Each needs a CALLBACK_URLS and a CALLBACK_SECRETS entry.
     */
    BALANCE_LOW_CALLBACK_CLIENTS: z
      .string()
      .optional()
      .transform((v) => (v ? v.split(',').map((c) => c.trim()).filter(Boolean) : [])),
    /**
     * Per-client secret signing its callbacks: client=secret, as CALLBACK_URLS (the older client:secret is still
     * read). A client needs one to receive callbacks. Under the local profile the local client has a public one.
     */
    CALLBACK_SECRETS: z.string().optional().transform((v, ctx) => parseCallbackSecrets(v, ctx)),
    CALLBACK_TIMEOUT_MS: timing(5_000, 100),
    CALLBACK_MAX_ATTEMPTS: intSetting(10, 1, 100),
    /** First retry delay of a failed callback; doubles each time (capped at one hour). */
    CALLBACK_BACKOFF_MS: timing(5_000, 10),
    /**
     * Local runs only (the local profile turns it on when unset): callbacks may use http: and reach loopback
     * and private addresses. Off, a callback URL must be https: and may never reach a loopback, private or
     * link-local address (docs/SECURITY.md).
     */
    CALLBACK_ALLOW_LOCAL: boolSetting(false),
    /** Per-client allow-list of callback hosts: client=host|*.domain,... (a client without an entry: any public host). */
    CALLBACK_ALLOWED_HOSTS: z.string().optional().transform((v, ctx) => parseCallbackHosts(v, ctx)),
    /** Per-client rate limit of the /v1 API: at most this many requests per RATE_LIMIT_WINDOW_MS across the fleet (429 beyond). */
    RATE_LIMIT_PER_CLIENT: intSetting(6_000, 1, 10_000_000),
    RATE_LIMIT_WINDOW_MS: timing(60_000, 100),
    /**
     * Unknown API keys allowed from one address in any minute, across the fleet and on every route that takes a
     * key; beyond, that address gets 429 for any key until fewer failures than that are left in the last minute.
     */
    AUTH_FAILURES_PER_MINUTE: intSetting(30, 1, 10_000_000),
    /** `?wait=` requests one client may have under way across the fleet; beyond, the order is answered at once. */
    LONG_POLLS_PER_CLIENT: intSetting(50, 0, 100_000),
    /** Per-client spend guard: client=<largest order>/<per day>, minor units (422 spend_limit_exceeded beyond). */
    SPEND_LIMITS: z.string().optional().transform((v, ctx) => parseSpendLimits(v, ctx)),
  });

/** Every service setting's name (documentation checks, the operations page). */
export const SERVICE_SETTING_NAMES = Object.keys(serviceObject.shape);

export const serviceSchema = serviceObject
  .transform((s) => {
    const partner = s.PARTNER_BASE_URL ?? (s.PARTNER_ENV === 'production' ? (s.PARTNER_PRODUCTION_BASE_URL ?? '') : s.PARTNER_STAGING_BASE_URL);
    // Unset, the threshold is half a percentage point in the configured unit.
    const discountThreshold = s.CATALOG_DISCOUNT_CHANGE_THRESHOLD ?? (s.PARTNER_DISCOUNT_UNIT === 'percent' ? 0.5 : 0.005);
    return { ...s, PARTNER_BASE_URL: partner, CATALOG_DISCOUNT_CHANGE_THRESHOLD: discountThreshold, ...withLocalCallbacks(s, partner) };
  })
  .superRefine((s, ctx) => {
    if (!s.PARTNER_BASE_URL) {
      ctx.addIssue({ code: 'custom', path: ['PARTNER_BASE_URL'], message: 'is required with PARTNER_ENV=production (or set PARTNER_PRODUCTION_BASE_URL)' });
      return;
    }
    checkEnvironment(s, ctx);
    for (const [client, url] of s.CALLBACK_URLS) {
      const problem = callbackUrlProblem(url, client, { allowLocal: s.CALLBACK_ALLOW_LOCAL, allowedHosts: s.CALLBACK_ALLOWED_HOSTS });
      if (problem) ctx.addIssue({ code: 'custom', path: ['CALLBACK_URLS'], message: `client "${client}": ${url} ${problem}` });
      if (!s.CALLBACK_SECRETS.has(client)) {
        ctx.addIssue({ code: 'custom', path: ['CALLBACK_SECRETS'], message: `client "${client}" has a callback URL (${url}) but no secret to sign its callbacks` });
      }
    }
    if (s.ASYNC_POLL_INTERVAL_MIN_MS > s.ASYNC_POLL_INTERVAL_MAX_MS) {
      ctx.addIssue({
        code: 'custom',
        path: ['ASYNC_POLL_INTERVAL_MIN_MS'],
        message: `must not exceed ASYNC_POLL_INTERVAL_MAX_MS (${s.ASYNC_POLL_INTERVAL_MAX_MS})`,
      });
    }
    for (const client of s.BALANCE_LOW_CALLBACK_CLIENTS) {
      if (!s.CALLBACK_URLS.has(client)) ctx.addIssue({ code: 'custom', path: ['BALANCE_LOW_CALLBACK_CLIENTS'], message: `client "${client}" has no CALLBACK_URLS entry to receive balance.low` });
      else if (!s.CALLBACK_SECRETS.has(client)) ctx.addIssue({ code: 'custom', path: ['BALANCE_LOW_CALLBACK_CLIENTS'], message: `client "${client}" has no CALLBACK_SECRETS entry to sign balance.low` });
    }
    if (s.CATALOG_DISCOUNT_CHANGE_THRESHOLD > (s.PARTNER_DISCOUNT_UNIT === 'percent' ? 100 : 1)) {
      ctx.addIssue({ code: 'custom', path: ['CATALOG_DISCOUNT_CHANGE_THRESHOLD'], message: `must be at most a whole discount in the unit of PARTNER_DISCOUNT_UNIT (${s.PARTNER_DISCOUNT_UNIT})` });
    }
    if (s.RUNWAY_BELOW_HOURS >= s.RUNWAY_APPROACHING_HOURS) {
      ctx.addIssue({ code: 'custom', path: ['RUNWAY_BELOW_HOURS'], message: `must be below RUNWAY_APPROACHING_HOURS (${s.RUNWAY_APPROACHING_HOURS})` });
    }
  });

export type ServiceConfig = z.output<typeof serviceSchema>;
export type { ApiClient, EncryptionKey };

export const simSchema = z.object({
  LOG_LEVEL: enumSetting(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
  SIM_HOST: textSetting('127.0.0.1'),
  SIM_PORT: intSetting(4010, 0, 65535),
  SIM_API_KEY: textSetting(LOCAL_DEFAULTS.PARTNER_API_KEY),
  SIM_IDENTIFIER: textSetting(LOCAL_DEFAULTS.PARTNER_IDENTIFIER),
  SIM_SHARED_KEY: hexKeySetting(LOCAL_DEFAULTS.PARTNER_SHARED_KEY),
  /** `staging` adds a brand whose pulls always fail, as the spec warns staging may do. */
  SIM_MODE: enumSetting(['staging', 'production'], 'staging'),
  /** Enables the fault-injection and ledger API under /_sim. Never enable it where strangers can reach it. */
  SIM_CONTROL: boolSetting(false),
  /** Accepted clock difference between the Timestamp of a request and the simulator's clock. */
  SIM_TIMESTAMP_WINDOW_S: intSetting(300, 1, 86_400),
  /**
   * The simulator's clock, in seconds from the machine's (negative: behind): a partner whose clock is off
   * from ours. Used for the Timestamp check and sent in the Date header of every answer. PUT /_sim/clock
   * changes it at run time.
   */
  SIM_CLOCK_OFFSET_S: intSetting(0, -86_400, 86_400),
  /**
   * The 401 code answered to a Timestamp outside SIM_TIMESTAMP_WINDOW_S: `unauthorized`, or
   * `invalid_signature` (a partner that does not say the signature failed on its time).
   */
  SIM_STALE_TIMESTAMP_CODE: enumSetting(['unauthorized', 'invalid_signature'], 'unauthorized'),
  /** How long a background (async) pull takes: `waiting` for the first half, `processing` for the second. */
  SIM_ASYNC_DELAY_MS: intSetting(1_000, 0, 3_600_000),
  /** How long a synchronous pull takes before the card is issued. */
  SIM_SYNC_DELAY_MS: intSetting(0, 0, 3_600_000),
  /** Starting balance, in currency units (the Balance resource's `amount`). */
  SIM_INITIAL_BALANCE: amountSetting('1000000.00'),
  /**
   * The partner's rate limits, enforced from the start and again after every POST /_sim/reset: a JSON object
   * as PUT /_sim/limits takes it, e.g. {"create":{"per_second":5},"any":{"in_flight":10}} (libs/sim-contract,
   * limits.ts). Checked by the simulator when it starts.
   */
  SIM_LIMITS: jsonSetting({} as Record<string, unknown>, (v) => isObject(v), 'must be a JSON object of limits per kind (create, poll, read, any)'),
  /**
   * Faults (and readings of the spec) installed at start-up and again after every POST /_sim/reset: a JSON
   * array of fault specs as POST /_sim/faults takes them (apps/partner-sim/README.md). Each one is checked
   * by the simulator when it starts.
   */
  SIM_FAULTS: jsonSetting([] as unknown[], (v) => Array.isArray(v) && v.every(isObject), 'must be a JSON array of fault specs, e.g. [{"endpoint":"cards","mode":"business_first"}]'),
  /** Base URL the partner's clients use to reach the simulator, if it differs from the address it listens on. */
  SIM_PUBLIC_BASE_URL: z
    .string()
    .trim()
    .refine((v) => /^https?:\/\/[^/]+\/?$/.test(v), 'must be a URL such as https://partner.example.com (no path)')
    .optional(),
});

export type SimConfig = z.output<typeof simSchema>;
export const SIM_SETTING_NAMES = Object.keys(simSchema.shape);

export const loadServiceConfig = (env: Record<string, string | undefined> = process.env): ServiceConfig =>
  parseSettings(serviceSchema, withProfileDefaults(withKeyFile(env, (path) => readFileSync(path, 'utf8'))));

export const loadSimConfig = (env: Record<string, string | undefined> = process.env): SimConfig =>
  parseSettings(simSchema, env);
