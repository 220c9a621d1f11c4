import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { canonicalJson } from '@cardpull/partner-client';

/**
 * UUID v7 (RFC 9562): time-ordered, so order ids sort by creation and serve as pagination cursors.
 */
export function uuidv7(now = Date.now()): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A partner request ID: random (v4), so it reveals nothing and cannot be guessed. */
export const newRequestId = (): string => randomUUID();

/** Hash of what an Idempotency-Key promises: the same key with another body is a conflict. */
export function requestHash(body: { gift_card_code: string; amount: number; mode: string; metadata?: unknown; callback_url?: string }): string {
  return createHash('sha256')
    .update(
      canonicalJson({
        amount: body.amount,
        callback_url: body.callback_url ?? null,
        gift_card_code: body.gift_card_code,
        metadata: body.metadata ?? null,
        mode: body.mode,
      }),
    )
    .digest('hex');
}
