import type { AddressInfo } from 'node:net';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { request } from 'undici';
import { loadServiceConfig, type ServiceConfig } from '@cardpull/config';
import { createHttpApp } from '@cardpull/platform';
import { LogCapture, createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from '@cardpull/testing';
import { startSimulator, type SimHandle } from './simulator';
import { ApiModule } from '../../apps/api/src/api.module';
import { setupApiDocs } from '../../apps/api/src/docs/openapi';
import { WorkerModule } from '../../apps/worker/src/worker.module';

/** API keys of the test clients: a shop with every scope, one that cannot read cards, one that can only read. */
export const KEYS = {
  shop: 'shop-key-0001',
  noCards: 'nocards-key-0001',
  readOnly: 'readonly-key-0001',
  other: 'other-key-00001',
  scraper: 'scraper-key-0001',
};
const API_KEYS = [
  `shop:${KEYS.shop}`,
  `nocards:${KEYS.noCards}:orders:write+orders:read`,
  `reader:${KEYS.readOnly}:orders:read`,
  `other:${KEYS.other}`,
  `prometheus:${KEYS.scraper}:metrics:read`,
].join(',');

/** Timings shrunk so the suites stay fast; each suite may override them. */
export const FAST_TIMINGS: Record<string, string> = {
  PARTNER_TIMEOUT_MS: '1000',
  SYNC_RETRY_FIRST_DELAY_MS: '400',
  SYNC_RETRY_INTERVAL_MS: '200',
  ASYNC_POLL_FIRST_DELAY_MS: '100',
  ASYNC_POLL_INTERVAL_MIN_MS: '100',
  ASYNC_POLL_INTERVAL_MAX_MS: '200',
  UNKNOWN_OUTCOME_WINDOW_MS: '20000',
  SWEEP_INTERVAL_MS: '500',
  PERIODIC_TASK_LEASE_MS: '3000',
  AWAIT_RECHECK_INTERVAL_MS: '200',
  CIRCUIT_PROBE_INTERVAL_MS: '200',
  CIRCUIT_RETRY_MS: '200',
  CATALOG_REFRESH_INTERVAL_MS: '60000',
  WORKER_LOCK_MS: '2000',
  WORKER_STALLED_INTERVAL_MS: '1000',
};

export interface Stack {
  config: ServiceConfig;
  env: Record<string, string>;
  db: TestDatabase;
  redis: TestRedis;
  sim: SimHandle;
  api?: NestFastifyApplication;
  apiUrl: string;
  worker?: NestFastifyApplication;
  logs: LogCapture;
  /** Calls the internal API with a key (default: the shop's). */
  call<T = any>(method: string, path: string, opts?: { key?: string | null; body?: unknown; headers?: Record<string, string> }): Promise<{ status: number; body: T; headers: Record<string, unknown> }>;
  startWorker(): Promise<NestFastifyApplication>;
  stopWorker(): Promise<void>;
  close(): Promise<void>;
}

export interface StackOptions {
  env?: Record<string, string>;
  simEnv?: Record<string, string>;
  api?: boolean;
  worker?: boolean;
  /** Reuse a simulator (several stacks against one partner). */
  sim?: SimHandle;
  /** Reuse a database (an API and a worker started as separate stacks). */
  db?: TestDatabase;
  /** The URL the service reaches its database by, given the database's own (a pooler in front of it). */
  dbUrl?: (directUrl: string) => string;
}

/**
 * A whole cardpull against real Postgres (its own database), real Redis (its own key prefix) and the
 * simulator over real HTTP: the API and the worker run in this process, each as the Nest app it is in
 * production. Logs are captured (level info) so suites can check what reached them.
 */
export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const started = await Promise.allSettled([
    opts.db ? Promise.resolve(opts.db) : createTestDatabase(),
    createTestRedis('stack'),
    opts.sim ? Promise.resolve(opts.sim) : startSimulator(opts.simEnv),
  ] as const);
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    // Undo what did start, so a failed beforeAll leaves no open handle behind.
    const [d, r, s] = started;
    if (!opts.db && d.status === 'fulfilled') await d.value.drop().catch(() => undefined);
    if (r.status === 'fulfilled') await r.value.close().catch(() => undefined);
    if (!opts.sim && s.status === 'fulfilled') await s.value.close().catch(() => undefined);
    throw failed.reason;
  }
  const [db, redis, sim] = started.map((s) => (s as PromiseFulfilledResult<unknown>).value) as [TestDatabase, TestRedis, SimHandle];
  const env: Record<string, string> = {
    ...FAST_TIMINGS,
    DATABASE_URL: opts.dbUrl ? opts.dbUrl(db.url) : db.url,
    DATABASE_POOL_SIZE: '8',
    REDIS_URL: redis.url,
    REDIS_PREFIX: redis.prefix,
    PARTNER_BASE_URL: sim.baseUrl,
    API_KEYS,
    LOG_LEVEL: 'info',
    PORT: '0',
    WORKER_PORT: '0',
    WORKER_CONCURRENCY: '16',
    // Against the in-process simulator with its public credentials: the local profile.
    CARDPULL_PROFILE: 'local',
    // The suites' callback receivers listen on 127.0.0.1 over http: (test/security/callback-targets turns this off).
    CALLBACK_ALLOW_LOCAL: 'true',
    ...opts.env,
  };
  const config = loadServiceConfig(env);
  const logs = PROCESS_LOGS;
  const stack: Stack = {
    config,
    env,
    db,
    redis,
    sim,
    apiUrl: '',
    logs,
    call: (method, path, o) => callApi(stack.apiUrl, method, path, o),
    async startWorker() {
      stack.worker = await createHttpApp(WorkerModule.forConfig(config, logs));
      await stack.worker.listen({ port: 0, host: '127.0.0.1' });
      return stack.worker;
    },
    async stopWorker() {
      await stack.worker?.close();
      stack.worker = undefined;
    },
    async close() {
      await stack.worker?.close();
      await stack.api?.close();
      if (!opts.sim) await sim.close();
      await redis.close();
      if (!opts.db) await db.drop();
    },
  };
  try {
    if (opts.api !== false) {
      stack.api = await createHttpApp(ApiModule.forConfig(config, logs), { bodyLimit: 16 * 1024, trustedProxies: config.TRUSTED_PROXIES });
      await stack.api.listen({ port: 0, host: '127.0.0.1' });
      stack.apiUrl = `http://127.0.0.1:${(stack.api.getHttpServer().address() as AddressInfo).port}`;
    }
    if (opts.worker !== false) await stack.startWorker();
  } catch (error) {
    await stack.close().catch(() => undefined);
    throw error;
  }
  return stack;
}

