import {
  CallbackVerificationError,
  CardpullClient,
  CardpullError,
  CardpullNetworkError,
  ForbiddenError,
  GiftCardNotFoundError,
  IdempotencyKeyInvalidError,
  IdempotencyKeyReusedError,
  InvalidAmountError,
  InvalidRequestError,
  OrderNotFoundError,
  TooManyRequestsError,
  UnauthorizedError,
  verifyCallback,
  type CardpullClientOptions,
  type Order,
} from '@cardpull/client';
import { waitFor } from '@cardpull/testing';
import { startReceiver } from '../support/receiver';
import { KEYS, idemKey, insertOrder, startStack, useStack, type Stack } from '../support/stack';
import { recordingFetch, startFront } from './support';

const SHOP_SECRET = 'shop-callback-secret-0001';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** Retries without long pauses: the suites prove the retries, not the waiting. */
const QUICK = { attempts: 4, baseDelayMs: 20, maxDelayMs: 100 };

/** What a call rejected with (the test fails if it resolved). */
async function failureOf(promise: Promise<unknown>): Promise<CardpullError> {
  const outcome = await promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected a failure, got ${JSON.stringify(outcome.value)}`);
  return outcome.error as CardpullError;
}

describe('CardpullClient against the real API, worker and simulator', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const stack = useStack({ env: { CALLBACK_SECRETS: `shop:${SHOP_SECRET}` } });
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
  });
  const client = (o: Partial<CardpullClientOptions> = {}) => new CardpullClient({ baseUrl: stack.apiUrl, apiKey: KEYS.shop, retry: QUICK, ...o });

  it('createOrder makes the Idempotency-Key (a random UUID) when none is given, and sends the one given otherwise', async () => {
    const auto = await client().createOrder({ gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000, mode: 'async' });
    expect(auto.idempotency_key).toMatch(UUID);
    expect(auto.status).toBe('pending');
    const key = idemKey('given');
    const given = await client().createOrder({ gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000, mode: 'async' }, { idempotencyKey: key });
    expect(given.idempotency_key).toBe(key);
    expect(given.id).not.toBe(auto.id);
    // The same key and body again: the same order (the API's replay), never a second one.
    expect((await client().createOrder({ gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000, mode: 'async' }, { idempotencyKey: key })).id).toBe(given.id);
  });

  it('wait: createOrder holds until the order is final and answers it with its card (?wait= on the POST); getOrder waits for an async order', async () => {
    const seen = recordingFetch();
    const done = await client({ fetch: seen.fetch }).createOrder({ gift_card_code: 'ACME-BOOKS-FIXED', amount: 2500 }, { wait: 20 });
    expect(done.status).toBe('completed');
    expect(done.card?.code).toMatch(/^[A-Z0-9]{16}$/);
    expect(seen.calls[0]).toEqual({ method: 'POST', path: '/v1/orders?wait=20', status: expect.any(Number) });

    const pending = await client().createOrder({ gift_card_code: 'NOVA-GAMES-FREE', amount: 800, mode: 'async' });
    expect(pending.status).toBe('pending');
    const completed = await client().getOrder(pending.id, { wait: 20 });
    expect([completed.id, completed.status]).toEqual([pending.id, 'completed']);
    expect(completed.card?.code).toMatch(/^[A-Z0-9]{16}$/);
    expect((await client().getOrder(pending.id)).card?.code).toBe(completed.card?.code);
  });

  it('an answer lost on the way back is retried with the same Idempotency-Key: the API keeps one order and the retry answers it (200 replay)', async () => {
    const front = await startFront(stack.apiUrl);
    try {
      front.script.push('lose-answer', 'reset', '503');
      const order = await client({ baseUrl: front.url }).createOrder({ gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000, mode: 'async' });
      const posts = front.seen.filter((r) => r.method === 'POST');
      expect(posts.map((r) => [r.action, r.apiStatus])).toEqual([
        ['lose-answer', 202], // created, but the answer never reached the client
        ['reset', undefined],
        ['503', undefined],
        ['forward', 200], // the replay: the same order
      ]);
      expect(new Set(posts.map((r) => r.idempotencyKey))).toEqual(new Set([order.idempotency_key]));
      expect(order.idempotency_key).toMatch(UUID);
      const list = await stack.call('GET', '/v1/orders?limit=100');
      expect(list.body.orders.filter((o: Order) => o.idempotency_key === order.idempotency_key).map((o: Order) => o.id)).toEqual([order.id]);
    } finally {
      await front.close();
    }
  });

  it('when every try fails, the error is a CardpullNetworkError carrying the Idempotency-Key, and getOrderByIdempotencyKey then finds the stored order', async () => {
    const front = await startFront(stack.apiUrl);
    try {
      front.script.push('lose-answer', 'lose-answer', 'lose-answer');
      const error = await failureOf(client({ baseUrl: front.url, retry: { ...QUICK, attempts: 3 } }).createOrder({ gift_card_code: 'FAST-FREE', amount: 300, mode: 'async' }));
      expect(error).toBeInstanceOf(CardpullNetworkError);
      expect([error.code, error.status]).toEqual(['network_error', 0]);
      expect(error.idempotencyKey).toMatch(UUID);
      expect(front.seen.map((r) => [r.idempotencyKey, r.apiStatus])).toEqual([
        [error.idempotencyKey, 202],
        [error.idempotencyKey, 200],
        [error.idempotencyKey, 200],
      ]);
      const found = await client().getOrderByIdempotencyKey(error.idempotencyKey!);
      expect([found.idempotency_key, found.gift_card_code, found.amount]).toEqual([error.idempotencyKey, 'FAST-FREE', 300]);
    } finally {
      await front.close();
    }
  });

  it("a 5xx that is not the API's envelope is retried; when the tries run out it is a CardpullError (code http_<status>, the raw body)", async () => {
    const front = await startFront(stack.apiUrl);
    try {
      front.script.push('503', '503');
      const error = await failureOf(client({ baseUrl: front.url, retry: { ...QUICK, attempts: 2 } }).getOrder(crypto.randomUUID()));
      expect(error.constructor).toBe(CardpullError);
      expect([error.code, error.status, error.body]).toEqual(['http_503', 503, expect.stringContaining('503 Service Unavailable')]);
      expect(front.seen).toHaveLength(2);
    } finally {
      await front.close();
    }
  });

  it('listOrders iterates every page through the cursors, newest first, and honours the filters', async () => {
    // The nocards client has no other order in this suite.
    const mine = new CardpullClient({ baseUrl: stack.apiUrl, apiKey: KEYS.noCards, retry: QUICK });
    const created: Order[] = [];
    for (let i = 0; i < 7; i++) created.push(await mine.createOrder({ gift_card_code: i % 2 ? 'FAST-FREE' : 'ACME-BOOKS-FIXED', amount: i % 2 ? 100 + i : 1000, mode: 'async' }));
    const seen = recordingFetch();
    const listing = new CardpullClient({ baseUrl: stack.apiUrl, apiKey: KEYS.noCards, fetch: seen.fetch });
    const all: Order[] = [];
    for await (const order of listing.listOrders({ pageSize: 3 })) all.push(order);
    expect(all.map((o) => o.id)).toEqual(created.map((o) => o.id).reverse());
    expect(seen.calls.map((c) => c.path.replace(/cursor=[^&]+/, 'cursor=…'))).toEqual(['/v1/orders?limit=3', '/v1/orders?limit=3&cursor=…', '/v1/orders?limit=3&cursor=…']);
    const fast: string[] = [];
    for await (const order of listing.listOrders({ gift_card_code: 'FAST-FREE', pageSize: 2 })) fast.push(order.id);
    expect(fast).toEqual(created.filter((o) => o.gift_card_code === 'FAST-FREE').map((o) => o.id).reverse());
  });

  it("getOrderByIdempotencyKey: your order by your key (any visible ASCII, URL-encoded); another client never sees it, and that client's own order with the same key is its own", async () => {
    const key = `cart/${idemKey()}?x=1&y=%20#frag`;
    const shop = client();
    const other = new CardpullClient({ baseUrl: stack.apiUrl, apiKey: KEYS.other, retry: QUICK });
    const reader = new CardpullClient({ baseUrl: stack.apiUrl, apiKey: KEYS.readOnly, retry: QUICK });
    const order = await shop.createOrder({ gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000, mode: 'async' }, { idempotencyKey: key });
    expect((await shop.getOrderByIdempotencyKey(key)).id).toBe(order.id);

    // Another client (and another client's read-only key) asking for the shop's key: 404, in the usual envelope.
    for (const stranger of [other, reader]) {
      const refused = await failureOf(stranger.getOrderByIdempotencyKey(key));
      expect(refused).toBeInstanceOf(OrderNotFoundError);
      expect([refused.status, refused.body]).toEqual([404, { errors: [{ code: 'order_not_found', message: expect.any(String) }], status: 'not_found' }]);
    }
    const raw = await stack.call('GET', `/v1/orders/by-idempotency-key/${encodeURIComponent(key)}`, { key: KEYS.other });
    expect([raw.status, raw.body.errors[0].code]).toEqual([404, 'order_not_found']);

    // The other client's own order with the same key is found for it; the shop still finds its own.
    const theirs = await other.createOrder({ gift_card_code: 'FAST-FREE', amount: 150, mode: 'async' }, { idempotencyKey: key });
    expect(theirs.id).not.toBe(order.id);
    expect((await other.getOrderByIdempotencyKey(key)).id).toBe(theirs.id);
    expect((await shop.getOrderByIdempotencyKey(key)).id).toBe(order.id);

    expect(await failureOf(shop.getOrderByIdempotencyKey(idemKey('never-used')))).toBeInstanceOf(OrderNotFoundError);
    const invalid = await failureOf(shop.getOrderByIdempotencyKey('has a space'));
    expect([invalid instanceof IdempotencyKeyInvalidError, invalid.status]).toEqual([true, 400]);
  });

  it('each error answer is its own class with code, message, status and the raw body; a 4xx is not retried', async () => {
    const seen = recordingFetch();
    const shop = client({ fetch: seen.fetch });
    const invalid = await failureOf(shop.createOrder({ gift_card_code: 'ACME-BOOKS-FIXED', amount: 'x' as never }));
    expect(invalid).toBeInstanceOf(InvalidRequestError);
    expect(invalid).toBeInstanceOf(CardpullError);
    expect([invalid.code, invalid.status, invalid.message, invalid.name]).toEqual(['invalid_request', 400, 'amount: must be a number', 'InvalidRequestError']);
    expect(invalid.body).toEqual({ errors: [{ code: 'invalid_request', message: 'amount: must be a number' }], status: 'bad_request' });
    expect(invalid.idempotencyKey).toMatch(UUID);
    expect(seen.calls).toHaveLength(1);

    expect(await failureOf(shop.getOrder(crypto.randomUUID()))).toBeInstanceOf(OrderNotFoundError);
    expect(await failureOf(shop.createOrder({ gift_card_code: 'NOPE-CARD', amount: 1000 }))).toBeInstanceOf(GiftCardNotFoundError);
    const amount = await failureOf(shop.createOrder({ gift_card_code: 'ACME-BOOKS-FIXED', amount: 1234 }));
    expect([amount instanceof InvalidAmountError, amount.status]).toEqual([true, 422]);
    const key = idemKey('reuse');
    await shop.createOrder({ gift_card_code: 'FAST-FREE', amount: 120, mode: 'async' }, { idempotencyKey: key });
    const reused = await failureOf(shop.createOrder({ gift_card_code: 'FAST-FREE', amount: 121, mode: 'async' }, { idempotencyKey: key }));
    expect([reused instanceof IdempotencyKeyReusedError, reused.status]).toEqual([true, 409]);

    const stranger = await failureOf(client({ apiKey: 'not-a-key-00001' }).getOrder(crypto.randomUUID()));
    expect([stranger instanceof UnauthorizedError, stranger.status, stranger.code]).toEqual([true, 401, 'unauthorized']);
    const readOnly = await failureOf(client({ apiKey: KEYS.readOnly }).createOrder({ gift_card_code: 'FAST-FREE', amount: 100 }));
    expect([readOnly instanceof ForbiddenError, readOnly.status, readOnly.code]).toEqual([true, 403, 'forbidden']);
    expect(seen.calls.every((c) => c.status !== 'failed')).toBe(true);
    expect(seen.calls).toHaveLength(6);
  });

  it('verifyCallback accepts the callbacks the worker really sends (order.completed, order.failed) and refuses a tampered body, a stale timestamp and a wrong secret', async () => {
    const completed = await client().createOrder({ gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000, callback_url: `${receiver.url}/hooks/cardpull` }, { wait: 20 });
    const failed = await insertOrder(stack, { giftCardCode: 'ACME-BOOKS-FIXED', amount: 1234, client: 'shop', callbackUrl: `${receiver.url}/hooks/cardpull` });
    const callbackOf = (id: string) => waitFor(`the callback of ${id}`, () => receiver.received.find((r) => r.json?.order?.id === id));
    const cb = await callbackOf(completed.id);

    const event = verifyCallback(cb.body, cb.headers, SHOP_SECRET);
    expect(event.type).toBe('order.completed');
    if (event.type !== 'order.completed') throw new Error('narrowing');
    expect([event.status, event.order.id, event.order.card?.code]).toEqual(['completed', completed.id, completed.card?.code]);
    expect(event.id).toBe(cb.headers['x-cardpull-event-id']);
    // A Buffer body and fetch's Headers do as well.
    expect(verifyCallback(Buffer.from(cb.body), new Headers(cb.headers as Record<string, string>), SHOP_SECRET).id).toBe(event.id);

    const failedCb = await callbackOf(failed.id);
    const failedEvent = verifyCallback(failedCb.body, failedCb.headers, SHOP_SECRET);
    if (failedEvent.type === 'balance.low' || failedEvent.type === 'catalog.changed') throw new Error('narrowing');
    expect([failedEvent.type, failedEvent.status, failedEvent.order.error?.code]).toEqual(['order.failed', 'failed', 'invalid_amount']);

    const refusal = (f: () => unknown) => {
      try {
        f();
      } catch (error) {
        expect(error).toBeInstanceOf(CallbackVerificationError);
        return (error as CallbackVerificationError).code;
      }
      throw new Error('expected a refusal');
    };
    expect(refusal(() => verifyCallback(cb.body.replace('"amount":1000', '"amount":9000'), cb.headers, SHOP_SECRET))).toBe('invalid_signature');
    expect(refusal(() => verifyCallback(cb.body, cb.headers, 'another-secret-00001'))).toBe('invalid_signature');
    const later = Number(cb.headers['x-cardpull-timestamp']) * 1000 + 301_000;
    expect(refusal(() => verifyCallback(cb.body, cb.headers, SHOP_SECRET, { now: later }))).toBe('stale_timestamp');
    expect(verifyCallback(cb.body, cb.headers, SHOP_SECRET, { now: later, toleranceSeconds: 600 }).id).toBe(event.id);
    // A timestamp moved forward (to pass the window) breaks the signature.
    expect(refusal(() => verifyCallback(cb.body, { ...cb.headers, 'x-cardpull-timestamp': String(Math.floor(later / 1000)) }, SHOP_SECRET, { now: later }))).toBe('invalid_signature');
    expect(refusal(() => verifyCallback(cb.body, { ...cb.headers, 'x-cardpull-signature': undefined }, SHOP_SECRET))).toBe('missing_header');
    // Rotation: the old and the new secret side by side accept it.
    expect(verifyCallback(cb.body, cb.headers, ['the-old-secret-00001', SHOP_SECRET]).id).toBe(event.id);
  });
});

