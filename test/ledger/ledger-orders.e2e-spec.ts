import { Client } from 'pg';
import { checkLedger, expectInvariants } from '@cardpull/testing';
import { costOf, discountInForce, discountPpm } from '@cardpull/partner-client';
import { createOrder, useStack, waitForOrder } from '../support/stack';

/**
 * Issue 24, items 1 and 2: each order's price is fixed when it is accepted (the discount in force, the cost,
 * the catalog snapshot), and its money moves in the ledger in the same transaction as the order change that
 * causes it: accepted (float to reserved), an unknown outcome (to in_doubt), the card stored (to spent at its
 * cost), a proven failure (back to float), a card beyond the order's (float to surplus). checkLedger holds
 * after each case, and every suite's expectInvariants checks it too.
 */
describe('the ledger moves with the orders', () => {
  const stack = useStack({
    env: { UNKNOWN_OUTCOME_WINDOW_MS: '20000', PARTNER_CURRENCY: 'USD', PARTNER_ACCOUNT: 'staging-main' },
    beforeClose: async (s) => {
      await expectInvariants(s);
      await pg.end();
    },
  });
  let pg: Client;
  beforeAll(async () => {
    pg = new Client({ connectionString: stack.db.url });
    await pg.connect();
  });
  afterEach(() => stack.sim.control.clearFaults());

  /** The order's movements in order: kind and legs (account: amount). */
  const movements = async (orderId: string) => {
    const { rows } = await pg.query<{ kind: string; legs: Record<string, string> }>(
      `SELECT t.kind, jsonb_object_agg(e.account, e.amount) AS legs FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
        WHERE t.order_id = $1 GROUP BY t.id, t.kind ORDER BY t.id`,
      [orderId],
    );
    return rows.map((r) => ({ kind: r.kind, legs: Object.fromEntries(Object.entries(r.legs).map(([k, v]) => [k, Number(v)])) }));
  };
  const acmeCost = (amount: number) => costOf(amount, discountPpm(discountInForce({ discount: 3.5, next_discounts: [{ value: 4, date: '2027-01-01T00:00:00.000+01:00' }, { value: 3, date: '2027-03-01T00:00:00.000+01:00' }] }, new Date()), 'percent'));
  const expectLedgerHolds = async () => expect((await checkLedger(stack.db.url)).problems).toEqual([]);

  it('an accepted order has its price fixed: the discount in force, the cost, the catalog snapshot it was accepted against', async () => {
    await stack.sim.control.addFault({ endpoint: 'cards', mode: 'latency', latency_ms: 1500, times: 1 });
    const { id } = await createOrder(stack, { gift_card_code: 'ACME-BOOKS-FIXED', amount: 2500 });
    const { rows } = await pg.query(
      `SELECT o.discount_ppm, o.cost, s.gift_card_code, s.name, s.discount, s.face_values, length(s.terms_digest) AS digest
         FROM orders o JOIN catalog_snapshots s ON s.id = o.catalog_snapshot WHERE o.id = $1`,
      [id],
    );
    expect(rows[0]).toMatchObject({ discount_ppm: 35_000, cost: acmeCost(2500), gift_card_code: 'ACME-BOOKS-FIXED', name: expect.any(String), discount: 3.5, digest: 64 });
    expect(acmeCost(2500)).toBe(2412); // 2500 less 3.5 % (87.5, rounded half up to 88)
    // While it is pulled, its cost is reserved: float to reserved, in the book's account and currency.
    const { rows: legs } = await pg.query(`SELECT e.account::text, e.amount, e.currency, e.partner_account FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id WHERE t.order_id = $1 ORDER BY e.account`, [id]);
    expect(legs).toEqual([
      { account: 'float', amount: '-2412', currency: 'USD', partner_account: 'staging-main' },
      { account: 'reserved', amount: '2412', currency: 'USD', partner_account: 'staging-main' },
    ]);
    await waitForOrder(stack, id);
  });

  it('a completed order: accepted, then card_stored moves its reservation to spent at its cost; the partner drew the same', async () => {
    const before = (await stack.sim.control.state()).balance;
    const { id } = await createOrder(stack, { gift_card_code: 'ACME-BOOKS-FIXED', amount: 5000 });
    expect((await waitForOrder(stack, id)).status).toBe('completed');
    const cost = acmeCost(5000);
    expect(await movements(id)).toEqual([
      { kind: 'accepted', legs: { float: -cost, reserved: cost } },
      { kind: 'card_stored', legs: { reserved: -cost, spent: cost } },
    ]);
    expect(Math.round(((await stack.sim.control.state()).balance - before) * 100)).toBe(-cost);
    await expectLedgerHolds();
  });

  it('an unknown outcome moves the reservation to in_doubt; the card found on the same ID takes it to spent', async () => {
    await stack.sim.control.addFault({ endpoint: 'cards', mode: 'error_after_issue', status: 502, gift_card_codes: ['NOVA-GAMES-FREE'], times: 1 });
    const { id } = await createOrder(stack, { gift_card_code: 'NOVA-GAMES-FREE', amount: 1000 });
    expect((await waitForOrder(stack, id)).status).toBe('completed');
    const cost = costOf(1000, 20_000); // 2 %
    expect(await movements(id)).toEqual([
      { kind: 'accepted', legs: { float: -cost, reserved: cost } },
      { kind: 'unknown', legs: { reserved: -cost, in_doubt: cost } },
      { kind: 'card_stored', legs: { in_doubt: -cost, spent: cost } },
    ]);
    await expectLedgerHolds();
  });

  it('a proven failure gives the reservation back to float', async () => {
    await stack.sim.control.addFault({ endpoint: 'cards', mode: 'error_before_issue', status: 404, error_code: 'gift_card_not_found', gift_card_codes: ['EURO-TRAVEL-REGION'], times: 1 });
    const { id } = await createOrder(stack, { gift_card_code: 'EURO-TRAVEL-REGION', amount: 2000 });
    expect((await waitForOrder(stack, id)).status).toBe('failed');
    const cost = costOf(2000, 50_000); // 5 %
    expect(await movements(id)).toEqual([
      { kind: 'accepted', legs: { float: -cost, reserved: cost } },
      { kind: 'failed', legs: { reserved: -cost, float: cost } },
    ]);
    await expectLedgerHolds();
  });

  it('a card that differs from its order is kept, and its cost goes from float to surplus; the order still holds its reservation', async () => {
    await stack.sim.control.addFault({ endpoint: 'cards', mode: 'wrong_card', amount_delta: 100, gift_card_codes: ['NOVA-GAMES-FREE'], times: 1 });
    const { id } = await createOrder(stack, { gift_card_code: 'NOVA-GAMES-FREE', amount: 3000 });
    expect((await waitForOrder(stack, id)).status).toBe('needs_attention');
    const cost = costOf(3000, 20_000);
    const { rows } = await pg.query(`SELECT id FROM cards WHERE order_id = $1`, [id]);
    expect(await movements(id)).toEqual([
      { kind: 'accepted', legs: { float: -cost, reserved: cost } },
      { kind: 'surplus', legs: { float: -costOf(3100, 20_000), surplus: costOf(3100, 20_000) } },
    ]);
    const { rows: tx } = await pg.query(`SELECT card_id FROM ledger_transactions WHERE order_id = $1 AND kind = 'surplus'`, [id]);
    expect(tx).toEqual([{ card_id: rows[0].id }]);
    await expectLedgerHolds();
  });

  it('a gift card without a discount costs its face value', async () => {
    const { id } = await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: 700 });
    await waitForOrder(stack, id);
    expect(await movements(id)).toEqual([
      { kind: 'accepted', legs: { float: -700, reserved: 700 } },
      { kind: 'card_stored', legs: { reserved: -700, spent: 700 } },
    ]);
  });
});
