import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '@cardpull/db';

export type SampleState = 'ok' | 'drift' | 'opening';

export interface BalanceSampleRow {
  at: Date;
  partnerBalance: number;
  ledgerBalance: number;
  inFlight: number;
  tolerance: number;
  drift: number;
  state: SampleState;
  windowFrom: Date | null;
  /** Spend per minute lately (smoothed), minor units. */
  spendPerMinute: number;
  /** Hours the float lasts at that rate (null: nothing is spent). */
  runwayHours: number | null;
  runwayState: 'ok' | 'approaching' | 'below';
}

/** What the ledger says of the partner's side now (one snapshot). */
export interface PartnerSide {
  /** float + reserved + in_doubt: the money the ledger does not know to be spent, in minor units. */
  ledgerBalance: number;
  /** The cost of live orders whose request ID was sent (the partner may have drawn it before we stored the card). */
  inFlight: number;
  /** Whether the ledger's float was ever set to the partner's balance (an opening_balance movement). */
  opened: boolean;
  /** The float alone: the money left to spend. */
  float: number;
}

/** An order that moved money in a drift's window (listed with the warning). */
export interface WindowOrder {
  orderId: string;
  kinds: string[];
  lastAt: Date;
}

const SAMPLE_COLUMNS = `at, partner_balance AS "partnerBalance", ledger_balance AS "ledgerBalance", in_flight AS "inFlight", tolerance, drift, state, window_from AS "windowFrom",
  spend_per_minute AS "spendPerMinute", runway_hours AS "runwayHours", runway_state AS "runwayState"`;

/** The balance drift check's reads and writes (issue 24, item 3): balance_samples and the ledger's side of the partner. */
@Injectable()
export class BalanceSamplesRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async partnerSide(partnerAccount: string): Promise<PartnerSide> {
    const { rows } = await this.pool.query<{ ledger: string | null; float: string | null; in_flight: string | null; opened: boolean }>(
      `WITH held AS (SELECT account, sum(amount) AS amount FROM ledger_entries WHERE partner_account = $1 AND account IN ('float', 'reserved', 'in_doubt') GROUP BY account)
       SELECT (SELECT sum(amount) FROM held) AS ledger, (SELECT amount FROM held WHERE account = 'float') AS float,
              (SELECT sum(o.cost) FROM orders o
                WHERE o.cost IS NOT NULL AND o.status NOT IN ('completed', 'failed')
                  AND EXISTS (SELECT 1 FROM attempts a WHERE a.order_id = o.id AND a.call_count > 0 AND a.state <> 'failed_definitive')) AS in_flight,
              EXISTS (SELECT 1 FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
                       WHERE t.kind = 'opening_balance' AND e.partner_account = $1) AS opened`,
      [partnerAccount],
    );
    const r = rows[0]!;
    return { ledgerBalance: Number(r.ledger ?? 0), float: Number(r.float ?? 0), inFlight: Number(r.in_flight ?? 0), opened: r.opened };
  }

  async record(sample: Omit<BalanceSampleRow, 'at' | 'windowFrom'>): Promise<BalanceSampleRow> {
    const { rows } = await this.pool.query<BalanceSampleRow>(
      `INSERT INTO balance_samples (partner_balance, ledger_balance, in_flight, tolerance, drift, state, window_from, spend_per_minute, runway_hours, runway_state)
       VALUES ($1, $2, $3, $4, $5, $6,
               CASE WHEN $6 = 'drift' THEN coalesce((SELECT max(at) FROM balance_samples WHERE state <> 'drift'), now()) END, $7, $8, $9)
       RETURNING ${SAMPLE_COLUMNS}`,
      [sample.partnerBalance, sample.ledgerBalance, sample.inFlight, sample.tolerance, sample.drift, sample.state, sample.spendPerMinute, sample.runwayHours, sample.runwayState],
    );
    return numeric(rows[0]!);
  }

  async latest(): Promise<BalanceSampleRow | null> {
    const { rows } = await this.pool.query<BalanceSampleRow>(`SELECT ${SAMPLE_COLUMNS} FROM balance_samples ORDER BY id DESC LIMIT 1`);
    return rows[0] ? numeric(rows[0]) : null;
  }

  /** What cards cost (spent and surplus) in the last `windowMs`, minor units. */
  async spentWithin(partnerAccount: string, windowMs: number): Promise<number> {
    const { rows } = await this.pool.query<{ spent: string | null }>(
      `SELECT sum(e.amount) AS spent FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
        WHERE t.created_at >= now() - make_interval(secs => $2::double precision / 1000) AND e.partner_account = $1
          AND e.account IN ('spent', 'surplus') AND e.amount > 0`,
      [partnerAccount, windowMs],
    );
    return Number(rows[0]?.spent ?? 0);
  }

  /** The orders that moved money since `from`, latest first (at most `limit`). */
  async ordersSince(from: Date, limit: number): Promise<WindowOrder[]> {
    const { rows } = await this.pool.query<WindowOrder>(
      `SELECT order_id AS "orderId", array_agg(DISTINCT kind ORDER BY kind) AS kinds, max(created_at) AS "lastAt"
         FROM ledger_transactions WHERE created_at >= $1 AND order_id IS NOT NULL
        GROUP BY order_id ORDER BY max(created_at) DESC LIMIT $2`,
      [from, limit],
    );
    return rows;
  }
}

const numeric = (r: BalanceSampleRow): BalanceSampleRow => ({
  ...r,
  partnerBalance: Number(r.partnerBalance),
  ledgerBalance: Number(r.ledgerBalance),
  inFlight: Number(r.inFlight),
  tolerance: Number(r.tolerance),
  drift: Number(r.drift),
});
