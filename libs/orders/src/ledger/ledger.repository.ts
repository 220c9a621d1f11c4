import { Inject, Injectable } from '@nestjs/common';
import type { Pool, PoolClient } from 'pg';
import { PG_POOL, type Queryable } from '@cardpull/db';

/** The ledger's accounts (the schema's LedgerAccount): where money is, per partner account. */
export const LEDGER_ACCOUNTS = ['float', 'reserved', 'in_doubt', 'spent', 'surplus', 'adjustments'] as const;
export type LedgerAccount = (typeof LEDGER_ACCOUNTS)[number];

/** One leg: a debit (positive) or a credit (negative) of an account, in the currency's minor unit. */
export interface LedgerLeg {
  partnerAccount: string;
  account: LedgerAccount;
  amount: number;
  currency: string;
}

/** One movement of money: its legs sum to zero per currency (the database refuses the commit otherwise). */
export interface LedgerMovement {
  kind: string;
  orderId?: string | null;
  requestId?: string | null;
  actor: string;
  reason?: string | null;
  legs: LedgerLeg[];
}


/** An order's money (the order page): its price fixed at intake, and its ledger movements. */
export interface OrderMoney {
  price: { faceValue: number; discountPpm: number | null; cost: number | null; catalogSnapshot: string | null; name: string | null; brand: string | null; catalogDiscount: number | null } | null;
  movements: { id: string; kind: string; at: Date; actor: string; requestId: string | null; cardId: string | null; legs: { account: LedgerAccount; amount: number; currency: string }[] }[];
}

/**
 * The transaction and its legs in one statement. Run inside the caller's transaction (the order change that
 * causes it), it commits or rolls back with it; the database checks the balance when that transaction
 * commits (migration 20261128180000_ledger).
 */
const POST_SQL = `WITH t AS (
    INSERT INTO ledger_transactions (kind, order_id, request_id, actor, reason) VALUES ($1, $2, $3, $4, $5) RETURNING id
  )
  INSERT INTO ledger_entries (transaction_id, partner_account, account, amount, currency)
  SELECT t.id, e.partner_account, e.account::"LedgerAccount", e.amount, e.currency
  FROM t, jsonb_to_recordset($6::jsonb) AS e(partner_account text, account text, amount bigint, currency text)
  RETURNING transaction_id AS id`;

/**
 * The double-entry ledger (issue 24): append-only and balanced, both kept by the database itself, so that
 * no writer (the service, a script, an operator at psql) can change what was written or record money that
 * came from nowhere. Corrections are new transactions.
 */
@Injectable()
export class LedgerRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** Records one movement (inside `db`'s transaction when given); answers its id. */
  async post(movement: LedgerMovement, db: Queryable = this.pool): Promise<string> {
    const legs = movement.legs.map((l) => ({ partner_account: l.partnerAccount, account: l.account, amount: l.amount, currency: l.currency }));
    const { rows } = await db.query<{ id: string }>(POST_SQL, [movement.kind, movement.orderId ?? null, movement.requestId ?? null, movement.actor, movement.reason ?? null, JSON.stringify(legs)]);
    return rows[0]!.id;
  }

  /**
   * An operator's movement between `adjustments` and `float` (the only one the service writes outside the
   * order changes): a top-up the partner confirmed (positive), a correction (either sign), or the opening
   * balance (the float set to the partner's balance at the first drift sample). The reason is required and
   * kept with the actor: the ledger is its own audit trail.
   */
  operatorMovement(m: { kind: 'top_up' | 'adjustment' | 'opening_balance'; amount: number; reason: string; actor: string; partnerAccount: string; currency: string }): Promise<string> {
    if (!Number.isSafeInteger(m.amount) || m.amount === 0) throw new Error(`a ${m.kind} moves a whole nonzero number of minor units, not ${m.amount}`);
    if (!m.reason.trim()) throw new Error(`a ${m.kind} needs a reason`);
    const leg = (account: LedgerAccount, amount: number): LedgerLeg => ({ partnerAccount: m.partnerAccount, account, amount, currency: m.currency });
    return this.post({ kind: m.kind, actor: m.actor, reason: m.reason, legs: [leg('float', m.amount), leg('adjustments', -m.amount)] });
  }

  /**
   * An order's money: its price as fixed at intake (discount, cost, the catalog snapshot it was accepted
   * against) and its movements in order, each with its legs. Null price fields: accepted before the ledger.
   */
  async orderMoney(orderId: string): Promise<OrderMoney> {
    const [price, moves] = await Promise.all([
      this.pool.query<NonNullable<OrderMoney['price']>>(
        `SELECT o.amount AS "faceValue", o.discount_ppm AS "discountPpm", o.cost, o.catalog_snapshot AS "catalogSnapshot", s.name, s.brand, s.discount AS "catalogDiscount"
           FROM orders o LEFT JOIN catalog_snapshots s ON s.id = o.catalog_snapshot WHERE o.id = $1`,
        [orderId],
      ),
      this.pool.query<OrderMoney['movements'][number]>(
        `SELECT t.id::text, t.kind, t.created_at AS at, t.actor, t.request_id AS "requestId", t.card_id AS "cardId",
                jsonb_agg(jsonb_build_object('account', e.account, 'amount', e.amount, 'currency', e.currency) ORDER BY e.id) AS legs
           FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
          WHERE t.order_id = $1 GROUP BY t.id ORDER BY t.id`,
        [orderId],
      ),
    ]);
    return { price: price.rows[0] ?? null, movements: moves.rows };
  }

  /** Every account's balance, per partner account and currency (the operations page, the metrics, the reports). */
  async totals(): Promise<{ partnerAccount: string; account: LedgerAccount; currency: string; balance: number }[]> {
    const { rows } = await this.pool.query<{ partnerAccount: string; account: LedgerAccount; currency: string; balance: string }>(
      `SELECT partner_account AS "partnerAccount", account, currency, sum(amount) AS balance FROM ledger_entries GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    );
    return rows.map((r) => ({ ...r, balance: Number(r.balance) }));
  }

  /** Every account's balance of one partner account, per currency (accounts without entries are absent). */
  async balances(partnerAccount: string): Promise<{ account: LedgerAccount; currency: string; balance: number }[]> {
    const { rows } = await this.pool.query<{ account: LedgerAccount; currency: string; balance: string }>(
      `SELECT account, currency, sum(amount) AS balance FROM ledger_entries WHERE partner_account = $1 GROUP BY account, currency ORDER BY account, currency`,
      [partnerAccount],
    );
    return rows.map((r) => ({ ...r, balance: Number(r.balance) }));
  }
}