export interface UseStackOptions extends StackOptions {
  /**
   * Runs in afterAll before the stack closes, even if a test failed: a last check against the stack, or
   * stopping what the suite started beside it (worker processes, a second stack on the same database).
   * jest runs a block's afterAll hooks in the order they were declared, so work that needs the stack goes
   * here rather than in an afterAll of its own.
   */
  beforeClose?: (stack: Stack) => Promise<unknown> | unknown;
}

/**
 * The usual stack of a describe block (or test file), as jest hooks: startStack(opts) in beforeAll,
 * `beforeClose` then close in afterAll. The handle answers for the stack that beforeAll started, so read it
 * inside tests and hooks (declared after this call), not while tests are being collected.
 */
export function useStack(opts: UseStackOptions = {}): Stack {
  let started: Stack | undefined;
  const stack = (): Stack => {
    if (!started) throw new Error('useStack: the stack is started in beforeAll; use it inside tests and hooks');
    return started;
  };
  beforeAll(async () => {
    started = await startStack(opts);
  });
  afterAll(async () => {
    const closing = started;
    if (!closing) return;
    try {
      await opts.beforeClose?.(closing);
    } finally {
      started = undefined;
      await closing.close();
    }
  });
  return {
    get config() {
      return stack().config;
    },
    get env() {
      return stack().env;
    },
    get db() {
      return stack().db;
    },
    get redis() {
      return stack().redis;
    },
    get sim() {
      return stack().sim;
    },
    get api() {
      return stack().api;
    },
    get apiUrl() {
      return stack().apiUrl;
    },
    get worker() {
      return stack().worker;
    },
    get logs() {
      return stack().logs;
    },
    call: (method, path, o) => stack().call(method, path, o),
    startWorker: () => stack().startWorker(),
    stopWorker: () => stack().stopWorker(),
    close: () => stack().close(),
  };
}

