import { waitFor } from '@cardpull/testing';
import { spawnApp, stopAllProcesses } from '../support/processes';
import { KEYS, idemKey, startApiApp, useStack, type ApiApp } from '../support/stack';

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

describe('security: the long-poll cap is counted across the fleet (issue 21)', () => {
  let second: ApiApp | undefined;
  const stack = useStack({ worker: false, env: { LONG_POLLS_PER_CLIENT: '2' }, beforeClose: () => Promise.all([second?.close(), stopAllProcesses()]) });
  beforeAll(async () => {
    second = await startApiApp(stack);
  });
  const order = async () => {
    const created = await stack.call('POST', '/v1/orders', { key: KEYS.shop, body: { gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000 }, headers: { 'idempotency-key': idemKey('poll') } });
    return created.body.order.id as string;
  };

  it('one wait on each of two APIs: a third wait of the client, on either API, is answered at once, marked capped', async () => {
    const id = await order();
    const waits = [stack.call('GET', `/v1/orders/${id}?wait=3`), second!.call('GET', `/v1/orders/${id}?wait=3`)];
    await new Promise((r) => setTimeout(r, 300));
    const third = await stack.call('GET', `/v1/orders/${id}?wait=3`);
    expect([third.status, third.headers['x-cardpull-wait-capped']]).toEqual([200, 'true']);
    const fourth = await second!.call('GET', `/v1/orders/${id}?wait=3`);
    expect(fourth.headers['x-cardpull-wait-capped']).toBe('true');
    const answered = await Promise.all(waits);
    expect(answered.map((a) => a.headers['x-cardpull-wait-capped'])).toEqual([undefined, undefined]);
    // Their slots are given back: the client may wait again, on either API.
    const again = await second!.call('GET', `/v1/orders/${id}?wait=1`);
    expect(again.headers['x-cardpull-wait-capped']).toBeUndefined();
  });

  it('the slots of an API process killed during its waits are held until their leases end (a wait plus 5 s), then free themselves', async () => {
    const id = await order();
    const proc = spawnApp('api', { ...stack.env, PORT: '0' }, { label: 'api (killed)' });
    const url = /listening on (http:\/\/\S+)/.exec(await proc.waitForLog(/listening on/))![1]!;
    // Two waits of 1 s on it (the client's whole allowance); it is killed before it answers them.
    const held = [1, 2].map(() => fetch(`${url}/v1/orders/${id}?wait=1`, { headers: { authorization: `Bearer ${KEYS.shop}` } }).catch(() => null));
    const slots = `${stack.redis.prefix}:{abuse}:polls:shop`;
    await waitFor('both waits under way', async () => (await stack.redis.client.zcard(slots)) === 2, 5_000);
    proc.kill('SIGKILL');
    await proc.exited;
    await Promise.all(held);
    // Its slots were not given back: the fleet still counts them...
    expect((await stack.call('GET', `/v1/orders/${id}?wait=1`)).headers['x-cardpull-wait-capped']).toBe('true');
    // ...until their leases end, without anyone giving them back.
    await waitFor('the dead process\'s slots freed', async () => (await second!.call('GET', `/v1/orders/${id}?wait=1`)).headers['x-cardpull-wait-capped'] === undefined, 20_000, 250);
  });
});
