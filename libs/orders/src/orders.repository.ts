import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL, type OrderStatus, type PullMode } from '@cardpull/db';
import { newRequestId, uuidv7 } from './ids';
import {
  ATTEMPT_COLUMNS,
  CARD_COLUMNS,
  ORDER_COLUMNS,
  type AttemptRow,
  type CardRow,
  type OrderRow,
} from './order.types';

export interface NewOrder {
  client: string;
  idempotencyKey: string;
  requestHash: string;
  mode: PullMode;
  giftCardCode: string;
  amount: number;
  metadata: unknown;
  /** Where the order's terminal events are posted (its own URL or its client's default), or null. */
  callbackUrl?: string | null;
}

export type CreateResult =
  | { kind: 'created'; order: OrderRow; requestId: string }
  | { kind: 'replay'; order: OrderRow }
  | { kind: 'conflict'; order: OrderRow };

export interface OrderDetail {
  order: OrderRow;
  attempts: AttemptRow[];
  card: CardRow | null;
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
 * The order aggregate's reads and its creation (STYLE habit 5). The intake is one SQL statement: the
 * order, its first attempt with its partner request ID, and the "created" event commit together
 * (invariant 1: the request ID is in Postgres before any job can call the partner with it).
 */
@Injectable()
export class OrdersRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async create(input: NewOrder): Promise<CreateResult> {
    const id = uuidv7();
    const requestId = newRequestId();
    const nextStep = input.mode === 'sync' ? 'sync_call' : 'async_create';
    const { rows } = await this.pool.query<OrderRow>(
      `WITH ins AS (
         INSERT INTO orders (id, client, idempotency_key, request_hash, status, mode, gift_card_code, amount, metadata,
                             next_step, next_step_at, step_seq, callback_url, created_at, updated_at)
         VALUES ($1, $2, $3, $4, 'pending', $5::"PullMode", $6, $7, $8::jsonb, $9::"OrderStep", now(), 1, $12, now(), now())
         ON CONFLICT (client, idempotency_key) DO NOTHING
         RETURNING *
       ), att AS (
         INSERT INTO attempts (request_id, order_id, seq, kind, state, created_at, updated_at)
         SELECT $10, ins.id, 1, ins.mode, 'created', now(), now() FROM ins
       ), ev AS (
         INSERT INTO order_events (order_id, type, to_status, request_id, actor, detail)
         SELECT ins.id, 'created', 'pending', $10, $11, jsonb_build_object('mode', ins.mode) FROM ins
       )
       SELECT ${ORDER_COLUMNS} FROM ins o`,
      [
        id,
        input.client,
        input.idempotencyKey,
        input.requestHash,
        input.mode,
        input.giftCardCode,
        input.amount,
        input.metadata === undefined ? null : JSON.stringify(input.metadata),
        nextStep,
        requestId,
        `api:${input.client}`,
        input.callbackUrl ?? null,
      ],
    );
    if (rows[0]) return { kind: 'created', order: rows[0], requestId };
    const existing = await this.findByKey(input.client, input.idempotencyKey);
    if (!existing) throw new Error('order vanished between insert conflict and read'); // deletes do not happen
    return existing.requestHash === input.requestHash ? { kind: 'replay', order: existing } : { kind: 'conflict', order: existing };
  }

  async findByKey(client: string, idempotencyKey: string): Promise<OrderRow | null> {
    const { rows } = await this.pool.query<OrderRow>(
      `SELECT ${ORDER_COLUMNS} FROM orders o WHERE o.client = $1 AND o.idempotency_key = $2`,
      [client, idempotencyKey],
    );
    return rows[0] ?? null;
  }

  /** An order with its attempts and card, or null; `client` limits it to that caller's orders. */
  async detail(orderId: string, client?: string): Promise<OrderDetail | null> {
    const { rows } = await this.pool.query<OrderRow>(
      `SELECT ${ORDER_COLUMNS} FROM orders o WHERE o.id = $1 ${client ? 'AND o.client = $2' : ''}`,
      client ? [orderId, client] : [orderId],
    );
    const order = rows[0];
    if (!order) return null;
    const [details] = await this.attach([order]);
    return details!;
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
    const { rows } = await this.pool.query<OrderRow>(
      `SELECT ${ORDER_COLUMNS} FROM orders o WHERE ${where.join(' AND ')} ORDER BY o.id DESC LIMIT $${params.length}`,
      params,
    );
    return this.attach(rows);
  }

  /** Status of several orders at once (the long-poll's cheap check). */
  async statuses(orderIds: string[]): Promise<Map<string, OrderStatus>> {
    const { rows } = await this.pool.query<{ id: string; status: OrderStatus }>(
      'SELECT id, status FROM orders WHERE id = ANY($1::uuid[])',
      [orderIds],
    );
    return new Map(rows.map((r) => [r.id, r.status]));
  }

  private async attach(orders: OrderRow[]): Promise<OrderDetail[]> {
    if (!orders.length) return [];
    const ids = orders.map((o) => o.id);
    const [attempts, cards] = await Promise.all([
      this.pool.query<AttemptRow>(`SELECT ${ATTEMPT_COLUMNS} FROM attempts a WHERE a.order_id = ANY($1::uuid[]) ORDER BY a.seq`, [ids]),
      this.pool.query<CardRow>(`SELECT ${CARD_COLUMNS} FROM cards c WHERE c.order_id = ANY($1::uuid[])`, [ids]),
    ]);
    return orders.map((order) => ({
      order,
      attempts: attempts.rows.filter((a) => a.orderId === order.id),
      card: cards.rows.find((c) => c.orderId === order.id) ?? null,
    }));
  }
}
