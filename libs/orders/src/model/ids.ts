import { hash, randomBytes, randomUUID } from 'node:crypto';
import { canonicalJson } from '@cardpull/partner-client';

let entropy = Buffer.alloc(0);
let used = 0;

/** 16 fresh random bytes, cut from a block drawn 4 KB at a time (as randomUUID does): one draw per 256 ids. */
function random16(): Buffer {
  if (used + 16 > entropy.length) {
    entropy = randomBytes(4096);
    used = 0;
  }
  used += 16;
  return entropy.subarray(used - 16, used);
}

/**
 * UUID v7 (RFC 9562): time-ordered, so order ids sort by creation and serve as pagination cursors.
 */
export function uuidv7(now = Date.now()): string {
  const bytes = random16();
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
  return hash(
    'sha256',
    canonicalJson({
      amount: body.amount,
      callback_url: body.callback_url ?? null,
      gift_card_code: body.gift_card_code,
      metadata: body.metadata ?? null,
      mode: body.mode,
    }),
    'hex',
  );
}
