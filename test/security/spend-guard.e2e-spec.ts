import { KEYS, idemKey, useStack } from '../support/stack';
import { ADMIN_ENV, ALICE, adminCall, login } from '../admin/support/admin';

/**
 * The spend guard (issue 11; issue 24: read from the ledger): per-client limits in SPEND_LIMITS, the largest
 * face value of one order and what one day's orders (UTC) reserved in the ledger (their cost), checked at
 * intake in the transaction that records the order. Beyond either, 422 spend_limit_exceeded naming the limit
 * and what remains; concurrent orders cannot both slip under the daily limit; a replay spends nothing; other
 * clients are not limited. NOVA-GAMES-FREE has 2 % off: a card of 1500 costs 1470.
 */
describe('security: the spend guard refuses orders above a client’s limits, also under concurrency', () => {
  // shop: at most 5000 per order and 10000 per day; no worker (the orders only need to be recorded).
  const stack = useStack({ worker: false, env: { ...ADMIN_ENV, SPEND_LIMITS: 'shop=5000/10000' } });
  const order = (amount: number, key = KEYS.shop, idempotencyKey = idemKey('spend')) =>
    stack.call('POST', '/v1/orders', { key, body: { gift_card_code: 'NOVA-GAMES-FREE', amount }, headers: { 'idempotency-key': idempotencyKey } });

  it('an order above the largest order is refused, naming the limit', async () => {
    const res = await order(6000);
    expect([res.status, res.body.errors?.[0]?.code]).toEqual([422, 'spend_limit_exceeded']);
    expect(res.body.errors[0].message).toContain('largest order (5000');
  });

  it('10 concurrent orders of 1500 (cost 1470) against a day of 10000: exactly 6 accepted, the others refused with what remains; a replay spends nothing', async () => {
    const keys = Array.from({ length: 10 }, () => idemKey('burst'));
    const answers = await Promise.all(keys.map((k) => order(1500, KEYS.shop, k)));
    const accepted = answers.filter((a) => a.status === 202);
    const refused = answers.filter((a) => a.status === 422);
    expect([accepted.length, refused.length]).toEqual([6, 4]);
    for (const r of refused) {
      expect(r.body.errors[0]).toEqual({ code: 'spend_limit_exceeded', message: expect.stringContaining("reserved 8820 of its daily limit 10000 (SPEND_LIMITS, at cost): 1180 remains, less than this order's cost 1470") });
    }
    // A replay of an accepted order is answered (200) and counts nothing.
    const acceptedKey = keys[answers.indexOf(accepted[0]!)]!;
    expect((await order(1500, KEYS.shop, acceptedKey)).status).toBe(200);
    expect((await order(1000)).status).toBe(202); // cost 980: 9800 reserved
    const full = await order(500); // cost 490
    expect([full.status, full.body.errors?.[0]?.code]).toEqual([422, 'spend_limit_exceeded']);
    expect(full.body.errors[0].message).toContain('reserved 9800 of its daily limit 10000');
  });

  it('another client has no limit', async () => {
    expect((await order(9000, KEYS.other)).status).toBe(202);
  });

  it('the operations page shows each limited client: ordered today, daily limit, remaining, largest order', async () => {
    const page = await adminCall(stack, 'GET', '/admin', { cookie: await login(stack, ALICE) });
    expect(page.status).toBe(200);
    const section = page.text.slice(page.text.indexOf('id="spend"'));
    expect(section).toContain('<tr><td>shop</td><td>9800</td><td>10000</td><td>200</td><td>5000</td></tr>');
    expect(section).not.toContain('<td>other</td>');
  });
});
