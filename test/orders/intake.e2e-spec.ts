import { Client } from 'pg';
import { waitFor } from '@cardpull/testing';
import { KEYS, idemKey, startStack, type Stack } from '../support/stack';

const GOOD = { gift_card_code: 'ACME-BOOKS-FIXED', amount: 2500 };

describe('intake (POST /v1/orders)', () => {
  let stack: Stack;
  let pg: Client;
  const countOrders = async () => Number((await pg.query('SELECT count(*) FROM orders')).rows[0].count);
  const post = (body: unknown, headers: Record<string, string> = { 'idempotency-key': idemKey() }, key?: string | null) =>
    stack.call('POST', '/v1/orders', { body, headers, key });

  beforeAll(async () => {
    stack = await startStack({ worker: false });
    pg = new Client({ connectionString: stack.db.url });
    await pg.connect();
  });
  afterAll(async () => {
    await pg?.end();
    await stack?.close();
  });

  describe('REST contract: 202 with the order, its request ID committed (invariant 1)', () => {
    it('answers 202 with a pending order whose first attempt has a request ID already in Postgres', async () => {
      const res = await post({ ...GOOD, mode: 'async', metadata: { cart: 'c-1' } });
      expect(res.status).toBe(202);
      const order = res.body.order;
      expect(order).toMatchObject({ status: 'pending', mode: 'async', gift_card_code: 'ACME-BOOKS-FIXED', amount: 2500, card: null, error: null, metadata: { cart: 'c-1' } });
      expect(order.attempts).toHaveLength(1);
      const { rows } = await pg.query('SELECT request_id, state FROM attempts WHERE order_id = $1', [order.id]);
      expect(rows).toEqual([{ request_id: order.attempts[0].request_id, state: 'created' }]);
    });
  });

  describe('idempotency: same key and body replay the order (200); another body is 409', () => {
    it('replays', async () => {
      const headers = { 'idempotency-key': idemKey('replay') };
      const first = await post(GOOD, headers);
      const again = await post(GOOD, headers);
      expect(first.status).toBe(202);
      expect(again.status).toBe(200);
      expect(again.body.order.id).toBe(first.body.order.id);
      expect(again.body.order.attempts[0].request_id).toBe(first.body.order.attempts[0].request_id);
    });

    it('refuses the same key with another body, and stores nothing new', async () => {
      const headers = { 'idempotency-key': idemKey('conflict') };
      await post(GOOD, headers);
      const before = await countOrders();
      const res = await post({ ...GOOD, amount: 5000 }, headers);
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ errors: [{ code: 'idempotency_key_reused', message: expect.any(String) }], status: 'conflict' });
      expect(await countOrders()).toBe(before);
    });

    it('keys are per client: another client may use the same key', async () => {
      const headers = { 'idempotency-key': idemKey('shared') };
      const a = await post(GOOD, headers);
      const b = await post(GOOD, headers, KEYS.other);
      expect(b.status).toBe(202);
      expect(b.body.order.id).not.toBe(a.body.order.id);
    });
  });

  describe('authentication and scopes (401 without a valid key, 403 without the scope)', () => {
    it.each([
      [null, 401, 'unauthorized'],
      ['wrong-key-123', 401, 'unauthorized'],
      [KEYS.readOnly, 403, 'forbidden'],
    ])('key %p -> %d', async (key, status, code) => {
      const before = await countOrders();
      const res = await post(GOOD, { 'idempotency-key': idemKey() }, key);
      expect(res.status).toBe(status);
      expect(res.body.errors[0].code).toBe(code);
      expect(await countOrders()).toBe(before);
    });
  });

  describe('bad input gets a clear error in the envelope and stores nothing', () => {
    const cases: [string, number, string, () => Promise<{ status: number; body: any }>][] = [
      ['malformed JSON', 400, 'invalid_json', () => stack.call('POST', '/v1/orders', { body: '{"gift_card_code": "ACME', headers: { 'idempotency-key': idemKey() } })],
      ['empty body', 400, 'invalid_json', () => stack.call('POST', '/v1/orders', { body: '', headers: { 'idempotency-key': idemKey(), 'content-type': 'application/json' } })],
      ['a JSON array', 400, 'invalid_request', () => post([GOOD])],
      ['a JSON string', 400, 'invalid_request', () => post('"hello"')],
      ['missing amount', 400, 'invalid_request', () => post({ gift_card_code: 'ACME-BOOKS-FIXED' })],
      ['missing gift_card_code', 400, 'invalid_request', () => post({ amount: 2500 })],
      ['amount as a string', 400, 'invalid_request', () => post({ ...GOOD, amount: '2500' })],
      ['gift_card_code as a number', 400, 'invalid_request', () => post({ ...GOOD, gift_card_code: 42 })],
      ['non-integer amount', 400, 'invalid_request', () => post({ ...GOOD, amount: 2500.5 })],
      ['zero amount', 400, 'invalid_request', () => post({ ...GOOD, amount: 0 })],
      ['negative amount', 400, 'invalid_request', () => post({ ...GOOD, amount: -2500 })],
      ['absurd amount', 400, 'invalid_request', () => post({ ...GOOD, amount: 1e15 })],
      ['unknown mode', 400, 'invalid_request', () => post({ ...GOOD, mode: 'fast' })],
      ['metadata not an object', 400, 'invalid_request', () => post({ ...GOOD, metadata: [1, 2] })],
      ['metadata too large', 400, 'invalid_request', () => post({ ...GOOD, metadata: { blob: 'x'.repeat(5000) } })],
      ['unknown field', 400, 'invalid_request', () => post({ ...GOOD, amont: 5 })],
      ['missing Idempotency-Key', 400, 'idempotency_key_missing', () => post(GOOD, {})],
      ['over-long Idempotency-Key', 400, 'idempotency_key_invalid', () => post(GOOD, { 'idempotency-key': 'k'.repeat(256) })],
      ['Idempotency-Key with spaces', 400, 'idempotency_key_invalid', () => post(GOOD, { 'idempotency-key': 'has space' })],
      ['body over the size limit', 413, 'payload_too_large', () => post({ ...GOOD, metadata: { blob: 'x'.repeat(20_000) } })],
      ['text/plain body', 415, 'unsupported_media_type', () => stack.call('POST', '/v1/orders', { body: JSON.stringify(GOOD), headers: { 'idempotency-key': idemKey(), 'content-type': 'text/plain' } })],
      ['unknown gift card code', 404, 'gift_card_not_found', () => post({ ...GOOD, gift_card_code: 'NO-SUCH-CARD' })],
      ['fixed card, amount not listed', 422, 'invalid_amount', () => post({ ...GOOD, amount: 2000 })],
      ['free card, amount off the step', 422, 'invalid_amount', () => post({ gift_card_code: 'NOVA-GAMES-FREE', amount: 550 })],
      ['free card, amount above max', 422, 'invalid_amount', () => post({ gift_card_code: 'NOVA-GAMES-FREE', amount: 50100 })],
      ['bad wait', 400, 'invalid_request', () => stack.call('POST', '/v1/orders?wait=99', { body: GOOD, headers: { 'idempotency-key': idemKey() } })],
    ];
    it.each(cases)('%s -> %d %s', async (_name, status, code, send) => {
      const before = await countOrders();
      const res = await send();
      expect(res.status).toBe(status);
      expect(res.body).toEqual({ errors: [{ code, message: expect.any(String) }], status: expect.any(String) });
      expect(res.body.errors[0].message.length).toBeGreaterThan(5);
      expect(await countOrders()).toBe(before);
    });

    it('invalid_amount uses the partner’s own wording: the allowed amounts, or range and step', async () => {
      expect((await post({ ...GOOD, amount: 2000 })).body.errors[0].message).toContain('1000, 2500, 5000, 10000');
      expect((await post({ gift_card_code: 'NOVA-GAMES-FREE', amount: 550 })).body.errors[0].message).toContain('between 500 and 50000 in steps of 100');
    });

    it('free card step edges: min, max and on-step amounts are accepted', async () => {
      for (const amount of [500, 50000, 600]) {
        expect((await post({ gift_card_code: 'NOVA-GAMES-FREE', amount })).status).toBe(202);
      }
    });
  });
});

