import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Order } from './api-types';

/** The headers of a callback (lower case, as Node gives them). */
export const CALLBACK_HEADERS = {
  eventId: 'x-cardpull-event-id',
  eventType: 'x-cardpull-event-type',
  timestamp: 'x-cardpull-timestamp',
  signature: 'x-cardpull-signature',
} as const;

/** The statuses a callback announces; the event type is `order.<status>`. */
export type CallbackStatus = 'completed' | 'failed' | 'needs_attention';
export const CALLBACK_EVENT_TYPES = ['order.completed', 'order.failed', 'order.needs_attention', 'balance.low', 'catalog.changed'] as const;
export type CallbackEventType = (typeof CALLBACK_EVENT_TYPES)[number];

/**
 * A callback's body. `status` is the status the event announces; `order` is the order as it was when the
 * callback was sent (it may have moved on since). `id` is the same on every redelivery: deduplicate with it.
 */
export type CallbackEvent =
  | {
      [S in CallbackStatus]: { id: string; type: `order.${S}`; created_at: string; status: S; order: Order };
    }[CallbackStatus]
  | BalanceLowEvent
  | CatalogChangedEvent;

/**
 * `balance.low` (for a client of BALANCE_LOW_CALLBACK_CLIENTS): the partner account's float lasts less than
 * the runway thresholds at the recent spend. Sent when the runway becomes `approaching` or `below`.
 */
export interface BalanceLowEvent {
  id: string;
  type: 'balance.low';
  created_at: string;
  state: 'approaching' | 'below';
  /** Hours the float lasts at the recent spend. */
  runway_hours: number;
  /** What cards cost per minute lately, and the float, in minor units of `currency`. */
  spend_per_minute: number;
  float: number;
  currency: string;
  partner_account: string;
  thresholds_hours: { approaching: number; below: number };
}

/** A gift card's face values, as the partner's catalog writes them (amounts in minor units). */
export type FacialValues = { type: 'fixed'; amounts: number[] } | { type: 'free'; min_amount: number; max_amount: number; step_amount: number };

/** A gift card in an `added` or `removed` change: what a checkout needs of it (GET /v1/gift-cards/:code has the rest). */
export interface CatalogGiftCardSummary {
  name: string;
  brand: string;
  facial_values: FacialValues;
  discount: number;
  code_pin: boolean;
}

/** A discount the partner scheduled: `value` (in the partner's discount unit) from `date` on. */
export interface ScheduledDiscount {
  value: number;
  date: string;
}

interface CatalogChangeBase {
  /** The change's id (increasing): deduplicate or order with it. */
  id: string;
  gift_card_code: string;
  /** When cardpull found it (the catalog read that showed it was stored). */
  detected_at: string;
}

/** One change of the partner's catalog; narrow on `kind`. `before` and `after` are in the partner's words. */
export type CatalogChange = CatalogChangeBase &
  (
    | { kind: 'added'; before: null; after: CatalogGiftCardSummary }
    /** Orders for it are refused from now on (422 gift_card_withdrawn); orders accepted before go on. */
    | { kind: 'removed'; before: CatalogGiftCardSummary; after: null }
    /** `withdrawn_amounts` are refused from now on (422 amount_withdrawn); both list fixed amounts only (a free range's bounds are in before and after). */
    | { kind: 'face_values_changed'; before: FacialValues; after: FacialValues; withdrawn_amounts: number[]; added_amounts: number[] }
    | { kind: 'code_pin_changed'; before: boolean; after: boolean }
    /** `before` is the discount last announced: a move below the threshold (CATALOG_DISCOUNT_CHANGE_THRESHOLD) is not a change. */
    | { kind: 'discount_changed'; before: number; after: number }
    /** `scheduled`: the entries of next_discounts that are new. */
    | { kind: 'discount_scheduled'; before: ScheduledDiscount[]; after: ScheduledDiscount[]; scheduled: ScheduledDiscount[] }
  );

/**
 * `catalog.changed` (for a client subscribed with `PUT /v1/subscriptions/catalog.changed`): the partner's catalog
 * changed. One event per catalog read that showed changes, with all of them, oldest first.
 */
export interface CatalogChangedEvent {
  id: string;
  type: 'catalog.changed';
  created_at: string;
  detected_at: string;
  changes: CatalogChange[];
}

