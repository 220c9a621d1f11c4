import { createServer, type AddressInfo } from 'node:net';
import { Client } from 'pg';
import type { FaultSpecInput } from '@cardpull/testing';
import { waitFor } from '@cardpull/testing';
import { createOrder, startStack, useStack, waitForOrder, type Stack } from '../support/stack';

/**
 * README "How soon the same request ID is asked again", through the whole service: the simulator plays each
 * answer to a sync order's first POST /cards, and the wait the order's next send was scheduled with is read
 * where the transition wrote it (orders.next_step_at - orders.updated_at, both the same statement's now()),
 * not from wall-clock gaps. Every row keeps the request ID and ends with the order's one card.
 */
const TIMINGS = { SYNC_RETRY_FIRST_DELAY_MS: '6000', SYNC_RETRY_INTERVAL_MS: '2000', RETRY_MIN_DELAY_MS: '300', PARTNER_TIMEOUT_MS: '1000', UNKNOWN_OUTCOME_WINDOW_MS: '600000' };

interface Scheduled {
  stepSeq: number;
  nextStep: string | null;
  delayMs: number | null;
  state: string;
  errorCode: string | null;
  /** A worker holds the order for a send (its lease touches updated_at, not the schedule). */
  leased: boolean;
}

/** The order's next send as its last transition scheduled it, and its (only) attempt. */
async function scheduled(db: string, orderId: string): Promise<Scheduled> {
  const pg = new Client({ connectionString: db });
  await pg.connect();
  try {
    const { rows } = await pg.query(
      `SELECT o.step_seq AS "stepSeq", o.next_step AS "nextStep",
              round(extract(epoch FROM o.next_step_at - o.updated_at) * 1000)::int AS "delayMs",
              a.state, a.error_code AS "errorCode", o.lease_owner IS NOT NULL AS leased
         FROM orders o JOIN attempts a ON a.order_id = o.id WHERE o.id = $1`,
      [orderId],
    );
    return rows[0] as Scheduled;
  } finally {
    await pg.end();
  }
}

/** The first transition after the first send: the order's step_seq past the lease, its attempt unknown for `reason`. */
const afterFirstAnswer = (db: string, orderId: string, reason: string) =>
  waitFor(`order ${orderId} to schedule its re-send after ${reason}`, async () => {
    const s = await scheduled(db, orderId);
    return s.state === 'unknown' && s.errorCode === reason && s.nextStep === 'sync_call' && !s.leased ? s : null;
  }, 15_000, 10);

describe('how soon the same request ID is re-sent follows what the partner answered (sync)', () => {
  const stack = useStack({ env: TIMINGS });
  afterEach(() => stack.sim.control.clearFaults());

  const interval = () => stack.config.SYNC_RETRY_INTERVAL_MS;
  it.each<[string, Omit<FaultSpecInput, 'endpoint' | 'gift_card_codes' | 'times'>, string, (s: Stack) => number]>([
    ['429 with Retry-After 3 -> exactly 3 s, not the minute', { mode: 'rate_limited', retry_after_s: 3 }, 'rate_limited', () => 3_000],
    ['come back later with Retry-After 1 -> 1 s', { mode: 'come_back_later', latency_ms: 500, retry_after_s: 1 }, 'in_progress', () => 1_000],
    ['429 without Retry-After -> the interval', { mode: 'error_before_issue', status: 429 }, 'rate_limited', interval],
    ['a 500 after issuing (may have started work) -> the interval, not the minute', { mode: 'error_after_issue', status: 500 }, 'server_error', interval],
    ['a 503 before issuing, no Retry-After -> the interval', { mode: 'error_before_issue', status: 503 }, 'server_error', interval],
    ['a reset after the request was sent -> the interval', { mode: 'reset' }, 'network', interval],
    ['an unreadable 200 -> the interval', { mode: 'error_after_issue', status: 200 }, 'unparseable', interval],
    ['a timeout (the partner may still be working) -> the spec’s minute', { mode: 'hang', latency_ms: 3_000 }, 'timeout', (s) => s.config.SYNC_RETRY_FIRST_DELAY_MS],
  ])('%s', async (_name, fault, reason, expected) => {
    await stack.sim.control.addFault({ endpoint: 'cards', gift_card_codes: ['NOVA-GAMES-FREE'], times: 1, ...fault } as FaultSpecInput);
    const { id, requestId } = await createOrder(stack, { gift_card_code: 'NOVA-GAMES-FREE', amount: 1500 });
    const s = await afterFirstAnswer(stack.db.url, id, reason);
    expect({ reason: s.errorCode, delayMs: s.delayMs }).toEqual({ reason, delayMs: expected(stack) });
    // The re-send carries the same request ID and gets the order its one card.
    const order = await waitForOrder(stack, id, undefined, 20_000);
    expect(order.status).toBe('completed');
    expect(order.attempts.map((a: { request_id: string }) => a.request_id)).toEqual([requestId]);
    expect((await stack.sim.control.ledger()).cards.filter((c) => c.request_id === requestId)).toHaveLength(1);
  });
});