describe('a 429 of the per-client rate limit is waited out (its Retry-After) and the call tried again', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ worker: false, env: { RATE_LIMIT_PER_CLIENT: '2', RATE_LIMIT_WINDOW_MS: '3000' } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('TooManyRequestsError carries the Retry-After; with tries left the client waits it out and succeeds', async () => {
    await waitFor('the rate limit to refuse', async () => (await stack.call('GET', '/v1/orders?limit=1')).status === 429, 5_000, 0);
    const once = await failureOf(new CardpullClient({ baseUrl: stack.apiUrl, apiKey: KEYS.shop, retry: { attempts: 1 } }).listOrders().next());
    expect(once).toBeInstanceOf(TooManyRequestsError);
    expect([once.status, once.code]).toEqual([429, 'too_many_requests']);
    expect(once.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    // A Retry-After longer than the client will wait: thrown at once, not slept on.
    const seenImpatient = recordingFetch();
    const impatient = new CardpullClient({ baseUrl: stack.apiUrl, apiKey: KEYS.shop, fetch: seenImpatient.fetch, retry: { maxRetryAfterMs: 100 } });
    expect(await failureOf(impatient.listOrders().next())).toBeInstanceOf(TooManyRequestsError);
    expect(seenImpatient.calls.map((c) => c.status)).toEqual([429]);

    const seen = recordingFetch();
    const patient = new CardpullClient({ baseUrl: stack.apiUrl, apiKey: KEYS.shop, fetch: seen.fetch, retry: { baseDelayMs: 10 } });
    const first = await patient.listOrders().next();
    expect(first.done).toBe(true); // no order in this stack: the list is empty, but it answered
    expect(seen.calls.map((c) => c.status)).toEqual([429, 200]);
  });
});
