import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL, type OrderStatus } from '@cardpull/db';
import { ATTEMPT_COLUMNS, CARD_COLUMNS, ORDER_COLUMNS, type AttemptRow, type CardRow, type OrderRow } from '../model/order.types';

export interface OrderDetail {
  order: OrderRow;
  attempts: AttemptRow[];
  /** The order's card (orders.card_id). */
  card: CardRow | null;
  /** Every other card the partner issued for the order's request IDs: surplus, or not matching the order. */
  otherCards: CardRow[];
}

export interface ListFilter {
  client: string;
  status?: OrderStatus;
  giftCardCode?: string;
  /** Exclusive upper bound of ids (ids are UUID v7, so this pages from newest to oldest). */
  beforeId?: string;
  limit: number;
}

/**
 * The order aggregate's reads for its callers (the API, the callbacks, the order page): one order with its
 * attempts and cards, a client's orders page by page, the statuses the long-poll watches.
 */
@Injectable()
export class OrderReads {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** An order with its attempts and card, or null; `client` limits it to that caller's orders. */
  async detail(orderId: string, client?: string): Promise<OrderDetail | null> {
    const { rows } = await this.pool.query<DetailRow>(
      `${DETAIL_SELECT} WHERE o.id = $1 ${client ? 'AND o.client = $2' : ''}`,
      client ? [orderId, client] : [orderId],
    );
    return rows[0] ? toDetail(rows[0]) : null;
  }

  /** The client's order under its own Idempotency-Key, with its attempts and card (one statement), or null. */
  async byKey(client: string, idempotencyKey: string): Promise<OrderDetail | null> {
    const { rows } = await this.pool.query<DetailRow>(`${DETAIL_SELECT} WHERE o.client = $1 AND o.idempotency_key = $2`, [client, idempotencyKey]);
    return rows[0] ? toDetail(rows[0]) : null;
  }

  async list(filter: ListFilter): Promise<OrderDetail[]> {
    const where = ['o.client = $1'];
    const params: unknown[] = [filter.client];
    if (filter.status) {
      params.push(filter.status);
      where.push(`o.status = $${params.length}::"OrderStatus"`);
    }
    if (filter.giftCardCode) {
      params.push(filter.giftCardCode);
      where.push(`o.gift_card_code = $${params.length}`);
    }
    if (filter.beforeId) {
      params.push(filter.beforeId);
      where.push(`o.id < $${params.length}::uuid`);
    }
    params.push(filter.limit);
    const { rows } = await this.pool.query<DetailRow>(
      `${DETAIL_SELECT} WHERE ${where.join(' AND ')} ORDER BY o.id DESC LIMIT $${params.length}`,
      params,
    );
    return rows.map(toDetail);
  }

  /** Status of several orders at once (the long-poll's cheap check). */
  async statuses(orderIds: string[]): Promise<Map<string, OrderStatus>> {
    const { rows } = await this.pool.query<{ id: string; status: OrderStatus }>(
      'SELECT id, status FROM orders WHERE id = ANY($1::uuid[])',
      [orderIds],
    );
    return new Map(rows.map((r) => [r.id, r.status]));
  }
}

/**
 * An order with its attempts and cards, read in ONE statement (one snapshot): three reads in a row could show
 * the order's row from before its card was stored and the card from after (the order's own card listed
 * among `other_cards`, or an error code its card has already replaced). Attempts and cards come back as JSON
 * and are turned back into rows (timestamps and sealed bytes) by `toDetail`.
 */
const DETAIL_SELECT = `SELECT ${ORDER_COLUMNS},
  (SELECT coalesce(json_agg(x ORDER BY x.seq), '[]') FROM (SELECT ${ATTEMPT_COLUMNS} FROM attempts a WHERE a.order_id = o.id) x) AS "attemptsJson",
  (SELECT coalesce(json_agg(x ORDER BY x."createdAt", x.id), '[]') FROM (SELECT ${CARD_COLUMNS} FROM cards c WHERE c.order_id = o.id) x) AS "cardsJson"
  FROM orders o`;

type DetailRow = OrderRow & { attemptsJson: Record<string, unknown>[]; cardsJson: Record<string, unknown>[] };

const ATTEMPT_TIMES = ['firstSentAt', 'lastSentAt', 'unknownSince', 'notFoundSince', 'declaredDeadAt', 'createdAt', 'updatedAt'] as const;
const CARD_TIMES = ['expireAt', 'createdAt'] as const;
const CARD_BYTES = ['codeEnc', 'pinEnc', 'pdfEnc'] as const;

function toDetail(row: DetailRow): OrderDetail {
  const { attemptsJson, cardsJson, ...order } = row;
  const attempts = attemptsJson.map((a) => revive(a, ATTEMPT_TIMES, []) as unknown as AttemptRow);
  const cards = cardsJson.map((c) => revive(c, CARD_TIMES, CARD_BYTES) as unknown as CardRow);
  return {
    order,
    attempts,
    card: cards.find((c) => c.id === order.cardId) ?? null,
    otherCards: cards.filter((c) => c.id !== order.cardId),
  };
}

/** A row read as JSON, with its timestamps as Dates and its bytea columns (JSON's "\\x..." hex) as Buffers. */
function revive(json: Record<string, unknown>, times: readonly string[], bytes: readonly string[]): Record<string, unknown> {
  const row = { ...json };
  for (const k of times) if (typeof row[k] === 'string') row[k] = new Date(row[k] as string);
  for (const k of bytes) if (typeof row[k] === 'string') row[k] = Buffer.from((row[k] as string).slice(2), 'hex');
  return row;
}
