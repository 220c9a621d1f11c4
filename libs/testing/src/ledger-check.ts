import { Client } from 'pg';

/** The ledger's totals as one consistent picture (printed by the chaos run's report). */
export interface LedgerTotals {
  /** Per account, per currency, in minor units. */
  balances: Record<string, number>;
  /** The sum of every entry (per currency): 0 in a double-entry ledger. */
  sums: Record<string, number>;
  /** What the orders waiting on an ID of unknown outcome cost (and their face value). */
  waitingOnUnknown: { orders: number; cost: number; faceValue: number };
  completedOrders: number;
  surplusCards: number;
}

export interface LedgerCheck {
  totals: LedgerTotals;
  problems: string[];
}

/**
 * The ledger against the orders (issue 24), read in one repeatable-read transaction, so it holds while
 * workers run: every movement commits with the order change that causes it. For the orders with a price
 * (accepted since the ledger):
 *  - every completed order has exactly one `card_stored` movement, its `spent` leg at its cost;
 *  - every card beyond an order's own (surplus, mismatch) has exactly one `surplus` movement at its cost;
 *  - what an order holds (reserved or in_doubt) is its cost while it lives, nothing once it is terminal, and
 *    it is in `in_doubt` exactly when its current request ID has had an unknown outcome not yet settled;
 *  - `in_doubt` is the cost of the orders waiting on such IDs; the entries sum to 0 in each currency.
 */
export async function checkLedger(databaseUrl: string): Promise<LedgerCheck> {
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  try {
    await pg.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const balances = await pg.query<{ account: string; currency: string; balance: string }>(
      `SELECT account::text, currency, sum(amount) AS balance FROM ledger_entries GROUP BY account, currency ORDER BY account, currency`,
    );
    const orders = await pg.query<{
      id: string; status: string; cost: number; amount: number; held_account: string | null; held: string | null;
      spent_moves: string; spent: string | null; in_doubt_id: boolean; attempts_seen: string | null;
    }>(
      `SELECT o.id, o.status::text, o.cost, o.amount, h.account::text AS held_account, h.amount AS held,
              (SELECT count(*) FROM ledger_transactions t WHERE t.order_id = o.id AND t.kind = 'card_stored') AS spent_moves,
              (SELECT sum(e.amount) FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
                WHERE t.order_id = o.id AND t.kind = 'card_stored' AND e.account = 'spent') AS spent,
              EXISTS (SELECT 1 FROM attempts a WHERE a.order_id = o.id AND a.unknown_since IS NOT NULL
                        AND a.state NOT IN ('succeeded', 'failed_definitive')) AS in_doubt_id,
              (SELECT string_agg(a.state || CASE WHEN a.unknown_since IS NULL THEN '' ELSE ' (had an unknown outcome)' END, ', ' ORDER BY a.seq)
                 FROM attempts a WHERE a.order_id = o.id) AS attempts_seen
         FROM orders o LEFT JOIN LATERAL cardpull_ledger_held(o.id) h ON true
        WHERE o.cost IS NOT NULL`,
    );
    const cards = await pg.query<{ id: string; order_id: string; role: string; cost: string; moves: string; surplus: string | null }>(
      `SELECT c.id, c.order_id, c.role::text,
              c.amount - (c.amount::bigint * o.discount_ppm + 500000) / 1000000 AS cost,
              (SELECT count(*) FROM ledger_transactions t WHERE t.card_id = c.id AND t.order_id = c.order_id) AS moves,
              (SELECT sum(e.amount) FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
                WHERE t.card_id = c.id AND t.order_id = c.order_id AND t.kind = 'surplus' AND e.account = 'surplus') AS surplus
         FROM cards c JOIN orders o ON o.id = c.order_id WHERE o.discount_ppm IS NOT NULL AND c.role <> 'order'`,
    );
    await pg.query('COMMIT');

    const problems: string[] = [];
    const totals: LedgerTotals = { balances: {}, sums: {}, waitingOnUnknown: { orders: 0, cost: 0, faceValue: 0 }, completedOrders: 0, surplusCards: cards.rows.length };
    for (const b of balances.rows) {
      totals.balances[`${b.account} ${b.currency}`] = Number(b.balance);
      totals.sums[b.currency] = (totals.sums[b.currency] ?? 0) + Number(b.balance);
    }
    for (const [currency, sum] of Object.entries(totals.sums)) if (sum !== 0) problems.push(`the ${currency} entries sum to ${sum}, not 0`);

    for (const o of orders.rows) {
      const held = Number(o.held ?? 0);
      if (o.status === 'completed') {
        totals.completedOrders += 1;
        if (Number(o.spent_moves) !== 1 || Number(o.spent) !== o.cost) problems.push(`completed order ${o.id}: ${o.spent_moves} card_stored movements, spent ${o.spent} (its cost: ${o.cost})`);
      } else if (Number(o.spent_moves) !== 0) {
        problems.push(`order ${o.id} (${o.status}) has a card_stored movement`);
      }
      const live = o.status !== 'completed' && o.status !== 'failed';
      if (!live && held !== 0) problems.push(`${o.status} order ${o.id} still holds ${held} in ${o.held_account}`);
      if (live && o.cost > 0) {
        if (held !== o.cost) problems.push(`live order ${o.id} (${o.status}) holds ${held}, not its cost ${o.cost}`);
        const expected = o.in_doubt_id ? 'in_doubt' : 'reserved';
        if (held !== 0 && o.held_account !== expected) problems.push(`live order ${o.id}: its money is in ${o.held_account}, expected ${expected} (its request IDs: ${o.attempts_seen ?? 'none'})`);
      }
      if (live && o.in_doubt_id) {
        totals.waitingOnUnknown.orders += 1;
        totals.waitingOnUnknown.cost += o.cost;
        totals.waitingOnUnknown.faceValue += o.amount;
      }
    }
    const inDoubt = Object.entries(totals.balances).filter(([k]) => k.startsWith('in_doubt ')).reduce((s, [, v]) => s + v, 0);
    if (inDoubt !== totals.waitingOnUnknown.cost) problems.push(`in_doubt is ${inDoubt}, the orders waiting on unknown IDs cost ${totals.waitingOnUnknown.cost}`);

    for (const c of cards.rows) {
      if (Number(c.moves) !== 1 || Number(c.surplus) !== Number(c.cost)) problems.push(`${c.role} card ${c.id}: ${c.moves} movements, surplus ${c.surplus} (its cost: ${c.cost})`);
    }
    return { totals, problems };
  } finally {
    await pg.end();
  }
}
