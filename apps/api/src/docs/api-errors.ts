import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { envelope } from '@cardpull/platform';
import { schemaRef } from './schemas';

interface ApiErrorDoc {
  status: number;
  /** When the API answers it. */
  when: string;
  /** A message as the API writes it. */
  example: string;
}

/**
 * Every error code of the internal API, with its HTTP status: the `new ApiError(...)` of apps/api and the
 * envelope codes of libs/platform/src/error-handling.ts (Fastify's own body errors, unknown routes, 500).
 * test/observability/openapi.e2e-spec.ts fails when the sources answer a code that is not here.
 */
export const API_ERRORS = {
  invalid_request: {
    status: 400,
    when: 'Malformed input: a body field (the message names it), an unknown body field or query parameter, a bad `wait`, `limit`, `status` or `cursor`, a body that is not a JSON object, or a body Fastify could not read as sent',
    example: 'amount: must be an integer (minor units, e.g. cents)',
  },
  invalid_json: { status: 400, when: 'The body is not valid JSON, or is empty', example: 'The request body is not valid JSON' },
  idempotency_key_missing: { status: 400, when: 'POST /v1/orders without an Idempotency-Key header', example: 'The Idempotency-Key header is required' },
  idempotency_key_invalid: {
    status: 400,
    when: 'Idempotency-Key is not 1-255 visible ASCII characters',
    example: 'Idempotency-Key must be 1-255 visible ASCII characters',
  },
  unauthorized: {
    status: 401,
    when: 'No `Authorization: Bearer <key>` header, or a key that is not in API_KEYS',
    example: 'Missing or malformed Authorization header: expected "Bearer <API key>"',
  },
  forbidden: { status: 403, when: 'The API key lacks the scope the route needs (orders:write, orders:read)', example: 'This API key lacks the scope orders:write' },
  order_not_found: { status: 404, when: 'No order with this id for this API client', example: 'No order 0193a1f2-7c4e-7d2a-9b1e-3f5c6d7e8a90' },
  gift_card_not_found: {
    status: 404,
    when: "The gift card code is not in the partner's catalog as last read successfully (our cached copy; a miss starts a read of the partner in the background). Never answered while the catalog cannot be read: that is `catalog_unavailable`",
    example: 'Gift card NOPE-CARD not found',
  },
  not_found: { status: 404, when: 'No such route', example: 'Cannot GET /v1/nothing' },
  idempotency_key_reused: {
    status: 409,
    when: 'The Idempotency-Key was already used by this client with a different body (the same body is a replay: 200 with the order)',
    example: 'This Idempotency-Key was already used with a different request body',
  },
  too_many_attempts: {
    status: 429,
    when: 'Too many unknown API keys from this address within a minute (AUTH_FAILURES_PER_MINUTE): every key is refused until the minute ends',
    example: 'Too many failed authentications from this address; try again in a minute',
  },
  too_many_requests: {
    status: 429,
    when: "More than RATE_LIMIT_PER_CLIENT requests of this API client within RATE_LIMIT_WINDOW_MS (counted across all API processes in Redis): wait the answer's Retry-After (seconds)",
    example: 'ThrottlerException: Too Many Requests',
  },
  payload_too_large: { status: 413, when: 'The body is larger than 16 KiB', example: 'The request body is too large' },
  unsupported_media_type: { status: 415, when: 'The body is not sent as `Content-Type: application/json`', example: 'Content-Type must be application/json' },
  invalid_amount: {
    status: 422,
    when: "The amount is not one of the gift card's facial values (fixed amounts, or min/max/step), checked against the cached catalog",
    example: 'Invalid amount 1234 for gift card ACME-BOOKS-FIXED: allowed amounts are 1000, 2500, 5000, 10000',
  },
  gift_card_withdrawn: {
    status: 422,
    when: "The gift card was in the partner's catalog and the partner withdrew it (the catalog change feed recorded its removal, and it is not listed again); the message says when. Orders accepted before keep going",
    example: "Gift card SOLD-OUT-FIXED was withdrawn from the partner's catalog at 2026-11-30T09:15:02.118Z",
  },
  amount_withdrawn: {
    status: 422,
    when: "The amount was one of the gift card's facial values and the partner withdrew it (a face value change the catalog change feed recorded); the message says when, and what is offered now",
    example: "Amount 2500 of gift card ACME-BOOKS-FIXED was withdrawn from the partner's catalog at 2026-11-30T09:15:02.118Z; allowed amounts are 1000, 5000, 10000",
  },
  callback_not_configured: {
    status: 422,
    when: 'callback_url was given but the client has no CALLBACK_SECRETS entry to sign its callbacks; or a subscription asked for a client without a CALLBACK_URLS address (or secret) to send its events to',
    example: 'Client shop has no callback secret (CALLBACK_SECRETS): its callbacks could not be signed',
  },
  spend_limit_exceeded: {
    status: 422,
    when: "The order is above the client's largest order (face value), or its cost would take what the client's orders of the day (UTC) reserved above its daily limit (SPEND_LIMITS, at cost); the message gives the limit and what remains",
    example: "This client's orders of today (UTC) reserved 1990000 of its daily limit 2000000 (SPEND_LIMITS, at cost): 10000 remains, less than this order's cost 24125",
  },
  callback_url_refused: {
    status: 422,
    when: 'callback_url is not allowed: outside local runs it must be https and must not name a loopback, private or link-local address; a client with CALLBACK_ALLOWED_HOSTS may name only those hosts',
    example: 'callback_url host 10.1.2.3 is a loopback, private or link-local address',
  },
  internal_error: { status: 500, when: 'An unexpected error; the detail is in the service log under the correlation id (X-Correlation-Id)', example: 'Internal error; see the service log for this correlation id' },
  database_unavailable: {
    status: 503,
    when: 'Our database gave no connection in time (the service is overloaded) or cannot be reached. Nothing was done: try again after Retry-After, with the same Idempotency-Key for a creation',
    example: 'The service is busy (no database connection within 5 s); nothing was done: try again in 1 s',
  },
  pricing_refused: {
    status: 503,
    when: "The gift card's discount cannot be read in the configured unit (PARTNER_DISCOUNT_UNIT: a discount above 100 %, negative, or a fraction above 1): no order is accepted at a price that cannot be computed. An operator must check the setting; nothing was recorded",
    example: 'Gift card ACME-BOOKS-FIXED: a discount of 3.5 cannot be read as a fraction (0 to 1); check PARTNER_DISCOUNT_UNIT; the order was not accepted',
  },
  catalog_unavailable: {
    status: 503,
    when: "The partner's catalog could not be read (none stored yet: a cold start against a slow or failing partner; or the last read failed, or our copy is stale) and it does not list the gift card: we cannot tell whether it exists. A read is started in the background; nothing was done: try again after Retry-After, with the same Idempotency-Key",
    example: "The partner's catalog could not be read, so gift card ACME-BOOKS-FIXED could not be checked; nothing was done: try again in 5 s",
  },
  partner_unavailable: {
    status: 503,
    when: 'The partner did not answer and nothing is cached yet (balance, inventories); try again shortly',
    example: 'The partner did not answer and nothing is cached yet; try again shortly',
  },
} as const satisfies Record<string, ApiErrorDoc>;

