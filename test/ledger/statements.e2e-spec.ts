import { costOf, discountInForce, discountPpm } from '@cardpull/partner-client';
import { ADMIN_ENV, ALICE, adminCall, login } from '../admin/support/admin';
import { KEYS, createOrder, useStack, waitForOrder } from '../support/stack';

/**
 * Issue 24, item 5: a client's daily statement from the ledger, as JSON or as CSV (`GET /v1/statements`,
 * scope `statements:read`), only its own orders; every client's as CSV for an operator.
 */
describe('daily statements', () => {
  const stack = useStack({ env: { ...ADMIN_ENV, PARTNER_CURRENCY: 'USD' } });
  const today = () => new Date().toISOString().slice(0, 10);
  const acme = (amount: number) => costOf(amount, discountPpm(discountInForce({ discount: 3.5, next_discounts: [{ value: 4, date: '2027-01-01T00:00:00.000+01:00' }, { value: 3, date: '2027-03-01T00:00:00.000+01:00' }] }, new Date()), 'percent'));

  let acmeOrder: string;
  beforeAll(async () => {
    for (const amount of [1000, 2500]) acmeOrder = (await waitForOrder(stack, (await createOrder(stack, { gift_card_code: 'ACME-BOOKS-FIXED', amount })).id)).id;
    await stack.sim.control.addFault({ endpoint: 'cards', mode: 'wrong_card', amount_delta: 100, gift_card_codes: ['NOVA-GAMES-FREE'], times: 1 });
    await waitForOrder(stack, (await createOrder(stack, { gift_card_code: 'NOVA-GAMES-FREE', amount: 3000 })).id);
  });

  it("JSON: the client's cards of the day per gift card (count, face value, cost), its surplus cards, in minor units", async () => {
    const res = await stack.call('GET', `/v1/statements?date=${today()}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      date: today(),
      client: 'shop',
      lines: [
        { gift_card_code: 'ACME-BOOKS-FIXED', currency: 'USD', cards: 2, face_value: 3500, cost: acme(1000) + acme(2500), surplus_cards: 0, surplus: 0, in_doubt: 0 },
        { gift_card_code: 'NOVA-GAMES-FREE', currency: 'USD', cards: 0, face_value: 0, cost: 0, surplus_cards: 1, surplus: costOf(3100, 20_000), in_doubt: 0 },
      ],
    });
  });

  it('CSV: a download with one line per gift card, the same figures', async () => {
    const res = await stack.call('GET', `/v1/statements?date=${today()}&format=csv`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="cardpull-statement-shop-${today()}.csv"`);
    expect(String(res.body).split('\r\n')).toEqual([
      'date,client,gift_card_code,currency,cards,face_value,cost,surplus_cards,surplus,in_doubt',
      `${today()},shop,ACME-BOOKS-FIXED,USD,2,3500,${acme(1000) + acme(2500)},0,0,0`,
      `${today()},shop,NOVA-GAMES-FREE,USD,0,0,0,1,${costOf(3100, 20_000)},0`,
      '',
    ]);
  });

  it("only the caller's own orders: another client's statement of the same day is empty; an earlier day is empty", async () => {
    expect((await stack.call('GET', `/v1/statements?date=${today()}`, { key: KEYS.other })).body).toEqual({ date: today(), client: 'other', lines: [] });
    expect((await stack.call('GET', '/v1/statements?date=2026-01-01')).body.lines).toEqual([]);
  });

  it('needs the statements:read scope; a bad or future date is a 400 naming the rule', async () => {
    expect((await stack.call('GET', `/v1/statements?date=${today()}`, { key: KEYS.noCards })).status).toBe(403);
    for (const date of ['2026-02-30', 'yesterday', '', '2999-01-01']) {
      const res = await stack.call('GET', `/v1/statements?date=${date}`);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].code).toBe('invalid_request');
    }
    expect((await stack.call('GET', `/v1/statements?date=${today()}&format=xml`)).status).toBe(400);
  });

  it("the order page shows the order's price as fixed at intake (face value, discount, cost, catalog snapshot) and its movements", async () => {
    const cookie = await login(stack, ALICE);
    const page = (await adminCall(stack, 'GET', `/admin/orders/${acmeOrder}`, { cookie, html: true })).text;
    const section = page.slice(page.indexOf('id="order-money"'));
    expect(section).toContain(`data-cost="${acme(2500)}"`);
    expect(section).toMatch(/data-discount-ppm="\d+"/);
    expect(section).toContain('Acme');
    expect([...section.matchAll(/data-movement="(\w+)"/g)].map((x) => x[1])).toEqual(['accepted', 'card_stored']);
  });

  it("an operator downloads every client's statement as CSV from the operations page", async () => {
    const cookie = await login(stack, ALICE);
    const page = await adminCall(stack, 'GET', '/admin', { cookie, html: true });
    expect(page.text).toMatch(/<a href="\/admin\/statements" data-statement="today" download>/);
    const csv = await adminCall(stack, 'GET', '/admin/statements', { cookie });
    expect(csv.status).toBe(200);
    expect(csv.text.split('\r\n').filter((l) => l.startsWith(`${today()},shop,`))).toHaveLength(2);
    expect((await adminCall(stack, 'GET', '/admin/statements')).status).not.toBe(200);
  });
});
