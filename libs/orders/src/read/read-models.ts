// What the operators' reads return (the operations page, the order page, the metrics, the reconciliation
// report): plain rows, read by OperationsRepository and ReportsRepository.

export interface OrderSummary {
  id: string;
  status: string;
  client: string;
  mode: string;
  giftCardCode: string;
  amount: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface AttentionRow extends OrderSummary {
  /** The order's error code: outcome_unknown, card_mismatch, declared_dead, ... */
  errorCode: string | null;
  /** The state of its latest request ID: open (created, sent, unknown), succeeded or failed_definitive. */
  attemptState: string | null;
  /** The reason the worker gave (the order's error), e.g. no definitive answer for a request ID since ... */
  reason: string | null;
  requestId: string | null;
  calls: number | null;
  /** The partner's last answer to that request ID (why its outcome is unknown). */
  lastErrorCode: string | null;
  lastErrorMessage: string | null;
  unknownSince: Date | null;
}

/** A card the partner billed that is not its order's card: a surplus, or one that does not match its order. */
export interface ExtraCardRow {
  createdAt: Date;
  role: 'surplus' | 'mismatch';
  partnerCardId: string;
  requestId: string;
  orderId: string;
  orderStatus: string;
  giftCardCode: string;
  amount: number;
  mismatch: string | null;
}

export interface ExtraCardCounts {
  surplus: number;
  mismatch: number;
}

export interface SearchHit extends OrderSummary {
  /** Which of the query's readings matched: order id, partner request ID, Idempotency-Key, ... */
  matched: string;
}

export interface TimelineEvent {
  /** The order_events row's id; null for the completion, which is the card's row (cards.completed_from). */
  id: string | null;
  at: Date;
  type: string;
  fromStatus: string | null;
  toStatus: string | null;
  requestId: string | null;
  actor: string;
  detail: Record<string, unknown> | null;
}

/** One order of the reconciliation report as stored: its attempts and every card stored for it. */
export interface ReportOrder {
  id: string;
  client: string;
  created_at: Date;
  status: string;
  mode: string;
  gift_card_code: string;
  amount: number;
  completed_at: Date | null;
  attempts: { request_id: string; state: string; partner_status: string | null; error_code: string | null }[];
  cards: { partner_card_id: string; request_id: string; role: 'order' | 'surplus' | 'mismatch'; amount: number; gift_card_code: string }[];
}

/** Failed and needs_attention orders sharing a cause (the operations page's "Failures by cause"). */
export interface FailureGroup {
  status: string;
  /** The order's error code ('' when none). */
  code: string;
  /** The partner's last error code for the order's latest request ID ('' when none). */
  partnerCode: string;
  /** The partner's message (or the order's), ids and times folded to "…". */
  message: string;
  count: number;
  firstSeen: Date;
  lastSeen: Date;
  latestOrderId: string;
}

/** An order as the operators' filter lists it. */
export interface FilteredOrder extends OrderSummary {
  errorCode: string | null;
  errorMessage: string | null;
  metadata: Record<string, unknown> | null;
}

/**
 * Money in doubt: orders waiting on a request ID of unknown outcome (it may or may not have been billed),
 * by order status (in_progress: within the unknown-outcome window; needs_attention: past it).
 */
export interface MoneyInDoubt {
  status: string;
  orders: number;
  /** Sum of their face values, in minor units. */
  amount: number;
  /** Since when the oldest of them has waited on its ID's outcome. */
  oldest: Date;
}
