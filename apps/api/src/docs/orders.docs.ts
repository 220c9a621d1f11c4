import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiHeader, ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ORDER_STATUSES } from '@cardpull/orders';
import { createOrderSchema } from '../orders/order-input';
import { AUTH_ERRORS, ApiErrors } from './api-errors';
import { ORDER_EXAMPLE, schemaRef } from './schemas';

/** Name of the bearer scheme in the document (`Authorization: Bearer <API key>`). */
export const API_KEY_AUTH = 'api-key';

const WAIT_QUERY = ApiQuery({
  name: 'wait',
  required: false,
  description:
    'Long-poll: hold the answer up to N seconds (0-30) until the order is terminal (completed or failed); after N seconds the order is returned as it is. The pull itself always runs in the worker.',
  schema: { type: 'integer', minimum: 0, maximum: 30, default: 0 },
  example: 10,
});

const ORDER_ANSWER = { schema: schemaRef('OrderResponse'), examples: { completed: { summary: 'A completed sync order (key with cards:read)', value: { order: ORDER_EXAMPLE } } } };
const PENDING_EXAMPLE = {
  order: {
    ...ORDER_EXAMPLE,
    status: 'pending',
    attempts: [{ ...ORDER_EXAMPLE.attempts[0], state: 'created', partner_status: null, call_count: 0, updated_at: ORDER_EXAMPLE.created_at }],
    card: null,
    updated_at: ORDER_EXAMPLE.created_at,
    completed_at: null,
  },
};

/** A card that does not match its order: held for a refund or reuse, masked even for a key with cards:read. */
const MISMATCH_EXAMPLE = {
  order: {
    ...ORDER_EXAMPLE,
    status: 'needs_attention',
    card: null,
    other_cards: [
      {
        ...ORDER_EXAMPLE.card,
        id: 'card_9a8b7c6d',
        code: '************P6T1',
        pin_code: '****',
        amount: 5000,
        pdf_url: '**************************************************c6d.pdf',
        role: 'mismatch',
        request_id: ORDER_EXAMPLE.attempts[0].request_id,
        mismatch: 'amount 5000 instead of 2500',
        held: true,
      },
    ],
    error: { code: 'card_mismatch', message: `The partner's card card_9a8b7c6d for request ID ${ORDER_EXAMPLE.attempts[0].request_id} does not match the order: amount 5000 instead of 2500` },
    completed_at: null,
  },
};

export const OrdersDocs = () => applyDecorators(ApiTags('orders'), ApiBearerAuth(API_KEY_AUTH), ApiErrors(...AUTH_ERRORS));

export const CreateOrderDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Order a gift card',
      description:
        'Scope `orders:write`. Validates the gift card and amount against the cached catalog, commits the order and its first partner request ID, and answers: **202** with the order (usually `pending`), once it is committed; the pull is queued meanwhile (a pull whose queueing fails is queued again from the database). ' +
        'Retrying with the same Idempotency-Key and the same body is safe: **200** with the same order; with another body: 409 `idempotency_key_reused`. ' +
        'With `?wait=N` the answer waits until the order is terminal (or N seconds).',
    }),
    ApiHeader({
      name: 'Idempotency-Key',
      required: true,
      description: "Your key for this order (e.g. checkout id + line): 1-255 visible ASCII characters, unique per order within your API client.",
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$' },
      example: 'checkout-8841-card-1',
    }),
    WAIT_QUERY,
    ApiBody({
      required: true,
      description: 'The order. Unknown fields are refused (400), so a typo never silently changes an order.',
      schema: schemaRef('CreateOrderRequest'),
      examples: Object.fromEntries(
        (createOrderSchema.meta()?.examples as unknown[] | undefined ?? []).map((value, i) => [`order${i + 1}`, { summary: 'A card for a cart', value }]),
      ),
    }),
    ApiResponse({
      status: 202,
      description: 'Accepted: the order is stored, and its pull is being queued (or, with `wait`, it already ended).',
      content: { 'application/json': { schema: schemaRef('OrderResponse'), examples: { pending: { summary: 'Just accepted', value: PENDING_EXAMPLE }, ...ORDER_ANSWER.examples } } },
    }),
    ApiResponse({
      status: 200,
      description: 'A replay: this Idempotency-Key was already used with the same body; the order as it is now.',
      content: { 'application/json': ORDER_ANSWER },
    }),
    ApiErrors(
      'invalid_request',
      'invalid_json',
      'idempotency_key_missing',
      'idempotency_key_invalid',
      'gift_card_not_found',
      'idempotency_key_reused',
      'payload_too_large',
      'unsupported_media_type',
      'invalid_amount',
      'gift_card_withdrawn',
      'amount_withdrawn',
      'callback_not_configured',
      'callback_url_refused',
      'spend_limit_exceeded',
      'pricing_refused',
      'catalog_unavailable',
    ),
  );

export const GetOrderDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'One order',
      description:
        "Scope `orders:read`. Only your own orders. The card's code, PIN and PDF link are masked unless the key has `cards:read`; the cards of `other_cards` (a surplus or mismatched card, held for a refund or reuse) are always masked.",
    }),
    ApiParam({ name: 'id', description: 'The order id', schema: { type: 'string', format: 'uuid' }, example: ORDER_EXAMPLE.id }),
    WAIT_QUERY,
    ApiResponse({
      status: 200,
      description: 'The order',
      content: {
        'application/json': {
          ...ORDER_ANSWER,
          examples: { ...ORDER_ANSWER.examples, mismatch: { summary: 'A card that does not match the order: held, masked (key with cards:read)', value: MISMATCH_EXAMPLE } },
        },
      },
    }),
    ApiErrors('invalid_request', 'order_not_found'),
  );

export const GetOrderByKeyDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'One order, by your Idempotency-Key',
      description:
        'Scope `orders:read`. For a caller that lost our answer to its POST: finds the order this API client created with this Idempotency-Key. ' +
        "Only your own orders: another client's order with the same key is never found (404). Masked like `GET /v1/orders/{id}`. Send the key URL-encoded.",
    }),
    ApiParam({
      name: 'key',
      description: 'The Idempotency-Key the order was created with (URL-encoded)',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
      example: ORDER_EXAMPLE.idempotency_key,
    }),
    WAIT_QUERY,
    ApiResponse({ status: 200, description: 'The order', content: { 'application/json': ORDER_ANSWER } }),
    ApiErrors('invalid_request', 'idempotency_key_invalid', 'order_not_found'),
  );

export const ListOrdersDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'Your orders, newest first', description: 'Scope `orders:read`. Paged with `limit` and the `next_cursor` of the previous page.' }),
    ApiQuery({ name: 'status', required: false, schema: { type: 'string', enum: [...ORDER_STATUSES] } }),
    ApiQuery({ name: 'gift_card_code', required: false, schema: { type: 'string' }, example: 'ACME-BOOKS-FIXED' }),
    ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } }),
    ApiQuery({ name: 'cursor', required: false, schema: { type: 'string' }, description: '`next_cursor` of the previous page' }),
    ApiResponse({
      status: 200,
      description: 'A page of orders',
      content: { 'application/json': { schema: schemaRef('OrderList'), examples: { page: { summary: 'One order, last page', value: { orders: [ORDER_EXAMPLE], next_cursor: null } } } } },
    }),
    ApiErrors('invalid_request'),
  );
