import { createHmac, timingSafeEqual } from 'node:crypto';

export const CALLBACK_HEADERS = {
  eventId: 'x-cardpull-event-id',
  eventType: 'x-cardpull-event-type',
  timestamp: 'x-cardpull-timestamp',
  signature: 'x-cardpull-signature',
} as const;

/**
 * Callback signature: `v1=` + hex(HMAC-SHA256(client secret, "<timestamp>.<raw body>")), the timestamp
 * (Unix seconds) in its own header. A receiver recomputes it over the raw body, compares in constant time
 * and refuses timestamps older than a few minutes (replays); the event id deduplicates redeliveries.
 */
export function signCallback(secret: string, timestamp: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export function verifyCallback(secret: string, timestamp: string, body: string, signature: string, toleranceS = 300, now = Date.now()): boolean {
  const ts = Number(timestamp);
  if (!Number.isInteger(ts) || Math.abs(now / 1000 - ts) > toleranceS) return false;
  const expected = Buffer.from(signCallback(secret, ts, body));
  const actual = Buffer.from(signature);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
