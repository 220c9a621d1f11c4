import { Client } from 'pg';
import { TEST_SERVER_URL, sleep, waitFor } from '@cardpull/testing';
import { KEYS, startStack, useStack, type Stack } from '../support/stack';
import { get, workerUrl } from './support';

const BALANCE_PATH = '/partners/v1/balance';

describe('liveness: /health/live answers on the API and the worker with no dependency and no API key', () => {
  let noRedis: Stack | undefined;
  const stack = useStack({ beforeClose: () => noRedis?.close() });
  beforeAll(async () => {
    noRedis = await startStack({ worker: false, db: stack.db, sim: stack.sim, env: { REDIS_URL: 'redis://127.0.0.1:1/0' } });
  });

  it('answers 200 { status: ok } on both processes, also while Redis is unreachable', async () => {
    for (const base of [stack.apiUrl, workerUrl(stack), noRedis!.apiUrl]) {
      const res = await get(`${base}/health/live`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ok' });
    }
  });
});

/** Any valid API key reads the readiness details (balance, partner errors); a probe without one gets the statuses. */
const PROBE = `Bearer ${KEYS.scraper}`;

describe('readiness: Postgres and Redis decide /health/ready (503 with what is down), no API key needed', () => {
  const stack = useStack();

  it('without an API key only the statuses: no balance, no error text (the details need any valid key)', async () => {
    const details = await waitFor('a first balance reading', async () => {
      const r = await get(`${stack.apiUrl}/health/ready`, PROBE);
      return r.body.details?.partner?.status === 'up' ? r : null;
    });
    expect(details.body.details.partner.balance).toEqual(expect.any(Number));
    for (const authorization of [undefined, 'Bearer not-a-key-000']) {
      const open = await get(`${stack.apiUrl}/health/ready`, authorization);
      expect(open.status).toBe(200);
      expect(open.body).toEqual({
        status: 'ok',
        info: { postgres: { status: 'up' }, redis: { status: 'up' }, partner: { status: 'up' } },
        error: {},
        details: { postgres: { status: 'up' }, redis: { status: 'up' }, partner: { status: 'up' } },
      });
    }
  });

  it('everything up: 200 ok on the API and the worker, the partner up with its cached balance', async () => {
    for (const base of [stack.apiUrl, workerUrl(stack)]) {
      const res = await waitFor('a first balance reading', async () => {
        const r = await get(`${base}/health/ready`, PROBE);
        return r.body.details?.partner?.status === 'up' ? r : null;
      });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('ok');
      expect(res.body.details.postgres.status).toBe('up');
      expect(res.body.details.redis.status).toBe('up');
      expect(res.body.details.partner).toEqual(
        expect.objectContaining({ status: 'up', circuit: 'closed', reachable: true, balance: (await stack.sim.control.state()).balance, low_balance: false }),
      );
    }
  });

  it('a bad REDIS_URL: 503, redis down, Postgres and the partner still reported', async () => {
    const broken = await startStack({ worker: false, db: stack.db, sim: stack.sim, env: { REDIS_URL: 'redis://127.0.0.1:1/0' } });
    try {
      const res = await get(`${broken.apiUrl}/health/ready`, PROBE);
      expect(res.status).toBe(503);
      expect(res.body.status).toBe('error');
      expect(res.body.error.redis).toEqual(expect.objectContaining({ status: 'down', message: expect.any(String) }));
      expect(res.body.info.postgres.status).toBe('up');
      expect(res.body.details.partner).toBeDefined();
    } finally {
      await broken.close();
    }
  });

  it('a stopped dependency: Postgres refusing connections makes it 503 (postgres down), and 200 again once it is back', async () => {
    const apiOnly = await startStack({ worker: false });
    const admin = new Client({ connectionString: TEST_SERVER_URL });
    await admin.connect();
    const name = apiOnly.db.name;
    try {
      expect((await get(`${apiOnly.apiUrl}/health/ready`, PROBE)).status).toBe(200);
      await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
      const down = await get(`${apiOnly.apiUrl}/health/ready`, PROBE);
      expect(down.status).toBe(503);
      expect(down.body.error.postgres).toEqual(expect.objectContaining({ status: 'down' }));
      expect(down.body.info.redis.status).toBe('up');
      await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
      await waitFor('readiness to come back', async () => (await get(`${apiOnly.apiUrl}/health/ready`, PROBE)).status === 200);
    } finally {
      await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`).catch(() => undefined);
      await admin.end();
      await apiOnly.close();
    }
  });
});

/**
 * The reading of this service (libs/ops/src/health.module.ts, PartnerIndicator): the API and the
 * worker keep accepting and keeping orders without the partner, so a partner outage, and also an open
 * circuit (credentials refused, one state shared by every process), is reported as `degraded` with HTTP 200.
 */
describe('the partner never fails readiness: an unreachable partner or an open circuit is "degraded" (200), with the reason', () => {
  // API only: no worker whose circuit probe would close a circuit this suite opens by hand.
  const stack = useStack({ worker: false, env: { PARTNER_CACHE_TTL_MS: '200' } });

  it('partner failing (503 on every call): 200, status degraded, reachable false with the last failure and the last known balance', async () => {
    const known = await waitFor('a first balance', async () => {
      const r = await get(`${stack.apiUrl}/health/ready`, PROBE);
      return r.body.details?.partner?.status === 'up' ? r.body.details.partner : null;
    });
    const fault = await stack.sim.control.addFault({ endpoint: 'any', mode: 'error_before_issue', status: 503 });
    try {
      const res = await waitFor('the probe to see the failure', async () => {
        const r = await get(`${stack.apiUrl}/health/ready`, PROBE);
        return r.body.details?.partner?.reachable === false ? r : null;
      });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('degraded');
      expect(res.body.info.postgres.status).toBe('up');
      expect(res.body.details.partner).toEqual(
        expect.objectContaining({
          status: 'degraded',
          circuit: 'closed',
          reachable: false,
          last_failure: expect.objectContaining({ outcome: 'unknown' }),
          balance: known.balance,
          balance_stale: true,
        }),
      );
    } finally {
      await stack.sim.control.removeFault(fault);
    }
    await waitFor('the partner to be up again', async () => (await get(`${stack.apiUrl}/health/ready`, PROBE)).body.details?.partner?.status === 'up');
  });

  it('circuit open (credentials refused): 200, status degraded, circuit "open" with the partner code and since when', async () => {
    const pg = new Client({ connectionString: stack.db.url });
    await pg.connect();
    try {
      await pg.query(
        `INSERT INTO partner_circuit (id, state, opened_at, last_error_code, last_error_message, updated_at)
         VALUES (1, 'open', now(), 'invalid_signature', 'Invalid signature', now())
         ON CONFLICT (id) DO UPDATE SET state = 'open', opened_at = now(), last_error_code = 'invalid_signature'`,
      );
      const res = await get(`${stack.apiUrl}/health/ready`, PROBE);
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('degraded');
      expect(res.body.details.partner).toEqual(
        expect.objectContaining({ status: 'degraded', circuit: 'open', code: 'invalid_signature', since: expect.any(String), message: expect.stringMatching(/credentials/) }),
      );
      await pg.query(`UPDATE partner_circuit SET state = 'closed', closed_at = now() WHERE id = 1`);
      expect((await get(`${stack.apiUrl}/health/ready`, PROBE)).body.details.partner.circuit).toBe('closed');
    } finally {
      await pg.end();
    }
  });
});

describe('the readiness probe reads the CACHED balance: at most one partner balance call per PARTNER_CACHE_TTL_MS', () => {
  const TTL = 1_000;
  // API only, so the probe is the only caller of GET /balance.
  const stack = useStack({ worker: false, env: { PARTNER_CACHE_TTL_MS: String(TTL) } });

  /** 60 probes over ~3 s, 5 at a time; returns the balance calls the partner received meanwhile. */
  async function probeHard(): Promise<{ calls: number[]; elapsedMs: number }> {
    const since = new Date();
    const started = Date.now();
    for (let round = 0; round < 12; round++) {
      const answers = await Promise.all(Array.from({ length: 5 }, () => get(`${stack.apiUrl}/health/ready`, PROBE)));
      for (const a of answers) expect(a.status).toBe(200);
      await sleep(250);
    }
    const elapsedMs = Date.now() - started;
    const ledger = await stack.sim.control.ledger(since);
    return { calls: ledger.requests.filter((r) => r.method === 'GET' && r.path === BALANCE_PATH).map((r) => Date.parse(r.at)), elapsedMs };
  }

  const expectSpaced = ({ calls, elapsedMs }: { calls: number[]; elapsedMs: number }) => {
    expect(calls.length).toBeGreaterThanOrEqual(1);
    expect(calls.length).toBeLessThanOrEqual(Math.ceil(elapsedMs / TTL) + 1);
    // Spaced by the window, not by the probes (every ~50 ms). The times are the calls' arrivals at the
    // simulator, each late by however loaded the machine is (a CI run saw 902 ms between two, TTL 1 s):
    // half a window of tolerance still tells one call per window from one per probe.
    for (let i = 1; i < calls.length; i++) expect(calls[i]! - calls[i - 1]!).toBeGreaterThanOrEqual(TTL / 2);
  };

  it('partner up: 60 probes in ~3 s cost at most one balance call per TTL window', async () => {
    expectSpaced(await probeHard());
  });

  it('partner failing: still at most one balance call per TTL window (failures are not retried on every probe)', async () => {
    const fault = await stack.sim.control.addFault({ endpoint: 'any', mode: 'error_before_issue', status: 500 });
    try {
      const result = await probeHard();
      expectSpaced(result);
      expect(result.calls.length).toBeGreaterThanOrEqual(2);
    } finally {
      await stack.sim.control.removeFault(fault);
    }
  });
});
