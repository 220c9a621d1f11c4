import { z } from 'zod';
import { AttemptState, OrderStatus, PullMode } from '@cardpull/db';
import { SUBSCRIBABLE_EVENTS, type OrderView } from '@cardpull/orders';
import { balanceSchema, giftCardSchema, inventorySchema } from '@cardpull/partner-client';
import { createOrderSchema } from '../orders/order-input';

/**
 * The response schemas of the internal API, in zod: the OpenAPI document is generated from them
 * (z.toJSONSchema, target openapi-3.0), and the suites check real responses against them, so the
 * document cannot describe an Order the API does not send.
 */

const timestamp = (description: string) => z.iso.datetime().meta({ description });
const errorDetail = z.strictObject({ code: z.string(), message: z.string() });

export const attemptSchema = z.strictObject({
  request_id: z.string().meta({ description: 'The partner request ID of this attempt (committed before it was first sent)' }),
  kind: z.enum(PullMode).meta({ description: 'sync: POST /cards; async: pull request, then polling' }),
  state: z.enum(AttemptState).meta({
    description: 'created, sent, succeeded, failed_definitive, or unknown (retried with the same request ID)',
  }),
  partner_status: z.string().nullable().meta({ description: "The partner's last status or error code for this request ID" }),
  error: errorDetail.nullable(),
  call_count: z.number().int().min(0).meta({ description: 'How many times this request ID was sent to the partner' }),
  created_at: timestamp('When the attempt (its request ID) was committed'),
  updated_at: timestamp('Last change'),
});

export const orderCardSchema = z.strictObject({
  id: z.string().meta({ description: "The partner's card id" }),
  code: z.string().nullable().meta({ description: 'The card code; masked (all but the last 4 characters) without the cards:read scope; null only when the card is unreadable' }),
  pin_code: z.string().nullable().meta({ description: 'The PIN; "****" without the cards:read scope; null when the card has none' }),
  expire_at: z.iso.datetime().nullable(),
  amount: z.number(),
  gift_card_code: z.string(),
  pdf_url: z.string().nullable().meta({ description: 'The link to the card as a PDF (it opens the card); masked like the code without the cards:read scope' }),
  unreadable: z.string().optional().meta({ description: "Only when the card cannot be opened: its key is not in CARD_ENCRYPTION_KEYS; says what to do. The card is the partner's and is kept" }),
});

/** A card of the order that is not its card: kept for a refund or reuse, never the client's to redeem. */
export const otherCardSchema = orderCardSchema.extend({
  code: z.string().nullable().meta({ description: 'Always masked (all but the last 4 characters), whatever the scopes: the card is held. Null only when the card is unreadable' }),
  pin_code: z.string().nullable().meta({ description: 'Always "****" (null when the card has none): the card is held' }),
  pdf_url: z.string().nullable().meta({ description: 'Always masked like the code: the link opens the card, and the card is held' }),
  role: z.enum(['surplus', 'mismatch']).meta({
    description: 'surplus: a second card for an order that has its card; mismatch: a card that differs from the order (the order needs attention)',
  }),
  request_id: z.string().meta({ description: 'The request ID the partner issued it for (quote it to the partner for a refund)' }),
  mismatch: z.string().nullable().meta({ description: 'How it differs from the order (gift card, amount), or null' }),
  held: z.literal(true).meta({
    description: "Always true: the partner billed this card, but it is not the order's card. It is kept for a refund or reuse by the operators, so its code, PIN and PDF link are masked for every caller, a key with cards:read included",
  }),
});

export const ORDER_EXAMPLE = {
  id: '0193a1f2-7c4e-7d2a-9b1e-3f5c6d7e8a90',
  idempotency_key: 'checkout-8841-card-1',
  client: 'shop',
  status: 'completed',
  mode: 'sync',
  gift_card_code: 'ACME-BOOKS-FIXED',
  amount: 2500,
  metadata: { cart_id: 'c-1234' },
  attempts: [
    {
      request_id: '4d1c9a8e-52b7-4f0e-8d3a-1b2c3d4e5f60',
      kind: 'sync',
      state: 'succeeded',
      partner_status: 'success',
      error: null,
      call_count: 1,
      created_at: '2026-11-22T10:15:00.120Z',
      updated_at: '2026-11-22T10:15:00.870Z',
    },
  ],
  card: {
    id: 'card_7f3e2d1c',
    code: 'K7Q2M9X4B8N3P6T1',
    pin_code: '4821',
    expire_at: '2027-11-22T00:00:00.000Z',
    amount: 2500,
    gift_card_code: 'ACME-BOOKS-FIXED',
    pdf_url: 'https://partner.example.com/cards/card_7f3e2d1c.pdf',
  },
  other_cards: [],
  error: null,
  created_at: '2026-11-22T10:15:00.118Z',
  updated_at: '2026-11-22T10:15:00.872Z',
  completed_at: '2026-11-22T10:15:00.872Z',
} satisfies OrderView;

