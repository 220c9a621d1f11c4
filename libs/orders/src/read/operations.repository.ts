import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '@cardpull/db';
import { filterSql, type OrderFilter } from './order-filter';
import type { AttentionRow, ExtraCardCounts, ExtraCardRow, FailureGroup, FilteredOrder, MoneyInDoubt, OrderSummary, SearchHit, TimelineEvent } from './read-models';
import { recheckIndexSql } from '../model/attempt-facts';

/** The columns of an OrderSummary, from `orders o`. */
const SUMMARY_COLUMNS = `o.id, o.status, o.client, o.mode, o.gift_card_code AS "giftCardCode", o.amount, o.created_at AS "createdAt", o.updated_at AS "updatedAt"`;

/**
 * The operators' reads of the order tables (the operations page, the order page, the metrics): cold paths,
 * each one statement on an index, never a card's code, PIN or PDF link.
 */
@Injectable()
export class OperationsRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** Orders per status, with the oldest of each (the age of the oldest open order). */
  async statusCounts(): Promise<{ status: string; count: number; oldest: Date }[]> {
    const { rows } = await this.pool.query<{ status: string; count: number; oldest: Date }>(
      'SELECT status::text AS status, count(*)::int AS count, min(created_at) AS oldest FROM orders GROUP BY status',
    );
    return rows;
  }

  /** Orders in needs_attention with their latest attempt (why its outcome is unknown). */
  async needsAttention(limit: number): Promise<AttentionRow[]> {
    const { rows } = await this.pool.query<AttentionRow>(
      `SELECT ${SUMMARY_COLUMNS}, o.error_code AS "errorCode", o.error_message AS reason, a.request_id AS "requestId", a.call_count AS calls,
              a.error_code AS "lastErrorCode", a.error_message AS "lastErrorMessage", a.unknown_since AS "unknownSince", a.state::text AS "attemptState"
       FROM orders o
       LEFT JOIN LATERAL (SELECT request_id, call_count, error_code, error_message, unknown_since, state FROM attempts WHERE order_id = o.id ORDER BY seq DESC LIMIT 1) a ON true
       WHERE o.status = 'needs_attention' ORDER BY o.id LIMIT $1`,
      [limit],
    );
    return rows;
  }

  /**
   * A page of the orders a filter selects, newest first: `limit` after the order `after` (ids are UUIDv7:
   * their order is their creation order, and the primary key walks it), one more to know if there is a next.
   */
  async filterOrders(filter: OrderFilter, after: string | undefined, limit: number): Promise<{ orders: FilteredOrder[]; more: boolean }> {
    const { where, params } = filterSql(filter, 3);
    const { rows } = await this.pool.query<FilteredOrder>(
      `SELECT ${SUMMARY_COLUMNS}, o.error_code AS "errorCode", o.error_message AS "errorMessage", o.metadata
       FROM orders o WHERE ($1::uuid IS NULL OR o.id < $1::uuid) AND ${where}
       ORDER BY o.id DESC LIMIT $2`,
      [after ?? null, limit + 1, ...params],
    );
    return { orders: rows.slice(0, limit), more: rows.length > limit };
  }

  /**
   * Failed and needs_attention orders grouped by cause: status, the order's error code, and the partner's
   * last word on its latest request ID (code and message; the order's own message when the partner gave
   * none), with ids, times and long numbers in messages folded so one cause makes one row. How many, when
   * first and last seen (the order's last change), and the latest order of each; latest causes first, with
   * how many causes there are in all. The (status, id) index picks the two statuses; retention bounds them.
   */
  async failureGroups(limit: number): Promise<{ groups: FailureGroup[]; causes: number }> {
    const { rows } = await this.pool.query<FailureGroup & { causes: number }>(
      `SELECT count(*) OVER ()::int AS causes, o.status::text AS status, coalesce(o.error_code, '') AS code, coalesce(a.error_code, '') AS "partnerCode",
              left(regexp_replace(coalesce(a.error_message, o.error_message, ''), '[0-9a-fA-F]{8}-[0-9a-fA-F-]{27}|\\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z?|\\d{5,}', '…', 'g'), 200) AS message,
              count(*)::int AS count, min(o.updated_at) AS "firstSeen", max(o.updated_at) AS "lastSeen",
              (array_agg(o.id ORDER BY o.updated_at DESC))[1]::text AS "latestOrderId"
       FROM orders o
       LEFT JOIN LATERAL (SELECT error_code, error_message FROM attempts WHERE order_id = o.id ORDER BY seq DESC LIMIT 1) a ON true
       WHERE o.status IN ('failed', 'needs_attention')
       GROUP BY 2, 3, 4, 5 ORDER BY max(o.updated_at) DESC LIMIT $1`,
      [limit],
    );
    return { groups: rows.map(({ causes: _causes, ...group }) => group), causes: rows[0]?.causes ?? 0 };
  }

  /**
   * Orders waiting on a request ID of unknown outcome (an open attempt that has had an unknown outcome), by
   * status: how many, their face value, since when the oldest waits. The attempts' recheck index
   * (recheckIndexSql) holds them all (`in_doubt`); an order counts once however many of its IDs are open.
   */
  async moneyInDoubt(): Promise<MoneyInDoubt[]> {
    const { rows } = await this.pool.query<MoneyInDoubt>(
      `SELECT o.status::text AS status, count(*)::int AS orders, coalesce(sum(o.amount), 0)::float8 AS amount, min(x.since) AS oldest
       FROM (SELECT order_id, min(unknown_since) AS since FROM attempts
             WHERE ${recheckIndexSql('attempts')} AND state IN ('sent', 'unknown') AND unknown_since IS NOT NULL GROUP BY order_id) x
       JOIN orders o ON o.id = x.order_id
       GROUP BY o.status ORDER BY o.status`,
    );
    return rows;
  }

  /** Surplus and mismatched cards, newest first (the (role, created_at) index). */
  async extraCards(limit: number): Promise<ExtraCardRow[]> {
    const { rows } = await this.pool.query<ExtraCardRow>(
      `SELECT c.created_at AS "createdAt", c.role::text AS role, c.partner_card_id AS "partnerCardId", c.request_id AS "requestId",
              c.order_id AS "orderId", o.status::text AS "orderStatus", c.gift_card_code AS "giftCardCode", c.amount, c.mismatch
       FROM cards c JOIN orders o ON o.id = c.order_id
       WHERE c.role IN ('surplus', 'mismatch') ORDER BY c.created_at DESC LIMIT $1`,
      [limit],
    );
    return rows;
  }

  async extraCardCounts(): Promise<ExtraCardCounts> {
    const { rows } = await this.pool.query<{ role: string; n: number }>(
      `SELECT role::text AS role, count(*)::int AS n FROM cards WHERE role IN ('surplus', 'mismatch') GROUP BY role`,
    );
    const of = (role: string) => rows.find((r) => r.role === role)?.n ?? 0;
    return { surplus: of('surplus'), mismatch: of('mismatch') };
  }

  /**
   * Cards sealed with a key not in `keyIds` (their orders answer "unreadable"): the keys in use are read
   * one index probe each (a loose index scan of cards(key_id)), then only the unknown ones are counted.
   */
  async cardsWithoutKey(keyIds: string[]): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      `WITH RECURSIVE k AS (
         SELECT min(key_id) AS id FROM cards
         UNION ALL SELECT (SELECT min(key_id) FROM cards WHERE key_id > k.id) FROM k WHERE k.id IS NOT NULL
       )
       SELECT count(*)::int AS n FROM cards WHERE key_id IN (SELECT id FROM k WHERE id IS NOT NULL AND NOT (id = ANY($1::text[])))`,
      [keyIds],
    );
    return rows[0]?.n ?? 0;
  }

  /** Face value ordered today (UTC) per client (the spend guard's totals). */
  /** What each of `clients` reserved today (UTC) in the ledger, at cost (the spend guard's daily total). */
  async spendToday(clients: string[]): Promise<Map<string, number>> {
    const { rows } = await this.pool.query<{ client: string; total: string }>(
      `SELECT t.client, sum(e.amount) AS total FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
        WHERE t.kind = 'accepted' AND t.client = ANY($1::text[]) AND t.created_at >= (now() AT TIME ZONE 'UTC')::date::timestamp AT TIME ZONE 'UTC'
          AND e.account = 'reserved'
        GROUP BY t.client`,
      [clients],
    );
    return new Map(rows.map((r) => [r.client, Number(r.total)]));
  }

  async recent(limit: number): Promise<OrderSummary[]> {
    const { rows } = await this.pool.query<OrderSummary>(`SELECT ${SUMMARY_COLUMNS} FROM orders o ORDER BY o.id DESC LIMIT $1`, [limit]);
    return rows;
  }

  /**
   * Orders matching `q` read as an order id (`uuid`, when it is one), a partner request ID, an
   * Idempotency-Key of one of `clients` (through the (client, idempotency_key) index), a partner card id
   * or a gift card code (newest `limit`).
   */
  async search(q: string, uuid: string | null, clients: string[], limit: number): Promise<SearchHit[]> {
    const { rows } = await this.pool.query<SearchHit>(
      `SELECT ${SUMMARY_COLUMNS}, string_agg(DISTINCT m.matched, ', ') AS matched
       FROM (
         SELECT id, 'order id' AS matched FROM orders WHERE $2::uuid IS NOT NULL AND id = $2::uuid
         UNION ALL SELECT order_id, 'partner request ID' FROM attempts WHERE request_id = $1
         UNION ALL SELECT id, 'Idempotency-Key' FROM orders WHERE client = ANY($3::text[]) AND idempotency_key = $1
         UNION ALL SELECT order_id, 'partner card id' FROM cards WHERE partner_card_id = $1
         UNION ALL (SELECT id, 'gift card code' FROM orders WHERE gift_card_code = $1 ORDER BY id DESC LIMIT $4)
       ) m JOIN orders o ON o.id = m.id
       GROUP BY o.id ORDER BY o.id DESC LIMIT $4`,
      [q, uuid, clients, limit],
    );
    return rows;
  }

  /** An order's timeline in the order it happened: its order_events rows and its completion by its card (the view order_timeline). */
  async timeline(orderId: string, limit: number): Promise<TimelineEvent[]> {
    const { rows } = await this.pool.query<TimelineEvent>(
      // Ordered by the bigint column, not by the text alias (where "100" sorts before "99").
      `SELECT e.id::text AS id, e.at, e.type, e.from_status::text AS "fromStatus", e.to_status::text AS "toStatus", e.request_id AS "requestId",
              e.actor, e.detail
       FROM order_timeline e WHERE e.order_id = $1 ORDER BY e.at, e.id NULLS LAST LIMIT $2`,
      [orderId, limit],
    );
    return rows;
  }
}
