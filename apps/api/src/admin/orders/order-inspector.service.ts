import { Inject, Injectable } from '@nestjs/common';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import {
  LedgerRepository,
  type OrderMoney,
  CallbacksRepository,
  OperationsRepository,
  OrderReads,
  toOrderView,
  type AttemptRow,
  type CallbackDeliveryRow,
  type CallbackEventRow,
  type FilteredOrder,
  type OrderRow,
  type ParsedFilter,
  type OrderView,
  type SearchHit,
  type TimelineEvent,
} from '@cardpull/orders';
import { Vault } from '@cardpull/vault';
import { isUuid } from '../../orders/order-input';

const SEARCH_LIMIT = 50;
const TIMELINE_LIMIT = 1_000;

export type { SearchHit, TimelineEvent };

export interface AuditEntry {
  at: Date;
  who: string;
  what: string;
  why: string;
  requestId: string | null;
  bulkId: string | null;
}

export interface OrderPageModel {
  order: OrderRow;
  attempts: AttemptRow[];
  /** Code masked to its last four characters, PIN hidden (the page never shows a card's secrets). */
  card: OrderView['card'];
  /** The order's other cards (surplus, mismatch): always masked, held for a refund or reuse (revealed only by CardReveals). */
  otherCards: OrderView['other_cards'];
  /** A card arrived after an operator marked the order failed, and completed it. */
  completedAfterFailed: boolean;
  timeline: TimelineEvent[];
  audit: AuditEntry[];
  callbacks: { event: CallbackEventRow; deliveries: CallbackDeliveryRow[] }[];
  /** Its price fixed at intake and its ledger movements (issue 24). */
  money: OrderMoney;
}

/** Reads for the operator: one search box over every identifier an order has, and an order's whole story. */
@Injectable()
export class OrderInspector {
  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: Pick<ServiceConfig, 'API_KEYS'>,
    private readonly reads: OperationsRepository,
    private readonly orders: OrderReads,
    private readonly callbacks: CallbacksRepository,
    private readonly vault: Vault,
    private readonly ledger: LedgerRepository,
  ) {}

  /**
   * Tries the query as an order id, a partner request ID, an Idempotency-Key (of any configured client,
   * through the (client, idempotency_key) index), a partner card id and a gift card code (newest 50).
   */
  /** A page of the orders a filter selects (the Orders view and its JSON), newest first. */
  filter(parsed: ParsedFilter): Promise<{ orders: FilteredOrder[]; more: boolean }> {
    return this.reads.filterOrders(parsed.filter, parsed.after, parsed.limit);
  }

  async search(query: string): Promise<SearchHit[]> {
    const q = query.trim();
    if (!q || q.length > 200) return [];
    const clients = [...new Set(this.config.API_KEYS.map((k) => k.client))];
    return this.reads.search(q, isUuid(q) ? q : null, clients, SEARCH_LIMIT);
  }

  async page(orderId: string): Promise<OrderPageModel | null> {
    if (!isUuid(orderId)) return null;
    const detail = await this.orders.detail(orderId);
    if (!detail) return null;
    const [timeline, callbacks, money] = await Promise.all([this.timeline(orderId), this.callbacks.forOrder(orderId), this.ledger.orderMoney(orderId)]);
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
        // Touched by a bulk action: which one (its page shows the filter and who started it).
        bulkId: typeof (e.detail?.bulk as { id?: unknown } | undefined)?.id === 'string' ? ((e.detail!.bulk as { id: string }).id) : null,
      })),
      callbacks: callbacks.events.map((event) => ({ event, deliveries: callbacks.deliveries.filter((d) => d.eventId === event.id) })),
      money,
    };
  }

  private timeline(orderId: string): Promise<TimelineEvent[]> {
    return this.reads.timeline(orderId, TIMELINE_LIMIT);
  }
}
