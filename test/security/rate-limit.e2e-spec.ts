import { KEYS, idemKey, startApiApp, useStack, type ApiApp, type Stack } from '../support/stack';

describe('security: per-client rate limiting answers 429 (RATE_LIMIT_PER_CLIENT per RATE_LIMIT_WINDOW_MS)', () => {
  const stack = useStack({ worker: false, env: { RATE_LIMIT_PER_CLIENT: '5', RATE_LIMIT_WINDOW_MS: '3000' } });

  it('the sixth request of a client in the window gets 429 in the envelope with Retry-After; other clients are not affected', async () => {
    const statuses: number[] = [];
    let limited: Awaited<ReturnType<Stack['call']>> | undefined;
    for (let i = 0; i < 7; i++) {
      const res = await stack.call('GET', '/v1/orders?limit=1');
      statuses.push(res.status);
      if (res.status === 429) limited ??= res;
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect(limited!.body).toEqual({ errors: [{ code: 'too_many_requests', message: expect.any(String) }], status: 'too_many_requests' });
    expect(Number(limited!.headers['retry-after'])).toBeGreaterThan(0);
    // The limit is per client, not per address: another client from the same address goes on.
    expect((await stack.call('GET', '/v1/orders?limit=1', { key: KEYS.other })).status).toBe(200);
    // A throttled order is not stored.
    const post = await stack.call('POST', '/v1/orders', { body: { gift_card_code: 'FAST-FREE', amount: 100 }, headers: { 'idempotency-key': idemKey() } });
    expect(post.status).toBe(429);
    const own = await stack.call('GET', '/v1/orders', { key: KEYS.other });
    expect(own.body.orders).toEqual([]);
  });

  it('the window passes, the client is served again', async () => {
    await new Promise((r) => setTimeout(r, 3_200));
    expect((await stack.call('GET', '/v1/orders?limit=1')).status).toBe(200);
  });
});

describe('security: the per-client rate limit is counted across the fleet (issue 21)', () => {
  // Two API processes on one Redis: each would allow the whole limit if it counted on its own.
  let second: ApiApp | undefined;
  const stack = useStack({ worker: false, env: { RATE_LIMIT_PER_CLIENT: '5', RATE_LIMIT_WINDOW_MS: '60000' }, beforeClose: () => second?.close() });
  beforeAll(async () => {
    second = await startApiApp(stack);
  });

  it('3 requests on one API and 3 on the other: the sixth of the client is refused with 429, on either API', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await stack.call('GET', '/v1/orders?limit=1')).status);
    for (let i = 0; i < 3; i++) statuses.push((await second!.call('GET', '/v1/orders?limit=1')).status);
    statuses.push((await stack.call('GET', '/v1/orders?limit=1')).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    // Still per client: another client goes on, on both.
    expect((await stack.call('GET', '/v1/orders?limit=1', { key: KEYS.other })).status).toBe(200);
    expect((await second!.call('GET', '/v1/orders?limit=1', { key: KEYS.other })).status).toBe(200);
  });
});
