import type { AttemptState, CardRole, OrderStatus, OrderStep, PullMode } from '@cardpull/db';

/** An order's step as the queue carries it. */
export interface ScheduledStep {
  orderId: string;
  stepSeq: number;
  /** The job's name: shown on the job dashboard; the worker reads the step from the order's row. */
  step: OrderStep;
  /** From now. Relative on purpose: when the step is due was decided by the database's clock, not this process's. */
  delayMs: number;
  /** The calling client, for a new order's first step: its fair share of the partner (fair-share.ts). */
  client?: string;
  /**
   * The order's trace (W3C traceparent), carried by the job (tracing on only): the trace active when the step
   * is scheduled, or else this one (the order's own, read from its row: a job re-created by the sweeper).
   */
  trace?: string | null;
}

export const TERMINAL_STATUSES: readonly OrderStatus[] = ['completed', 'failed'];

/** An order row as the repositories read it (snake_case columns mapped to camelCase). */
export interface OrderRow {
  id: string;
  client: string;
  idempotencyKey: string;
  requestHash: string;
  status: OrderStatus;
  mode: PullMode;
  giftCardCode: string;
  amount: number;
  metadata: unknown;
  errorCode: string | null;
  errorMessage: string | null;
  nextStep: OrderStep | null;
  nextStepAt: Date | null;
  stepSeq: number;
  leaseOwner: string | null;
  leaseExpiresAt: Date | null;
  waitDeadline: Date | null;
  callbackUrl: string | null;
  /** The API key that created the order had cards:read: only then do its callbacks carry the card's secrets. */
  callbackSecrets: boolean;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
  /** The order's card (set by the statement that completes it). */
  cardId: string | null;
  /** The W3C traceparent of the intake request (tracing on only): the order's trace. */
  traceParent: string | null;
}

export interface AttemptRow {
  requestId: string;
  orderId: string;
  seq: number;
  kind: PullMode;
  state: AttemptState;
  partnerStatus: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  callCount: number;
  firstSentAt: Date | null;
  lastSentAt: Date | null;
  unknownSince: Date | null;
  notFoundSince: Date | null;
  /** Set only by an operator's declaration that the ID is dead. */
  declaredDeadAt: Date | null;
  declaredDeadBy: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface CardRow {
  id: string;
  orderId: string;
  requestId: string;
  partnerCardId: string;
  keyId: string;
  codeEnc: Buffer;
  pinEnc: Buffer | null;
  expireAt: Date | null;
  amount: number;
  giftCardCode: string;
  /** Legacy: the PDF link in clear, from before pdf_enc (vault:reencrypt seals it). */
  pdfUrl: string | null;
  /** The PDF link, sealed like code and PIN (the link opens the card). */
  pdfEnc: Buffer | null;
  /** The order's card, a surplus, or a card that does not match its order. */
  role: CardRole;
  /** How it differs from its order, or null. */
  mismatch: string | null;
  createdAt: Date;
}

/** Columns of `orders` in the order of OrderRow, for raw SQL. */
export const ORDER_COLUMNS = `o.id, o.client, o.idempotency_key AS "idempotencyKey", o.request_hash AS "requestHash", o.status,
  o.mode, o.gift_card_code AS "giftCardCode", o.amount, o.metadata, o.error_code AS "errorCode",
  o.error_message AS "errorMessage", o.next_step AS "nextStep", o.next_step_at AS "nextStepAt", o.step_seq AS "stepSeq",
  o.lease_owner AS "leaseOwner", o.lease_expires_at AS "leaseExpiresAt", o.wait_deadline AS "waitDeadline",
  o.callback_url AS "callbackUrl", o.callback_secrets AS "callbackSecrets",
  o.created_at AS "createdAt", o.updated_at AS "updatedAt", o.completed_at AS "completedAt", o.card_id AS "cardId",
  o.trace_parent AS "traceParent"`;

/**
 * What a step needs of its order (StepsRepository.take answers only these): the columns the step runner,
 * the decision and its applier read. The others (client, key, metadata, callback, timestamps of the row)
 * are read where they are used. Every card's step reads this row, and each column more costs the driver
 * its parsing (a narrower row: about a third less of the take's client-side CPU, docs/BENCHMARKS.md).
 */
export const STEP_ORDER_FIELDS = [
  'id', 'status', 'mode', 'giftCardCode', 'amount', 'errorCode', 'errorMessage', 'nextStep', 'nextStepAt', 'stepSeq',
  'leaseOwner', 'leaseExpiresAt', 'waitDeadline', 'createdAt', 'cardId',
] as const satisfies readonly (keyof OrderRow)[];

export type StepOrder = Pick<OrderRow, (typeof STEP_ORDER_FIELDS)[number]>;

/** The columns of STEP_ORDER_FIELDS, for raw SQL (alias `o`). */
export const STEP_ORDER_COLUMNS = STEP_ORDER_FIELDS.map((f) => `o.${f.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}${/[A-Z]/.test(f) ? ` AS "${f}"` : ''}`).join(', ');

export const ATTEMPT_COLUMNS = `a.request_id AS "requestId", a.order_id AS "orderId", a.seq, a.kind, a.state,
  a.partner_status AS "partnerStatus", a.error_code AS "errorCode", a.error_message AS "errorMessage",
  a.call_count AS "callCount", a.first_sent_at AS "firstSentAt", a.last_sent_at AS "lastSentAt",
  a.unknown_since AS "unknownSince", a.not_found_since AS "notFoundSince", a.declared_dead_at AS "declaredDeadAt",
  a.declared_dead_by AS "declaredDeadBy", a.created_at AS "createdAt", a.updated_at AS "updatedAt"`;

export const CARD_COLUMNS = `c.id, c.order_id AS "orderId", c.request_id AS "requestId", c.partner_card_id AS "partnerCardId",
  c.key_id AS "keyId", c.code_enc AS "codeEnc", c.pin_enc AS "pinEnc", c.expire_at AS "expireAt", c.amount,
  c.gift_card_code AS "giftCardCode", c.pdf_url AS "pdfUrl", c.pdf_enc AS "pdfEnc", c.role, c.mismatch, c.created_at AS "createdAt"`;

export const ORDER_STATUSES = ['pending', 'in_progress', 'awaiting_funds', 'awaiting_stock', 'completed', 'failed', 'needs_attention'] as const;