export type ApiErrorCode = keyof typeof API_ERRORS;

/** Errors every authenticated route can answer. */
export const AUTH_ERRORS: readonly ApiErrorCode[] = ['unauthorized', 'forbidden', 'too_many_attempts', 'too_many_requests', 'internal_error', 'database_unavailable'];

/**
 * Documents the error answers of a route: one response per status, each code an example of the envelope
 * `{ errors: [{ code, message }], status }`, with when it happens.
 */
export function ApiErrors(...codes: ApiErrorCode[]): MethodDecorator & ClassDecorator {
  const byStatus = new Map<number, ApiErrorCode[]>();
  for (const code of new Set(codes)) byStatus.set(API_ERRORS[code].status, [...(byStatus.get(API_ERRORS[code].status) ?? []), code]);
  return applyDecorators(
    ...[...byStatus].map(([status, group]) =>
      ApiResponse({
        status,
        description: group.map((code) => `\`${code}\`: ${API_ERRORS[code].when}`).join('\n\n'),
        content: {
          'application/json': {
            schema: schemaRef('ErrorEnvelope'),
            examples: Object.fromEntries(group.map((code) => [code, { summary: code, value: envelope(status, code, API_ERRORS[code].example) }])),
          },
        },
      }),
    ),
  );
}

/** The table of every error code, for the document's introduction. */
export function errorTable(): string {
  const rows = Object.entries(API_ERRORS)
    .sort(([a, x], [b, y]) => x.status - y.status || a.localeCompare(b))
    .map(([code, doc]) => `| ${doc.status} | \`${code}\` | ${doc.when} |`);
  return ['| HTTP | code | when |', '|---|---|---|', ...rows].join('\n');
}