export type CallbackFailure = 'missing_header' | 'invalid_timestamp' | 'invalid_signature' | 'stale_timestamp' | 'invalid_body';

/** A callback refused by verifyCallback: answer it 400 (or 401) and do not act on it. */
export class CallbackVerificationError extends Error {
  constructor(
    readonly code: CallbackFailure,
    message: string,
  ) {
    super(message);
    this.name = 'CallbackVerificationError';
  }
}

/** Request headers: a fetch Headers, or Node's `req.headers` (any case, arrays joined). */
export type HeaderSource = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

export interface VerifyCallbackOptions {
  /** How far the callback's timestamp may be from now, either way (replays, clock skew). Default 300 s. */
  toleranceSeconds?: number;
  /** Now, in milliseconds since the epoch (tests). */
  now?: number;
}

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(',') : value;
}

const sign = (secret: string, timestamp: string, body: Buffer): Buffer =>
  Buffer.from(`v1=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`);

/**
 * Checks a callback of cardpull and returns its event. `rawBody` is the body exactly as received (verify
 * before any JSON parsing: a re-serialised body no longer matches). The signature header is
 * `v1=<hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>`; it may carry several signatures (separated by
 * commas or spaces), and `secret` may be several secrets, so a secret can be rotated on either side: the
 * callback is accepted when any signature matches any secret. Comparisons are constant-time (lengths
 * first). Then the timestamp must be within `toleranceSeconds` of now.
 * Throws CallbackVerificationError (its `code` says why) on any failure.
 */
export function verifyCallback(rawBody: string | Uint8Array, headers: HeaderSource, secret: string | readonly string[], options: VerifyCallbackOptions = {}): CallbackEvent {
  const tolerance = options.toleranceSeconds ?? 300;
  const secrets = typeof secret === 'string' ? [secret] : [...secret];
  if (!secrets.length || secrets.some((s) => typeof s !== 'string' || s.length === 0)) throw new TypeError('verifyCallback needs a non-empty secret');
  const timestamp = header(headers, CALLBACK_HEADERS.timestamp);
  const signatures = header(headers, CALLBACK_HEADERS.signature);
  if (!timestamp || !signatures) {
    throw new CallbackVerificationError('missing_header', `The callback lacks ${!timestamp ? CALLBACK_HEADERS.timestamp : CALLBACK_HEADERS.signature}`);
  }
  if (!/^\d{1,12}$/.test(timestamp.trim())) throw new CallbackVerificationError('invalid_timestamp', `${CALLBACK_HEADERS.timestamp} is not Unix seconds`);
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody);
  const given = signatures
    .split(/[\s,]+/)
    .filter((s) => s.startsWith('v1='))
    .map((s) => Buffer.from(s));
  let matched = false;
  for (const s of secrets) {
    const expected = sign(s, timestamp.trim(), body);
    // Every pair is compared (no early exit), each in constant time once the lengths agree.
    for (const candidate of given) if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) matched = true;
  }
  if (!matched) throw new CallbackVerificationError('invalid_signature', 'The callback signature does not match');
  const ageSeconds = Math.abs((options.now ?? Date.now()) / 1000 - Number(timestamp));
  if (ageSeconds > tolerance) {
    throw new CallbackVerificationError('stale_timestamp', `The callback was signed ${Math.round(ageSeconds)} s from now, more than ${tolerance} s`);
  }
  let event: unknown;
  try {
    event = JSON.parse(body.toString('utf8'));
  } catch {
    throw new CallbackVerificationError('invalid_body', 'The callback body is not JSON');
  }
  const e = event as (Partial<CallbackEvent> & { order?: unknown; status?: unknown; state?: unknown; changes?: unknown }) | null;
  const known =
    !!e && typeof e.id === 'string' && CALLBACK_EVENT_TYPES.includes(e.type as CallbackEventType) &&
    (e.type === 'balance.low'
      ? e.state === 'approaching' || e.state === 'below'
      : e.type === 'catalog.changed'
        ? Array.isArray(e.changes)
        : typeof e.order === 'object' && e.order !== null && e.type === `order.${String(e.status)}`);
  if (!known) {
    throw new CallbackVerificationError('invalid_body', `Not a callback event this client knows (type ${JSON.stringify(e?.type)}): update @cardpull/client`);
  }
  return e as CallbackEvent;
}
