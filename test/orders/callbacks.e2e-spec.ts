import { Client } from 'pg';
import { CALLBACK_HEADERS, verifyCallback } from '@cardpull/orders';
import { waitFor } from '@cardpull/testing';
import { startReceiver } from '../support/receiver';
import { request } from 'undici';
import { LOCAL_DEFAULTS } from '@cardpull/config';
import { KEYS, idemKey, insertOrder, startStack, useStack, waitForOrder, type Stack } from '../support/stack';

const SHOP_SECRET = 'shop-callback-secret-0001';
const NOCARDS_SECRET = 'nocards-callback-secret-01';
/** The local development client's key (the local profile's API_KEYS). */
const LOCAL_DEV_KEY = LOCAL_DEFAULTS.API_KEYS.split(':')[1]!;

describe('caller callbacks: outbox in the transition’s transaction, signed, retried, visible', () => {
  let stack: Stack;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let pg: Client;
  beforeAll(async () => {
    receiver = await startReceiver();
    stack = await startStack({
      env: {
        CALLBACK_SECRETS: `shop:${SHOP_SECRET},nocards:${NOCARDS_SECRET}`,
        CALLBACK_URLS: `nocards=${receiver.url}/nocards-default`,
        CALLBACK_BACKOFF_MS: '100',
        CALLBACK_MAX_ATTEMPTS: '3',
        UNKNOWN_OUTCOME_WINDOW_MS: '1000',
      },
    });
    pg = new Client({ connectionString: stack.db.url });
    await pg.connect();
  });
  afterAll(async () => {
    await pg?.end();
    await stack?.close();
    await receiver?.close();
  });
  const callbacksFor = (orderId: string) => receiver.received.filter((r) => r.json.order?.id === orderId);

  it('order.completed: signed (timestamp + HMAC), with an event id, and the card for a client with cards:read', async () => {
    const res = await stack.call('POST', '/v1/orders', {
      body: { gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000, callback_url: `${receiver.url}/hooks/shop` },
      headers: { 'idempotency-key': idemKey() },
    });
    const order = await waitForOrder(stack, res.body.order.id);
    const [cb] = await waitFor('the callback', () => (callbacksFor(order.id).length ? callbacksFor(order.id) : null));
    expect(cb!.path).toBe('/hooks/shop');
    expect(cb!.json).toMatchObject({ type: 'order.completed', status: 'completed', id: expect.any(String) });
    expect(cb!.headers[CALLBACK_HEADERS.eventId]).toBe(cb!.json.id);
    expect(verifyCallback(SHOP_SECRET, String(cb!.headers[CALLBACK_HEADERS.timestamp]), cb!.body, String(cb!.headers[CALLBACK_HEADERS.signature]))).toBe(true);
    expect(verifyCallback('another-secret-xxxx', String(cb!.headers[CALLBACK_HEADERS.timestamp]), cb!.body, String(cb!.headers[CALLBACK_HEADERS.signature]))).toBe(false);
    expect(cb!.json.order.card.code).toBe(order.card.code);
    // The delivery is recorded once the receiver has answered: wait for it.
    const rows = await waitFor('the delivery to be recorded', async () => {
      const { rows } = await pg.query('SELECT e.state, o.completed_at = e.created_at AS same_tx FROM callback_events e JOIN orders o ON o.id = e.order_id WHERE o.id = $1', [order.id]);
      return rows[0]?.state === 'delivered' ? rows : null;
    });
    expect(rows).toEqual([{ state: 'delivered', same_tx: true }]);
  });

  it('a client without cards:read gets the card masked, at its default callback URL', async () => {
    const res = await stack.call('POST', '/v1/orders', { key: KEYS.noCards, body: { gift_card_code: 'NOVA-GAMES-FREE', amount: 800 }, headers: { 'idempotency-key': idemKey() } });
    const [cb] = await waitFor('the callback', () => (callbacksFor(res.body.order.id).length ? callbacksFor(res.body.order.id) : null));
    expect(cb!.path).toBe('/nocards-default');
    expect(cb!.json.order.card.code).toMatch(/^\*+[A-Z0-9]{4}$/);
    expect(verifyCallback(NOCARDS_SECRET, String(cb!.headers[CALLBACK_HEADERS.timestamp]), cb!.body, String(cb!.headers[CALLBACK_HEADERS.signature]))).toBe(true);
  });

  it('a failing receiver is retried with backoff; every attempt is recorded and shown on the order', async () => {
    receiver.script.push(500, 503);
    const res = await stack.call('POST', '/v1/orders', {
      body: { gift_card_code: 'FAST-FREE', amount: 250, callback_url: `${receiver.url}/flaky` },
      headers: { 'idempotency-key': idemKey() },
    });
    await waitFor('three deliveries', () => callbacksFor(res.body.order.id).length === 3);
    const deliveries = await waitFor('the delivery record', async () => {
      const { rows } = await pg.query('SELECT d.http_status FROM callback_deliveries d JOIN callback_events e ON e.id = d.event_id WHERE e.order_id = $1 ORDER BY d.id', [res.body.order.id]);
      return rows.length === 3 ? rows : null;
    });
    expect(deliveries.map((d: any) => d.http_status)).toEqual([500, 503, 200]);
    expect(new Set(callbacksFor(res.body.order.id).map((c) => c.json.id)).size).toBe(1); // same event id every time
  });

  it('gives up after CALLBACK_MAX_ATTEMPTS: the event is marked failed', async () => {
    receiver.script.push(500, 500, 500);
    const res = await stack.call('POST', '/v1/orders', { body: { gift_card_code: 'FAST-FREE', amount: 260, callback_url: `${receiver.url}/down` }, headers: { 'idempotency-key': idemKey() } });
    const state = await waitFor('the event to be given up', async () => {
      const { rows } = await pg.query('SELECT state, attempts FROM callback_events WHERE order_id = $1', [res.body.order.id]);
      return rows[0]?.state === 'failed' ? rows[0] : null;
    });
    expect(state.attempts).toBe(3);
  });

  it('order.failed and order.needs_attention are announced too', async () => {
    const failed = await insertOrder(stack, { giftCardCode: 'ACME-BOOKS-FIXED', amount: 1234, client: 'nocards' });
    const attention = await insertOrder(stack, { giftCardCode: 'NOVA-GAMES-FREE', amount: 990, client: 'nocards' });
    await pg.query('UPDATE orders SET callback_url = $1 WHERE id = ANY($2::uuid[])', [`${receiver.url}/direct`, [failed.id, attention.id]]);
    await stack.sim.control.addFault({ endpoint: 'cards', mode: 'error_before_issue', status: 503, request_ids: [attention.requestId] } as never);
    const got = await waitFor('both callbacks', () => {
      const types = [...callbacksFor(failed.id), ...callbacksFor(attention.id)].map((c) => c.json.type).sort();
      return types.length === 2 ? types : null;
    }, 20_000);
    expect(got).toEqual(['order.failed', 'order.needs_attention']);
    await stack.sim.control.clearFaults();
  });

  it('a per-order callback_url from a client without a callback secret is refused (it could not be signed)', async () => {
    const res = await stack.call('POST', '/v1/orders', { key: KEYS.other, body: { gift_card_code: 'FAST-FREE', amount: 100, callback_url: 'https://x.example.com/h' }, headers: { 'idempotency-key': idemKey() } });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].code).toBe('callback_not_configured');
  });
});

