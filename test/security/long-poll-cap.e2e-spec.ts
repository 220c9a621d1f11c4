import { KEYS, idemKey, useStack } from '../support/stack';

/**
 * Long-polls are capped per client (issue 11, opening 7): a client may hold at most LONG_POLLS_PER_CLIENT
 * `?wait=` requests at a time in one API process; beyond, the order is answered at once, marked
 * `X-Cardpull-Wait-Capped: true`, so one client cannot hold every connection of the API.
 */
describe('security: ?wait= long-polls are capped per client', () => {
  // No worker: the order stays pending, so every wait lasts its whole time unless it is capped.
  const stack = useStack({ worker: false, env: { LONG_POLLS_PER_CLIENT: '2' } });

  it('the third wait of one client is answered at once, marked capped; once the first two are answered it may wait again', async () => {
    const created = await stack.call('POST', '/v1/orders', { key: KEYS.shop, body: { gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000 }, headers: { 'idempotency-key': idemKey('poll') } });
    const id = created.body.order.id;
    const waits = [stack.call('GET', `/v1/orders/${id}?wait=3`, { key: KEYS.shop }), stack.call('GET', `/v1/orders/${id}?wait=3`, { key: KEYS.shop })];
    await new Promise((r) => setTimeout(r, 300));
    const third = await stack.call('GET', `/v1/orders/${id}?wait=3`, { key: KEYS.shop });
    expect([third.status, third.headers['x-cardpull-wait-capped'], third.body.order.status]).toEqual([200, 'true', 'pending']);
    const answered = await Promise.all(waits);
    expect(answered.map((a) => [a.status, a.headers['x-cardpull-wait-capped']])).toEqual([
      [200, undefined],
      [200, undefined],
    ]);
    // Once those two are answered, the client may wait again.
    const again = await stack.call('GET', `/v1/orders/${id}?wait=1`, { key: KEYS.shop });
    expect(again.headers['x-cardpull-wait-capped']).toBeUndefined();
  });
});
