import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { PG_POOL } from '@cardpull/db';
import {
  CallbacksRepository,
  OrdersRepository,
  toOrderView,
  type AttemptRow,
  type CallbackDeliveryRow,
  type CallbackEventRow,
  type OrderRow,
  type OrderView,
} from '@cardpull/orders';
import { Vault } from '@cardpull/vault';
import { isUuid } from '../../orders/order-input';
import { SUMMARY_COLUMNS, type OrderSummary } from '../operations/operations.service';

const SEARCH_LIMIT = 50;
const TIMELINE_LIMIT = 1_000;

export interface SearchHit extends OrderSummary {
  /** Which of the query's readings matched: order id, partner request ID, Idempotency-Key, ... */
  matched: string;
}

export interface TimelineEvent {
  id: string;
  at: Date;
  type: string;
  fromStatus: string | null;
  toStatus: string | null;
  requestId: string | null;
  actor: string;
  detail: Record<string, unknown> | null;
}

export interface AuditEntry {
  at: Date;
  who: string;
  what: string;
  why: string;
  requestId: string | null;
}

export interface OrderPageModel {
  order: OrderRow;
  attempts: AttemptRow[];
  /** Code masked to its last four characters, PIN hidden (the page never shows a card's secrets). */
  card: OrderView['card'];
  /** The order's other cards (surplus, mismatch), masked the same way. */
  otherCards: OrderView['other_cards'];
  /** A card arrived after an operator marked the order failed, and completed it. */
  completedAfterFailed: boolean;
  timeline: TimelineEvent[];
  audit: AuditEntry[];
  callbacks: { event: CallbackEventRow; deliveries: CallbackDeliveryRow[] }[];
}

/** Reads for the operator: one search box over every identifier an order has, and an order's whole story. */
@Injectable()
export class OrderInspector {
  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly orders: OrdersRepository,
    private readonly callbacks: CallbacksRepository,
    private readonly vault: Vault,
  ) {}

  /**
   * Tries the query as an order id, a partner request ID, an Idempotency-Key (of any configured client,
   * through the (client, idempotency_key) index), a partner card id and a gift card code (newest 50).
   */
  async search(query: string): Promise<SearchHit[]> {
    const q = query.trim();
    if (!q || q.length > 200) return [];
    const clients = [...new Set(this.config.API_KEYS.map((k) => k.client))];
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
      [q, isUuid(q) ? q : null, clients, SEARCH_LIMIT],
    );
    return rows;
  }

  async page(orderId: string): Promise<OrderPageModel | null> {
    if (!isUuid(orderId)) return null;
    const detail = await this.orders.detail(orderId);
    if (!detail) return null;
    const [timeline, callbacks] = await Promise.all([this.timeline(orderId), this.callbacks.forOrder(orderId)]);
    const masked = toOrderView(detail, this.vault, false);
    return {
      order: detail.order,
      attempts: detail.attempts,
      card: masked.card,
      otherCards: masked.other_cards,
      completedAfterFailed: timeline.some((e) => e.type === 'completed_after_failed'),
      timeline,
      audit: timeline.filter((e) => e.actor.startsWith('admin:')).map((e) => ({
        at: e.at,
        who: e.actor.slice('admin:'.length),
        what: e.type,
        why: typeof e.detail?.reason === 'string' ? e.detail.reason : '',
        requestId: e.requestId,
      })),
      callbacks: callbacks.events.map((event) => ({ event, deliveries: callbacks.deliveries.filter((d) => d.eventId === event.id) })),
    };
  }

  private async timeline(orderId: string): Promise<TimelineEvent[]> {
    const { rows } = await this.pool.query<TimelineEvent>(
      // Ordered by the bigint column, not by the text alias (where "100" sorts before "99").
      `SELECT e.id::text AS id, e.at, e.type, e.from_status::text AS "fromStatus", e.to_status::text AS "toStatus", e.request_id AS "requestId",
              e.actor, e.detail
       FROM order_events e WHERE e.order_id = $1 ORDER BY e.id LIMIT $2`,
      [orderId, TIMELINE_LIMIT],
    );
    return rows;
  }
}
