import type { AttemptModel, CardModel, OrderModel, OrderStatus, OrderStep } from '@cardpull/db';

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

/** True only when A and B are the same union: the field lists below are checked against the schema by the compiler. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/**
 * The schema's field names (camelCase) become columns by one rule, `@map` to snake_case, which every
 * model of prisma/schema.prisma follows; a field that broke it would fail every statement that reads it.
 */
const column = (field: string): string => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The columns of `fields` for raw SQL under `alias`, each named as its field (`o.idempotency_key AS "idempotencyKey"`). */
export function columnsOf(alias: string, fields: readonly string[]): string {
  return fields.map((f) => `${alias}.${column(f)}${column(f) === f ? '' : ` AS "${f}"`}`).join(', ');
}

/**
 * The fields of an order the repositories read: every field of the schema's Order (prisma/schema.prisma,
 * where each is explained) but `disputedAt`, which only retention reads, and the order's price (`discountPpm`,
 * `cost`, `catalogSnapshot`), which only the money's reads and the ledger's triggers read. A field added to the schema fails
 * the build here until it is listed or left out on purpose.
 */
export const ORDER_FIELDS = [
  'id', 'client', 'idempotencyKey', 'requestHash', 'status', 'mode', 'giftCardCode', 'amount', 'metadata', 'errorCode',
  'errorMessage', 'nextStep', 'nextStepAt', 'stepSeq', 'leaseOwner', 'leaseExpiresAt', 'waitDeadline', 'callbackUrl',
  'callbackSecrets', 'createdAt', 'updatedAt', 'completedAt', 'cardId', 'traceParent',
] as const satisfies readonly (keyof OrderModel)[];
const ORDERS_LISTED: Same<(typeof ORDER_FIELDS)[number] | 'disputedAt' | 'discountPpm' | 'cost' | 'catalogSnapshot', keyof OrderModel> = true;

/**
 * Every field of the schema's Attempt but the two only the database writes, for the reconciler's index:
 * `inDoubt`, which Postgres computes from the state and the unknown-outcome window (a generated column), and
 * `unattended`, which its triggers set (migration 20261130150000_hot_card_store).
 */
export const ATTEMPT_FIELDS = [
  'requestId', 'orderId', 'seq', 'kind', 'state', 'partnerStatus', 'errorCode', 'errorMessage', 'callCount', 'firstSentAt',
  'lastSentAt', 'unknownSince', 'notFoundSince', 'declaredDeadAt', 'declaredDeadBy', 'createdAt', 'updatedAt',
] as const satisfies readonly (keyof AttemptModel)[];
const ATTEMPTS_LISTED: Same<(typeof ATTEMPT_FIELDS)[number] | 'inDoubt' | 'unattended', keyof AttemptModel> = true;
/** The columns of `attempts` a row is written with: all of them but `in_doubt` and `unattended` (the database's own). */
export const ATTEMPT_WRITTEN_COLUMNS: readonly string[] = ATTEMPT_FIELDS.map(column);

/** Every field of the schema's Card. */
export const CARD_FIELDS = [
  'id', 'orderId', 'requestId', 'partnerCardId', 'keyId', 'codeEnc', 'pinEnc', 'expireAt', 'amount', 'giftCardCode',
  'pdfUrl', 'pdfEnc', 'role', 'mismatch', 'createdAt', 'storedBy', 'completedFrom',
] as const satisfies readonly (keyof CardModel)[];
const CARDS_LISTED: Same<(typeof CARD_FIELDS)[number], keyof CardModel> = true;
void [ORDERS_LISTED, ATTEMPTS_LISTED, CARDS_LISTED];

/** An order row as the repositories read it: the schema's types, `metadata` as the JSON it is. */
export type OrderRow = Omit<Pick<OrderModel, (typeof ORDER_FIELDS)[number]>, 'metadata'> & { metadata: unknown };
export type AttemptRow = Pick<AttemptModel, (typeof ATTEMPT_FIELDS)[number]>;
/** A card row: the sealed columns as node-postgres returns bytea (Buffers). */
export type CardRow = Omit<Pick<CardModel, (typeof CARD_FIELDS)[number]>, 'codeEnc' | 'pinEnc' | 'pdfEnc'> & {
  codeEnc: Buffer;
  pinEnc: Buffer | null;
  pdfEnc: Buffer | null;
};

/** Columns of `orders` in the order of ORDER_FIELDS, for raw SQL (alias `o`). */
export const ORDER_COLUMNS = columnsOf('o', ORDER_FIELDS);

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
export const STEP_ORDER_COLUMNS = columnsOf('o', STEP_ORDER_FIELDS);

/** Columns of `attempts` (alias `a`) and `cards` (alias `c`), for raw SQL. */
export const ATTEMPT_COLUMNS = columnsOf('a', ATTEMPT_FIELDS);

export const CARD_COLUMNS = columnsOf('c', CARD_FIELDS);

export const ORDER_STATUSES = ['pending', 'in_progress', 'awaiting_funds', 'awaiting_stock', 'completed', 'failed', 'needs_attention'] as const;