describe('intake while Redis is down: 202 (the order is durable), the sweeper enqueues it later (invariant 4)', () => {
  it('accepts the order, then a worker with Redis completes it', async () => {
    const api = await startStack({ worker: false, env: { REDIS_URL: 'redis://127.0.0.1:1/0' } });
    try {
      const res = await api.call('POST', '/v1/orders', { body: GOOD, headers: { 'idempotency-key': idemKey('noredis') } });
      expect(res.status).toBe(202);
      const worker = await startStack({ api: false, db: api.db, sim: api.sim });
      try {
        const order = await waitFor('the sweeper to enqueue and the worker to complete', async () => {
          const r = await api.call('GET', `/v1/orders/${res.body.order.id}`);
          return r.body.order.status === 'completed' ? r.body.order : null;
        });
        expect(order.card).not.toBeNull();
      } finally {
        await worker.close();
      }
    } finally {
      await api.close();
    }
  });
});

describe('hostile nesting: a body nested thousands of levels deep is a 400, never a 500', () => {
  it.each([5_000, 8_000])('metadata nested %d levels', async (levels) => {
    const api = await startStack({ worker: false });
    try {
      const body = `{"gift_card_code":"ACME-BOOKS-FIXED","amount":2500,"metadata":{"a":${'['.repeat(levels)}${']'.repeat(levels)}}}`;
      const res = await api.call('POST', '/v1/orders', { body, headers: { 'idempotency-key': idemKey('deep') } });
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toEqual({ code: 'invalid_request', message: expect.stringContaining('nested at most 5 levels') });
    } finally {
      await api.close();
    }
  });
});
