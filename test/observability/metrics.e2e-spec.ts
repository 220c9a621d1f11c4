import { Client } from 'pg';
import { LOCAL_DEFAULTS } from '@cardpull/config';
import { sleep, waitFor } from '@cardpull/testing';
import { KEYS, createOrder, insertOrder, useStack, waitForOrder } from '../support/stack';
import { scrape, valueOf, workerUrl, type Sample } from './support';

/** Every name of the brief, on both processes (histograms by their _count series). */
const EXPORTED = [
  'cardpull_orders',
  'cardpull_orders_needs_attention',
  'cardpull_oldest_open_order_age_seconds',
  'cardpull_partner_call_duration_seconds_count',
  'cardpull_partner_calls_total',
  'cardpull_pull_retries_total',
  'cardpull_queue_jobs',
  'cardpull_queue_paused',
  'cardpull_partner_circuit_open',
  'cardpull_partner_balance',
  'cardpull_partner_balance_age_seconds',
  'cardpull_partner_balance_low',
  'cardpull_partner_balance_low_threshold',
  'cardpull_catalog_changes_total',
  // prom-client's default process and Node metrics, with our prefix
  'cardpull_process_cpu_user_seconds_total',
  'cardpull_process_resident_memory_bytes',
  'cardpull_nodejs_heap_size_used_bytes',
  'cardpull_nodejs_eventloop_lag_seconds',
];

