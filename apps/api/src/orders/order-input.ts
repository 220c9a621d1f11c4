import { z } from 'zod';
import { isHttpUrl } from '@cardpull/config';
import { ApiError } from '@cardpull/platform';

/** Largest amount we accept (minor units): far above any gift card, far below integer trouble. */
export const MAX_AMOUNT = 100_000_000;
const MAX_METADATA_BYTES = 4_096;
const MAX_METADATA_DEPTH = 5;

/**
 * Whether `value` nests at most `max` levels. Iterative with an early exit: a hostile body nested
 * thousands of levels deep must cost nothing and never overflow the stack (a recursive walk, or
 * JSON.stringify, would throw a RangeError: a 500 instead of a 400).
 */
/** Whether a key or a string value anywhere in `value` holds a NUL character. */
function hasNul(value: unknown): boolean {
  let found = false;
  JSON.stringify(value, (key: string, v: unknown) => {
    if (key.includes('\0') || (typeof v === 'string' && v.includes('\0'))) found = true;
    return v;
  });
  return found;
}

function nestedAtMost(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [node, level] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (level + 1 > max) return false;
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, level + 1]);
  }
  return true;
}

/** Body of POST /v1/orders. Unknown fields are refused, so a typo never silently changes an order. */
export const createOrderSchema = z
  .strictObject({
    gift_card_code: z
      .string()
      .min(1, 'must not be empty')
      .max(100, 'must be at most 100 characters')
      .regex(/^[\x21-\x7E]+$/, 'must be printable ASCII without spaces'),
    amount: z
      .number('must be a number')
      .int('must be an integer (minor units, e.g. cents)')
      .positive('must be positive')
      .max(MAX_AMOUNT, `must be at most ${MAX_AMOUNT}`),
    mode: z.enum(['sync', 'async'], 'must be "sync" or "async"').default('sync'),
    metadata: z
      .record(z.string(), z.unknown(), 'must be a JSON object')
      // Depth first, and stop there when it fails: the size check serialises the value.
      .refine((m) => nestedAtMost(m, MAX_METADATA_DEPTH), { message: `must be nested at most ${MAX_METADATA_DEPTH} levels deep`, abort: true })
      .refine((m) => Buffer.byteLength(JSON.stringify(m)) <= MAX_METADATA_BYTES, `must be at most ${MAX_METADATA_BYTES} bytes of JSON`)
      // Postgres' jsonb cannot store a NUL character (in a key or a value): refused here, not a 500 there.
      .refine((m) => !hasNul(m), 'must not contain the NUL character (\\u0000)')
      .optional(),
    callback_url: z
      .string('must be a string')
      .max(2048, 'must be at most 2048 characters')
      .refine(isHttpUrl, 'must be an http(s) URL')
      .optional(),
  })
  .meta({
    examples: [{ gift_card_code: 'ACME-BOOKS-FIXED', amount: 2500, mode: 'sync', metadata: { cart_id: 'c-1234' }, callback_url: 'https://shop.example.com/hooks/cardpull' }],
  });

export type CreateOrderInput = z.output<typeof createOrderSchema>;

export function parseCreateOrder(body: unknown): CreateOrderInput {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ApiError(400, 'invalid_request', 'The body must be a JSON object');
  }
  const result = createOrderSchema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    throw new ApiError(400, 'invalid_request', `Unknown field(s): ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`);
  }
  const field = issue.path.length ? issue.path.map(String).join('.') : 'body';
  // "Required" only when the field is absent: a field of the wrong type gets the type's message.
  const absent = issue.path.length === 1 && !Object.prototype.hasOwnProperty.call(body, issue.path[0]!);
  const message = issue.code === 'invalid_type' && absent ? 'is required' : issue.message;
  throw new ApiError(400, 'invalid_request', `${field}: ${message}`);
}

/** An Idempotency-Key as the API takes one: 1-255 visible ASCII characters. */
export const isIdempotencyKey = (value: unknown): value is string => typeof value === 'string' && value.length <= 255 && /^[\x21-\x7E]+$/.test(value);

/** Idempotency-Key: required, 1-255 visible ASCII characters. */
export function parseIdempotencyKey(header: unknown): string {
  if (header === undefined || header === '') {
    throw new ApiError(400, 'idempotency_key_missing', 'The Idempotency-Key header is required');
  }
  if (!isIdempotencyKey(header)) {
    throw new ApiError(400, 'idempotency_key_invalid', 'Idempotency-Key must be 1-255 visible ASCII characters');
  }
  return header;
}

/** `?wait=N`: seconds to hold the answer until the order is terminal, at most 30. */
export function parseWait(value: unknown): number {
  if (value === undefined || value === '') return 0;
  if (typeof value !== 'string' || !/^\d{1,2}$/.test(value) || Number(value) > 30) {
    throw new ApiError(400, 'invalid_request', 'wait must be an integer number of seconds between 0 and 30');
  }
  return Number(value);
}

/** A UUID as Postgres reads one: anything else would make the query fail (a 500) instead of "not found". */
export const isUuid = (value: string): boolean => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);

/** Orders are JSON: a body of any other type is refused before it is read as one. */
export function requireJson(contentType: unknown): void {
  if (typeof contentType !== 'string' || !/^application\/json\s*(;|$)/i.test(contentType)) {
    throw new ApiError(415, 'unsupported_media_type', 'Content-Type must be application/json');
  }
}
