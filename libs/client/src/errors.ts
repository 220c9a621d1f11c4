import type { ApiErrorCode } from './api-types';

export interface CardpullErrorInit {
  code: string;
  message: string;
  /** The HTTP status of the answer; 0 when no answer came. */
  status: number;
  /** The raw body of the answer: its JSON when it was JSON, else its text (undefined without an answer). */
  body?: unknown;
  /** The Idempotency-Key the request was sent with (createOrder): look the order up with it later. */
  idempotencyKey?: string;
  /** The answer's Retry-After, in seconds, when it had one. */
  retryAfterSeconds?: number;
  cause?: unknown;
}

/**
 * Every error of the client: an error answer of the API (`code` from its envelope, `status` the HTTP
 * status, `body` the raw answer), or no answer at all (CardpullNetworkError, status 0). Codes this version
 * of the client does not know come as a CardpullError itself; act on `code`.
 */
export class CardpullError extends Error {
  readonly code: string;
  readonly status: number;
  readonly body: unknown;
  readonly idempotencyKey?: string;
  readonly retryAfterSeconds?: number;

  constructor(init: CardpullErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.code = init.code;
    this.status = init.status;
    this.body = init.body;
    if (init.idempotencyKey !== undefined) this.idempotencyKey = init.idempotencyKey;
    if (init.retryAfterSeconds !== undefined) this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

/** No answer after every attempt (connection refused or reset, DNS, timeout). A POST may still have been stored: look it up by its key. */
export class CardpullNetworkError extends CardpullError {
  declare readonly code: 'network_error';
}

// One class per error code of the API (API_ERROR_STATUS, from the OpenAPI document).
export class InvalidRequestError extends CardpullError {
  declare readonly code: 'invalid_request';
}
export class InvalidJsonError extends CardpullError {
  declare readonly code: 'invalid_json';
}
export class IdempotencyKeyMissingError extends CardpullError {
  declare readonly code: 'idempotency_key_missing';
}
export class IdempotencyKeyInvalidError extends CardpullError {
  declare readonly code: 'idempotency_key_invalid';
}
export class UnauthorizedError extends CardpullError {
  declare readonly code: 'unauthorized';
}
export class ForbiddenError extends CardpullError {
  declare readonly code: 'forbidden';
}
export class OrderNotFoundError extends CardpullError {
  declare readonly code: 'order_not_found';
}
export class GiftCardNotFoundError extends CardpullError {
  declare readonly code: 'gift_card_not_found';
}
export class NotFoundError extends CardpullError {
  declare readonly code: 'not_found';
}
export class IdempotencyKeyReusedError extends CardpullError {
  declare readonly code: 'idempotency_key_reused';
}
export class PayloadTooLargeError extends CardpullError {
  declare readonly code: 'payload_too_large';
}
export class UnsupportedMediaTypeError extends CardpullError {
  declare readonly code: 'unsupported_media_type';
}
export class InvalidAmountError extends CardpullError {
  declare readonly code: 'invalid_amount';
}
export class GiftCardWithdrawnError extends CardpullError {
  declare readonly code: 'gift_card_withdrawn';
}
export class AmountWithdrawnError extends CardpullError {
  declare readonly code: 'amount_withdrawn';
}
export class CallbackNotConfiguredError extends CardpullError {
  declare readonly code: 'callback_not_configured';
}
export class CallbackUrlRefusedError extends CardpullError {
  declare readonly code: 'callback_url_refused';
}
export class SpendLimitExceededError extends CardpullError {
  declare readonly code: 'spend_limit_exceeded';
}
export class TooManyAttemptsError extends CardpullError {
  declare readonly code: 'too_many_attempts';
}
export class TooManyRequestsError extends CardpullError {
  declare readonly code: 'too_many_requests';
}
export class InternalError extends CardpullError {
  declare readonly code: 'internal_error';
}
export class PartnerUnavailableError extends CardpullError {
  declare readonly code: 'partner_unavailable';
}
export class PricingRefusedError extends CardpullError {
  declare readonly code: 'pricing_refused';
}
export class DatabaseUnavailableError extends CardpullError {
  declare readonly code: 'database_unavailable';
}
export class CatalogUnavailableError extends CardpullError {
  declare readonly code: 'catalog_unavailable';
}

type ErrorClass<C extends string> = new (init: CardpullErrorInit) => CardpullError & { readonly code: C };

/** The class of each code. Typed over every code of the document: a code added to the API fails the type-check here until it has its class. */
export const ERROR_CLASSES: { readonly [C in ApiErrorCode]: ErrorClass<C> } = {
  invalid_request: InvalidRequestError,
  invalid_json: InvalidJsonError,
  idempotency_key_missing: IdempotencyKeyMissingError,
  idempotency_key_invalid: IdempotencyKeyInvalidError,
  unauthorized: UnauthorizedError,
  forbidden: ForbiddenError,
  order_not_found: OrderNotFoundError,
  gift_card_not_found: GiftCardNotFoundError,
  not_found: NotFoundError,
  idempotency_key_reused: IdempotencyKeyReusedError,
  payload_too_large: PayloadTooLargeError,
  unsupported_media_type: UnsupportedMediaTypeError,
  invalid_amount: InvalidAmountError,
  gift_card_withdrawn: GiftCardWithdrawnError,
  amount_withdrawn: AmountWithdrawnError,
  callback_not_configured: CallbackNotConfiguredError,
  callback_url_refused: CallbackUrlRefusedError,
  spend_limit_exceeded: SpendLimitExceededError,
  too_many_attempts: TooManyAttemptsError,
  too_many_requests: TooManyRequestsError,
  internal_error: InternalError,
  partner_unavailable: PartnerUnavailableError,
  pricing_refused: PricingRefusedError,
  database_unavailable: DatabaseUnavailableError,
  catalog_unavailable: CatalogUnavailableError,
};

/**
 * The error of an answer: the class of its envelope's code, the base class for a code this client does not
 * know, and `http_<status>` when the body is not the API's envelope (a proxy's page, say).
 */
export function errorFromAnswer(status: number, body: unknown, extra: Pick<CardpullErrorInit, 'idempotencyKey' | 'retryAfterSeconds'> = {}): CardpullError {
  const first = (body as { errors?: unknown } | null)?.errors;
  const detail = Array.isArray(first) ? (first[0] as { code?: unknown; message?: unknown } | undefined) : undefined;
  const code = typeof detail?.code === 'string' ? detail.code : `http_${status}`;
  const message = typeof detail?.message === 'string' ? detail.message : `HTTP ${status} without the API's error envelope`;
  const Class: new (init: CardpullErrorInit) => CardpullError = Object.prototype.hasOwnProperty.call(ERROR_CLASSES, code) ? ERROR_CLASSES[code as ApiErrorCode] : CardpullError;
  return new Class({ code, message, status, body, ...extra });
}
