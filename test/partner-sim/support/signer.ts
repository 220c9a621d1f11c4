import { createHmac } from 'node:crypto';

// The partner's signature, written again from the spec for the tests (deliberately NOT libs/partner-client),
// so a shared mistake in the library cannot make the simulator and its tests agree on a wrong signature.

function sortDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortDeep);
  if (value !== null && typeof value === 'object') {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) sorted[key] = sortDeep((value as Record<string, unknown>)[key]);
    return sorted;
  }
  return value;
}

/** POST payload: JSON with keys sorted alphabetically at every depth, no spaces, lowercased. */
export function payloadOf(body: unknown): string {
  return JSON.stringify(sortDeep(body)).toLowerCase();
}

export interface TokenInput {
  verb: string;
  url: string;
  /** undefined: the part is left out altogether (GET only). */
  payload: string | undefined;
  /** undefined: the spec's four-part formula; set: the worked example's form. */
  identifier: string | undefined;
  timestamp: number | string;
}

export function tokenOf(t: TokenInput): string {
  return [t.verb, t.url, t.payload, t.identifier, String(t.timestamp)].filter((p) => p !== undefined).join('+');
}

/** HMAC-SHA256 keyed with the bytes of the hex-decoded shared key, hex digest. */
export function hmacHexOf(sharedKeyHex: string, token: string): string {
  return createHmac('sha256', Buffer.from(sharedKeyHex, 'hex')).update(token, 'utf8').digest('hex');
}

export function authorizationOf(apiKey: string, identifier: string, signature: string, timestamp: number | string): string {
  return `Bearer ${apiKey}, Id=${identifier}, Signature=${signature}, Timestamp=${timestamp}`;
}