describe('/metrics on the API and on the worker: cardpull_* metrics with plausible values, no API key, nothing secret', () => {
  const stack = useStack({ env: { PARTNER_CACHE_TTL_MS: '200' } });
  let bases: { api: string; worker: string };
  const orderIds: string[] = [];

  beforeAll(async () => {
    bases = { api: stack.apiUrl, worker: workerUrl(stack) };
    // The first POST /cards answers 500 before issuing: an unknown outcome, retried with the same request ID.
    await stack.sim.control.addFault({ endpoint: 'cards', mode: 'error_before_issue', status: 500, times: 1 });
    for (const mode of ['sync', 'sync', 'sync', 'async', 'async']) {
      orderIds.push((await createOrder(stack, { gift_card_code: 'ACME-BOOKS-FIXED', amount: 2500, mode })).id);
    }
    // A gift card our cache believed in but the partner refuses: failed with gift_card_not_found.
    orderIds.push((await insertOrder(stack, { giftCardCode: 'NO-SUCH-CARD', amount: 1000 })).id);
    for (const id of orderIds) await waitForOrder(stack, id);
  });

  it('both processes answer without an API key, in the Prometheus text format, with every listed name', async () => {
    for (const base of [bases.api, bases.worker]) {
      const { samples, text, contentType } = await scrape(base);
      expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
      for (const name of EXPORTED) expect([name, samples.has(name)]).toEqual([name, true]);
      for (const name of samples.keys()) expect(name).toMatch(/^cardpull_/);
      expect(text).toContain('# TYPE cardpull_partner_call_duration_seconds histogram');
    }
  });

  it('orders by status match Postgres (on both processes), with needs_attention and the oldest open order age', async () => {
    const pg = new Client({ connectionString: stack.db.url });
    await pg.connect();
    let db: Record<string, number>;
    try {
      db = Object.fromEntries((await pg.query('SELECT status::text, count(*)::int AS n FROM orders GROUP BY status')).rows.map((r) => [r.status, r.n]));
    } finally {
      await pg.end();
    }
    expect(db).toEqual({ completed: 5, failed: 1 });
    for (const base of [bases.api, bases.worker]) {
      // The gauges are computed from Postgres at scrape time and cached for 5 s.
      const samples = await waitFor('the order gauges to catch up', async () => {
        const s = (await scrape(base)).samples;
        return valueOf(s, 'cardpull_orders', { status: 'completed' }) === 5 ? s : null;
      }, 10_000);
      const byStatus = Object.fromEntries(samples.get('cardpull_orders')!.map((s: Sample) => [s.labels.status, s.value]));
      expect(byStatus).toEqual({ pending: 0, in_progress: 0, awaiting_funds: 0, awaiting_stock: 0, completed: 5, failed: 1, needs_attention: 0 });
      expect(valueOf(samples, 'cardpull_orders_needs_attention')).toBe(0);
      expect(valueOf(samples, 'cardpull_oldest_open_order_age_seconds')).toBe(0);
    }
  });

  it('partner calls on the worker: latency histogram for createCard and the async endpoints, outcomes with reasons, the same-ID retry', async () => {
    const samples = (await scrape(bases.worker)).samples;
    const count = (endpoint: string, outcome: string) => valueOf(samples, 'cardpull_partner_call_duration_seconds_count', { endpoint, outcome }) ?? 0;
    expect(count('createCard', 'success')).toBe(3);
    expect(count('createPullRequest', 'success')).toBe(2);
    expect(count('getPullRequest', 'success')).toBeGreaterThanOrEqual(2);
    const inf = valueOf(samples, 'cardpull_partner_call_duration_seconds_bucket', { endpoint: 'createCard', outcome: 'success', le: '+Inf' });
    expect(inf).toBe(3);
    expect(valueOf(samples, 'cardpull_partner_calls_total', { endpoint: 'createCard', outcome: 'unknown', reason: 'server_error' })).toBe(1);
    expect(valueOf(samples, 'cardpull_partner_calls_total', { endpoint: 'createCard', outcome: 'definitive', reason: 'gift_card_not_found' })).toBe(1);
    expect(valueOf(samples, 'cardpull_pull_retries_total', { endpoint: 'createCard', kind: 'same_id' })).toBe(1);
    expect(valueOf(samples, 'cardpull_pull_retries_total', { endpoint: 'createCard', kind: 'new_attempt' })).toBe(0);
    // The API calls the partner only for the catalog and the balance, never for a pull.
    const api = (await scrape(bases.api)).samples;
    expect(valueOf(api, 'cardpull_partner_call_duration_seconds_count', { endpoint: 'createCard' })).toBeUndefined();
    expect(valueOf(api, 'cardpull_partner_calls_total', { endpoint: 'listGiftCards', outcome: 'success' })).toBeGreaterThanOrEqual(1);
  });

  it('queue depth gauges for the orders and callbacks queues, nothing paused; the circuit gauge is 0', async () => {
    for (const base of [bases.api, bases.worker]) {
      const samples = (await scrape(base)).samples;
      for (const queue of ['orders', 'callbacks']) {
        for (const state of ['waiting', 'active', 'delayed', 'failed', 'prioritized']) {
          expect([queue, state, valueOf(samples, 'cardpull_queue_jobs', { queue, state })]).toEqual([queue, state, expect.any(Number)]);
        }
        expect(valueOf(samples, 'cardpull_queue_paused', { queue })).toBe(0);
      }
      expect(valueOf(samples, 'cardpull_queue_jobs', { queue: 'orders', state: 'failed' })).toBe(0);
      expect(valueOf(samples, 'cardpull_partner_circuit_open')).toBe(0);
    }
  });

  it("the balance gauge equals the simulator's balance (cached for PARTNER_CACHE_TTL_MS), not low", async () => {
    const { balance } = await stack.sim.control.state();
    expect(balance).toBeLessThan(1_000_000);
    for (const base of [bases.api, bases.worker]) {
      const samples = await waitFor('the balance gauge', async () => {
        const s = (await scrape(base)).samples;
        return valueOf(s, 'cardpull_partner_balance') === balance ? s : null;
      });
      expect(valueOf(samples, 'cardpull_partner_balance_low')).toBe(0);
      expect(valueOf(samples, 'cardpull_partner_balance_low_threshold')).toBe(100);
      expect(valueOf(samples, 'cardpull_partner_balance_age_seconds')).toBeLessThan(5);
    }
  });

  it('nothing secret: no API key, partner credential, request ID, order id or card code in the text', async () => {
    const ledger = await stack.sim.control.ledger();
    const secrets = [
      ...Object.values(KEYS),
      LOCAL_DEFAULTS.PARTNER_API_KEY,
      LOCAL_DEFAULTS.PARTNER_IDENTIFIER,
      LOCAL_DEFAULTS.PARTNER_SHARED_KEY,
      ...ledger.cards.flatMap((c) => [c.code, c.id]),
      ...ledger.requests.map((r) => r.request_id).filter((id): id is string => !!id),
      ...orderIds,
    ];
    expect(secrets.length).toBeGreaterThan(15);
    for (const base of [bases.api, bases.worker]) {
      const { text } = await scrape(base);
      expect(secrets.filter((s) => text.includes(s))).toEqual([]);
    }
  });
});