/**
 * nestjs-pino keeps one pino logger per process (the first app's), so every stack of a test file logs to
 * the same capture: `stack.logs` is this process's log output.
 */
const PROCESS_LOGS = new LogCapture();

/** Another API app on a stack's database and Redis (same prefix), built as main.ts builds it (with /docs). */
export interface ApiApp {
  url: string;
  app: NestFastifyApplication;
  /** Calls this app as stack.call calls the stack's API. */
  call: Stack['call'];
  close(): Promise<void>;
}

/**
 * One more API process of the stack's fleet, in this test process: its own Nest app (its own guards,
 * services and Redis connections), sharing only Postgres and Redis with the others, as a second API
 * process would. For the suites that prove a limit is counted across the fleet.
 */
export async function startApiApp(stack: Stack): Promise<ApiApp> {
  const app = await createHttpApp(ApiModule.forConfig(stack.config, stack.logs), { bodyLimit: 16 * 1024, trustedProxies: stack.config.TRUSTED_PROXIES });
  setupApiDocs(app);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  const call: Stack['call'] = (method, path, o) => callApi(url, method, path, o);
  return { url, app, call, close: () => app.close() };
}

async function callApi(base: string, method: string, path: string, o: { key?: string | null; body?: unknown; headers?: Record<string, string> } = {}) {
  const key = o.key === undefined ? KEYS.shop : o.key;
  const res = await request(`${base}${path}`, {
    method: method as 'GET',
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...o.headers,
    },
    body: o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body),
  });
  const text = await res.body.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.statusCode, body: body as never, headers: res.headers };
}

let keySeq = 0;
/** A fresh Idempotency-Key. */
export const idemKey = (label = 'k') => `${label}-${process.pid}-${Date.now()}-${++keySeq}`;

/**
 * Stores an order the way the intake does, but without the API's catalog check: for orders the partner
 * must refuse (a gift card or amount our cache believed valid). The worker's sweeper picks it up.
 */
export async function insertOrder(stack: Stack, o: { giftCardCode: string; amount: number; mode?: 'sync' | 'async'; client?: string; callbackUrl?: string }) {
  const { testPool } = await import('@cardpull/testing');
  const { IntakeRepository, requestHash } = await import('@cardpull/orders');
  const pool = testPool(stack.db.url, 1);
  try {
    const mode = o.mode ?? 'sync';
    const result = await new IntakeRepository(pool).create({
      client: o.client ?? 'shop',
      callbackSecrets: false,
      idempotencyKey: idemKey('direct'),
      requestHash: requestHash({ gift_card_code: o.giftCardCode, amount: o.amount, mode }),
      mode,
      giftCardCode: o.giftCardCode,
      amount: o.amount,
      metadata: undefined,
      callbackUrl: o.callbackUrl ?? null,
    });
    if (result.kind !== 'created') throw new Error('expected a new order');
    return { id: result.order.id, requestId: result.requestId };
  } finally {
    await pool.end();
  }
}

/** Polls GET /v1/orders/:id (with `key`, default the shop's) until `done(order)` holds; returns the order. */
export async function waitForOrder(stack: Stack, id: string, done: (order: any) => boolean = (o) => ['completed', 'failed', 'needs_attention'].includes(o.status), timeoutMs = 20_000, key?: string) {
  const { waitFor } = await import('@cardpull/testing');
  return waitFor(`order ${id}`, async () => {
    const r = await stack.call('GET', `/v1/orders/${id}`, { key });
    return r.status === 200 && done(r.body.order) ? r.body.order : null;
  }, timeoutMs);
}

/** Creates an order through the API and returns its id and first request ID. */
export async function createOrder(stack: Stack, body: { gift_card_code: string; amount: number; mode?: string }) {
  const res = await stack.call('POST', '/v1/orders', { body, headers: { 'idempotency-key': idemKey() } });
  if (res.status !== 202) throw new Error(`order refused: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.order.id as string, requestId: res.body.order.attempts[0].request_id as string };
}
