import { Client } from 'pg';
import { createOrder, useStack } from '../support/stack';

/**
 * Issue 24's ledger, a hole the chaos run found: an attempt whose outcome was unknown (its order's money in
 * in_doubt) settled by a card that is not the order's (a mismatch: the attempt `succeeded`, the card is kept
 * as a surplus at its own cost, the order needs attention). The ID's outcome is known then: the order's money
 * goes back to reserved. A re-send of the same ID (`sent` again) settles nothing: it stays in doubt. Played on
 * the attempt's row, as the card store and the step's take write it (no worker: nothing else moves it).
 */
describe('the ledger: an attempt that leaves unknown', () => {
  const stack = useStack({ worker: false, beforeClose: () => pg.end() });
  let pg: Client;
  beforeAll(async () => {
    pg = new Client({ connectionString: stack.db.url });
    await pg.connect();
  });

  const held = async (orderId: string) => {
    const { rows } = await pg.query(
      `SELECT e.account::text, sum(e.amount)::int AS amount FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
        WHERE t.order_id = $1 AND e.account IN ('reserved', 'in_doubt') GROUP BY e.account HAVING sum(e.amount) <> 0`,
      [orderId],
    );
    return rows;
  };
  const setState = (requestId: string, state: string) =>
    pg.query(`UPDATE attempts SET state = $2::"AttemptState", unknown_since = COALESCE(unknown_since, CASE WHEN $2::text = 'unknown' THEN now() END) WHERE request_id = $1`, [requestId, state]);

  it('unknown holds the cost in in_doubt; a re-send keeps it there; a card on the ID (succeeded) settles it back to reserved', async () => {
    const { id, requestId } = await createOrder(stack, { gift_card_code: 'NOVA-GAMES-FREE', amount: 2000 });
    const [{ cost }] = (await pg.query<{ cost: number }>(`SELECT cost FROM orders WHERE id = $1`, [id])).rows as [{ cost: number }];
    expect(await held(id)).toEqual([{ account: 'reserved', amount: cost }]);
    await setState(requestId, 'unknown');
    expect(await held(id)).toEqual([{ account: 'in_doubt', amount: cost }]);
    await setState(requestId, 'sent');
    expect(await held(id)).toEqual([{ account: 'in_doubt', amount: cost }]);
    await setState(requestId, 'unknown');
    await setState(requestId, 'succeeded');
    expect(await held(id)).toEqual([{ account: 'reserved', amount: cost }]);
    const { rows } = await pg.query(`SELECT kind FROM ledger_transactions WHERE order_id = $1 ORDER BY id`, [id]);
    expect(rows.map((r) => r.kind)).toEqual(['accepted', 'unknown', 'resolved']);
  });
});