describe('a value that is not known is left out of the scrape, never exported as 0', () => {
  // A partner that never answers: no balance is known yet.
  const stack = useStack({ worker: false, env: { PARTNER_BASE_URL: 'http://127.0.0.1:1', PARTNER_TIMEOUT_MS: '300' } });

  it('no balance yet: the balance gauges are absent (no false "low" and no 0 balance), the order gauges are there', async () => {
    const { samples, text } = await scrape(stack.apiUrl);
    for (const name of ['cardpull_partner_balance', 'cardpull_partner_balance_age_seconds', 'cardpull_partner_balance_low']) {
      expect([name, samples.has(name)]).toEqual([name, false]);
      expect(text).toContain(`# TYPE ${name} gauge`);
    }
    expect(valueOf(samples, 'cardpull_partner_balance_low_threshold')).toBe(100);
    expect(valueOf(samples, 'cardpull_orders', { status: 'pending' })).toBe(0);
    expect(valueOf(samples, 'cardpull_partner_circuit_open')).toBe(0);
    // The scrape itself asked for the balance (cached probe); the next scrape counts that call.
    const again = (await scrape(stack.apiUrl)).samples;
    expect(valueOf(again, 'cardpull_partner_calls_total', { endpoint: 'getBalance', outcome: 'unknown', reason: 'not_connected' })).toBeGreaterThanOrEqual(1);
    expect(again.has('cardpull_partner_balance')).toBe(false);
  });
});

describe('the oldest open order age counts from the oldest order not completed, failed or needs_attention', () => {
  // No worker: the orders stay pending.
  const stack = useStack({ worker: false });

  it('a pending order created 2 minutes ago: age >= 120 s, growing between scrapes; needs_attention orders do not count', async () => {
    const pending = await insertOrder(stack, { giftCardCode: 'ACME-BOOKS-FIXED', amount: 2500 });
    const parked = await insertOrder(stack, { giftCardCode: 'ACME-BOOKS-FIXED', amount: 1000 });
    const pg = new Client({ connectionString: stack.db.url });
    await pg.connect();
    try {
      await pg.query(`UPDATE orders SET created_at = now() - interval '120 seconds' WHERE id = $1`, [pending.id]);
      await pg.query(
        `UPDATE orders SET status = 'needs_attention', next_step = NULL, next_step_at = NULL, error_code = 'timeout', error_message = 'test',
                created_at = now() - interval '1 hour' WHERE id = $1`,
        [parked.id],
      );
    } finally {
      await pg.end();
    }
    const first = (await scrape(stack.apiUrl)).samples;
    expect(valueOf(first, 'cardpull_orders', { status: 'pending' })).toBe(1);
    expect(valueOf(first, 'cardpull_orders_needs_attention')).toBe(1);
    const age = valueOf(first, 'cardpull_oldest_open_order_age_seconds')!;
    expect(age).toBeGreaterThanOrEqual(120);
    expect(age).toBeLessThan(180);
    await sleep(1_100);
    expect(valueOf((await scrape(stack.apiUrl)).samples, 'cardpull_oldest_open_order_age_seconds')).toBeGreaterThan(age + 1);
  });
});