/**
 * Issue 21: callbacks can be tried under `npm start` without setting anything. Under the local profile the
 * local development client (local-dev-key) has a callback secret and its callbacks go, by default, to the
 * simulator's receiver, which checks their signature and lists them at GET /_callbacks.
 */
describe('callbacks of the local development client under the local profile', () => {
  // CALLBACK_URLS and CALLBACK_SECRETS unset: only the local profile's defaults.
  const stack = useStack({ env: { API_KEYS: `local:${LOCAL_DEV_KEY}` } });

  it('an order of the local client with no callback configured is delivered to the simulator\'s receiver, signed with the local secret', async () => {
    const res = await stack.call('POST', '/v1/orders', { key: LOCAL_DEV_KEY, body: { gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000 }, headers: { 'idempotency-key': idemKey('local') } });
    expect(res.status).toBe(202);
    const order = await waitForOrder(stack, res.body.order.id, undefined, 20_000, LOCAL_DEV_KEY);
    expect(order.status).toBe('completed');
    const got = await waitFor('the callback at the simulator', async () => {
      const { callbacks } = (await (await request(`${stack.sim.baseUrl}/_callbacks`)).body.json()) as { callbacks: any[] };
      return callbacks.find((c) => c.event?.order?.id === order.id) ?? null;
    });
    expect(got).toMatchObject({ signature: 'valid', event_type: 'order.completed', event: { type: 'order.completed', status: 'completed' } });
    // The local client may also name a callback_url of its own: it has a secret (no 422 callback_not_configured).
    const own = await stack.call('POST', '/v1/orders', {
      key: LOCAL_DEV_KEY,
      body: { gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000, callback_url: `${stack.sim.baseUrl}/_callbacks` },
      headers: { 'idempotency-key': idemKey('local') },
    });
    expect(own.status).toBe(202);
  });
});