/** The Order resource (ARCHITECTURE.md "Internal REST contract"), exactly as toOrderView() builds it. */
export const orderSchema = z
  .strictObject({
    id: z.uuid().meta({ description: 'Order id (UUID v7: ordered by creation)' }),
    idempotency_key: z.string().meta({ description: 'The Idempotency-Key the order was created with' }),
    client: z.string().meta({ description: 'The API client (from API_KEYS) that owns the order' }),
    status: z.enum(OrderStatus).meta({
      description:
        'pending (stored, its first request ID possibly in flight) -> completed | failed, or -> in_progress (answered without a card) -> completed | failed | needs_attention; awaiting_funds / awaiting_stock while the partner said "not now"',
    }),
    mode: z.enum(PullMode),
    gift_card_code: z.string(),
    amount: z.number().int().meta({ description: 'Minor units (e.g. cents)' }),
    metadata: z.record(z.string(), z.unknown()).nullable().meta({ description: "The caller's metadata, as sent (null when none)" }),
    attempts: z.array(attemptSchema).meta({ description: 'One per partner request ID, oldest first' }),
    card: orderCardSchema.nullable().meta({ description: 'The card, once the order is completed' }),
    other_cards: z.array(otherCardSchema).meta({
      description:
        "Every other card the partner issued for this order's request IDs (nothing it billed is hidden); usually empty. Held for a refund or reuse: always masked, whatever the key's scopes (`card` is the order's card)",
    }),
    error: errorDetail.nullable().meta({ description: "Why the order failed, waits or needs attention (the partner's code and message)" }),
    created_at: timestamp('When the order was accepted'),
    updated_at: timestamp('Last change'),
    completed_at: z.iso.datetime().nullable().meta({ description: 'When the card was stored' }),
  })
  .meta({ example: ORDER_EXAMPLE });

export const orderResponseSchema = z.strictObject({ order: orderSchema });

export const orderListSchema = z.strictObject({
  orders: z.array(orderSchema).meta({ description: 'Newest first' }),
  next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page' }),
});

/** The error envelope of every non-2xx answer. */
export const errorEnvelopeSchema = z
  .strictObject({
    errors: z.array(errorDetail).min(1).meta({ description: 'One entry: `code` is stable (act on it), `message` is for humans' }),
    status: z.string().meta({ description: 'The HTTP status as text: bad_request, unauthorized, not_found, unprocessable_entity, ...' }),
  })
  .meta({ example: { errors: [{ code: 'order_not_found', message: 'No order 0193a1f2-7c4e-7d2a-9b1e-3f5c6d7e8a90' }], status: 'not_found' } });

const refreshedAt = z.iso.datetime().nullable().meta({ description: 'When our catalog copy was fetched from the partner' });
const fetchedAt = z.iso.datetime().meta({ description: 'When this copy was fetched from the partner (cached for PARTNER_CACHE_TTL_MS)' });
const stale = z.boolean().meta({ description: 'True when the partner could not be asked and this is an older copy' });

export const giftCardListSchema = z.strictObject({ gift_cards: z.array(giftCardSchema), refreshed_at: refreshedAt });
export const giftCardResponseSchema = z.strictObject({ gift_card: giftCardSchema, refreshed_at: refreshedAt });
export const inventoryResponseSchema = inventorySchema.extend({ fetched_at: fetchedAt, stale });
export const balanceResponseSchema = balanceSchema.extend({
  fetched_at: fetchedAt,
  stale,
  low: z.boolean().meta({ description: 'balance.amount < LOW_BALANCE_THRESHOLD' }),
  low_balance_threshold: z.number().meta({ description: 'LOW_BALANCE_THRESHOLD, in currency units' }),
});