describe('a partner that refuses the connection (nothing was sent): re-sent after RETRY_MIN_DELAY_MS, doubling up to the interval, same request ID', () => {
  let api: Stack;
  beforeAll(async () => {
    api = await startStack({ worker: false, env: TIMINGS });
  });
  afterAll(() => api?.close());

  it('the waits go 300, 300, 600, 1200 ms..., never past SYNC_RETRY_INTERVAL_MS (an async creation is sent again the same way); once the partner is back, the same IDs get the cards', async () => {
    // A port where nothing listens: every connection is refused.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const shared = { db: api.db, sim: api.sim, api: false, env: { ...TIMINGS, REDIS_PREFIX: api.env.REDIS_PREFIX } };
    const cutOff = await startStack({ ...shared, env: { ...shared.env, PARTNER_BASE_URL: `http://127.0.0.1:${port}` } });
    const { id, requestId } = await createOrder(api, { gift_card_code: 'NOVA-GAMES-FREE', amount: 1500 });
    const asyncOrder = await createOrder(api, { gift_card_code: 'NOVA-GAMES-FREE', amount: 1500, mode: 'async' });
    const waits = new Map<number, number>();
    const min = Number(TIMINGS.RETRY_MIN_DELAY_MS);
    try {
      await waitFor('the re-sends to reach SYNC_RETRY_INTERVAL_MS', async () => {
        const s = await scheduled(api.db.url, id);
        if (s.errorCode !== 'not_connected' || s.nextStep !== 'sync_call' || s.leased || s.delayMs === null) return false;
        waits.set(s.stepSeq, s.delayMs);
        return s.delayMs === api.config.SYNC_RETRY_INTERVAL_MS;
      }, 15_000, 10);
      // An async creation that never reached the partner is created again, same ID, on the same short waits (not polled).
      const created = await waitFor('the async order to schedule its creation again', async () => {
        const s = await scheduled(api.db.url, asyncOrder.id);
        return !s.leased && s.errorCode === 'not_connected' ? s : null;
      }, 10_000, 10);
      expect(created).toMatchObject({ nextStep: 'async_create', state: 'unknown' });
      expect(created.delayMs).toBeGreaterThanOrEqual(min);
      expect(created.delayMs).toBeLessThanOrEqual(api.config.SYNC_RETRY_INTERVAL_MS);
    } finally {
      await cutOff.close();
    }
    const seen = [...waits.entries()].sort(([a], [b]) => a - b).map(([, ms]) => ms);
    expect(seen[0]).toBe(min);
    // Each wait is as long as the ID has gone unanswered (so it doubles), between the minimum and the interval.
    for (const [i, ms] of seen.entries()) {
      expect(ms).toBeGreaterThanOrEqual(i === 0 ? min : seen[i - 1]!);
      expect(ms).toBeLessThanOrEqual(api.config.SYNC_RETRY_INTERVAL_MS);
    }
    expect(seen.some((ms) => ms >= 2 * min && ms < api.config.SYNC_RETRY_INTERVAL_MS)).toBe(true);
    const ledgerOf = async (ids: string[]) => (await api.sim.control.ledger()).requests.filter((r) => ids.includes(r.request_id ?? ''));
    expect(await ledgerOf([requestId, asyncOrder.requestId])).toEqual([]);

    const back = await startStack(shared);
    try {
      for (const o of [{ id, requestId }, asyncOrder]) {
        const order = await waitForOrder(api, o.id, undefined, 20_000);
        expect(order.status).toBe('completed');
        expect(order.attempts.map((a: { request_id: string }) => a.request_id)).toEqual([o.requestId]);
        expect((await api.sim.control.ledger()).cards.filter((c) => c.request_id === o.requestId)).toHaveLength(1);
      }
    } finally {
      await back.close();
    }
  });
});
