import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '@cardpull/db';

/** One line of a daily statement: a client's cards of one gift card, that day (UTC), in minor units. */
export interface StatementLine {
  client: string;
  giftCardCode: string;
  currency: string;
  /** Cards stored that day as their order's card. */
  cards: number;
  faceValue: number;
  cost: number;
  /** Cards beyond their order's (surplus, mismatch) stored that day: their cost. */
  surplusCards: number;
  surplus: number;
  /** At the end of the day: the cost of the orders waiting on a request ID of unknown outcome. */
  inDoubt: number;
}

/**
 * The daily statement (issue 24, item 5), from the ledger: per client and gift card, the cards stored that
 * day (count, face value, cost), the surplus cards stored that day (count, cost), and what was in doubt at the
 * day's end. Only orders still in the hot tables are in it (retention archives orders after
 * RETENTION_DAYS): a statement is for the recent days.
 */
const STATEMENT_SQL = `WITH day AS (
    SELECT ($1::date)::timestamp AT TIME ZONE 'UTC' AS from_, ($1::date + 1)::timestamp AT TIME ZONE 'UTC' AS to_
  ), moves AS (
    SELECT o.client, o.gift_card_code, e.currency, t.kind, t.created_at >= day.from_ AS that_day, e.account, e.amount, c.amount AS face
    FROM day
    JOIN ledger_transactions t ON t.created_at < day.to_
    JOIN ledger_entries e ON e.transaction_id = t.id
    JOIN orders o ON o.id = t.order_id
    LEFT JOIN cards c ON c.id = t.card_id
    WHERE ($2::text IS NULL OR o.client = $2)
      AND (t.created_at >= day.from_ OR e.account = 'in_doubt')
  )
  SELECT client, gift_card_code AS "giftCardCode", currency,
         count(*) FILTER (WHERE that_day AND kind = 'card_stored' AND account = 'spent')::int AS cards,
         coalesce(sum(face) FILTER (WHERE that_day AND kind = 'card_stored' AND account = 'spent'), 0)::bigint AS "faceValue",
         coalesce(sum(amount) FILTER (WHERE that_day AND kind = 'card_stored' AND account = 'spent'), 0)::bigint AS cost,
         count(*) FILTER (WHERE that_day AND kind = 'surplus' AND account = 'surplus')::int AS "surplusCards",
         coalesce(sum(amount) FILTER (WHERE that_day AND kind = 'surplus' AND account = 'surplus'), 0)::bigint AS surplus,
         coalesce(sum(amount) FILTER (WHERE account = 'in_doubt'), 0)::bigint AS "inDoubt"
  FROM moves
  GROUP BY client, gift_card_code, currency
  HAVING count(*) FILTER (WHERE that_day AND account IN ('spent', 'surplus')) > 0 OR coalesce(sum(amount) FILTER (WHERE account = 'in_doubt'), 0) <> 0
  ORDER BY client, gift_card_code, currency`;

@Injectable()
export class StatementsRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** The statement of `date` (YYYY-MM-DD, UTC), of one client or (null) of every client. */
  async daily(date: string, client: string | null): Promise<StatementLine[]> {
    const { rows } = await this.pool.query<StatementLine>(STATEMENT_SQL, [date, client]);
    return rows.map((r) => ({ ...r, faceValue: Number(r.faceValue), cost: Number(r.cost), surplus: Number(r.surplus), inDoubt: Number(r.inDoubt) }));
  }
}

const STATEMENT_COLUMNS = ['date', 'client', 'gift_card_code', 'currency', 'cards', 'face_value', 'cost', 'surplus_cards', 'surplus', 'in_doubt'] as const;

/**
 * A text cell as a spreadsheet app must not run it: a cell that starts with =, +, -, @, a tab or a carriage
 * return is a formula to Excel, LibreOffice and Google Sheets, so it gets a leading apostrophe (OWASP's
 * advice for CSV injection); then quoted as RFC 4180 wants. Numbers are written as numbers.
 */
export function csvCell(value: string | number): string {
  if (typeof value === 'number') return String(value);
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n']/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** The statement as CSV (a header line, then one line per client and gift card; amounts in minor units). */
export function statementCsv(date: string, lines: StatementLine[]): string {
  const rows = lines.map((l) => [date, l.client, l.giftCardCode, l.currency, l.cards, l.faceValue, l.cost, l.surplusCards, l.surplus, l.inDoubt]);
  return [STATEMENT_COLUMNS.join(','), ...rows.map((r) => r.map(csvCell).join(','))].join('\r\n') + '\r\n';
}