export const subscriptionSchema = z
  .strictObject({
    event_type: z.enum(SUBSCRIBABLE_EVENTS).meta({ description: 'The event: `catalog.changed`, the changes of the partner\'s catalog, one signed callback per change batch' }),
    created_at: timestamp('When the client subscribed'),
    callback_url: z.string().nullable().meta({ description: "Where the events go: the client's CALLBACK_URLS address (null: none configured now, so none is sent)" }),
  })
  .meta({ example: { event_type: 'catalog.changed', created_at: '2026-11-30T09:00:00.000Z', callback_url: 'https://shop.example.com/hooks' } });
export const subscriptionListSchema = z.strictObject({ subscriptions: z.array(subscriptionSchema) });
export const subscriptionResponseSchema = z.strictObject({
  subscription: subscriptionSchema,
  created: z.boolean().meta({ description: 'False when the client was subscribed already (nothing changed)' }),
});

/** Components of the OpenAPI document, by name: responses are read as the API writes them (output). */
export const RESPONSE_SCHEMAS = {
  Order: orderSchema,
  OrderResponse: orderResponseSchema,
  OrderList: orderListSchema,
  ErrorEnvelope: errorEnvelopeSchema,
  GiftCardList: giftCardListSchema,
  GiftCardResponse: giftCardResponseSchema,
  InventoryResponse: inventoryResponseSchema,
  BalanceResponse: balanceResponseSchema,
  Subscription: subscriptionSchema,
  SubscriptionList: subscriptionListSchema,
  SubscriptionResponse: subscriptionResponseSchema,
};

/** Request bodies are read as the caller writes them (input: `mode` may be left out). */
export const REQUEST_SCHEMAS = { CreateOrderRequest: createOrderSchema };

export type SchemaName = keyof typeof RESPONSE_SCHEMAS | keyof typeof REQUEST_SCHEMAS;
export const schemaRef = (name: SchemaName) => ({ $ref: `#/components/schemas/${name}` });

type JsonSchema = Record<string, unknown>;

/**
 * zod -> OpenAPI 3.0 schema objects, with references between the named schemas. Drops what OpenAPI 3.0
 * does not know (`$id`, `examples` in a schema: the first becomes `example`), the long regular
 * expressions behind `format: date-time` / `uuid` (the format says it) and the safe-integer bounds.
 */
export function openApiSchemas(named: Record<string, z.ZodType>, io: 'input' | 'output'): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(named)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, {
    target: 'openapi-3.0',
    io,
    uri: (id) => `#/components/schemas/${id}`,
    override: ({ jsonSchema }) => {
      const s = jsonSchema as JsonSchema;
      if (s.format === 'date-time' || s.format === 'uuid') delete s.pattern;
      // z.number().int() bounds integers to the safe range: true, and noise in a document.
      if (s.minimum === Number.MIN_SAFE_INTEGER) delete s.minimum;
      if (s.maximum === Number.MAX_SAFE_INTEGER) delete s.maximum;
      if (Array.isArray(s.examples)) {
        s.example ??= s.examples[0];
        delete s.examples;
      }
    },
  });
  for (const schema of Object.values(schemas)) delete (schema as JsonSchema).$id;
  return schemas as Record<string, JsonSchema>;
}

// Compile-time guard: the schema has exactly OrderView's fields (nested too), and what it accepts is an
// OrderView. A field added to OrderView without this schema fails `npm run typecheck`.
type Out = z.output<typeof orderSchema>;
type SameKeys<A, B> = [keyof A] extends [keyof B] ? ([keyof B] extends [keyof A] ? true : false) : false;
type Assert<T extends true> = T;
export type OrderSchemaMatchesOrderView = [
  Assert<SameKeys<Out, OrderView>>,
  Assert<SameKeys<Out['attempts'][number], OrderView['attempts'][number]>>,
  Assert<SameKeys<NonNullable<Out['card']>, NonNullable<OrderView['card']>>>,
  Assert<SameKeys<Out['other_cards'][number], OrderView['other_cards'][number]>>,
  Assert<Out extends OrderView ? true : false>,
];
