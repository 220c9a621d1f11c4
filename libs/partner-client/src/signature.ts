import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';

/**
 * The partner's request signature (spec, Authentication).
 *
 * token = VERB + "+" + URL + "+" + payload [+ "+" + identifier] + "+" + timestamp
 *  - `example` form (the spec's worked example, our default): with the identifier;
 *  - `formula` form (the spec's four-part formula): without it.
 * payload: for POST, the JSON body with keys sorted at every depth, no spaces, lowercased; for GET it
 * is empty (we keep the empty part, "GET+url++..."; the simulator also accepts the part omitted).
 * signature = hex(HMAC-SHA256(key = hex-decoded shared key, token)).
 */
export type SignatureForm = 'example' | 'formula';

/** JSON with object keys sorted at every depth and no whitespace outside strings. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value as Record<string, unknown>)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** The payload part of the token: canonical JSON lowercased; empty when there is no body (GET). */
export function signaturePayload(body: unknown): string {
  return body === undefined ? '' : canonicalJson(body).toLowerCase();
}

export interface TokenParts {
  method: string;
  /** Full URL: scheme, host and path, e.g. https://partner.example.com/partners/v1/cards */
  url: string;
  payload: string;
  identifier: string;
  timestamp: number | string;
  form: SignatureForm;
  /** GET only: leave the payload part out instead of keeping it empty ("GET+url+ts"). */
  omitEmptyPayload?: boolean;
}

export function signingToken(p: TokenParts): string {
  const parts = [p.method.toUpperCase(), p.url];
  if (!(p.omitEmptyPayload && p.payload === '')) parts.push(p.payload);
  if (p.form === 'example') parts.push(p.identifier);
  parts.push(String(p.timestamp));
  return parts.join('+');
}

/** The shared key as a KeyObject, made once per key (not parsed from hex on every call). */
const keyObjects = new Map<string, KeyObject>();

export function hmacHex(token: string, sharedKeyHex: string): string {
  let key = keyObjects.get(sharedKeyHex);
  if (!key) {
    if (keyObjects.size > 16) keyObjects.clear();
    key = createSecretKey(Buffer.from(sharedKeyHex, 'hex'));
    keyObjects.set(sharedKeyHex, key);
  }
  return createHmac('sha256', key).update(token, 'utf8').digest('hex');
}

export interface AuthorizationParts {
  apiKey: string;
  identifier: string;
  signature: string;
  timestamp: string;
}

export function formatAuthorization(a: AuthorizationParts): string {
  return `Bearer ${a.apiKey}, Id=${a.identifier}, Signature=${a.signature}, Timestamp=${a.timestamp}`;
}

/** Parses `Bearer <API_KEY>, Id=<IDENTIFIER>, Signature=<SIGNATURE>, Timestamp=<TIMESTAMP>`; null if malformed. */
export function parseAuthorization(header: string | undefined): AuthorizationParts | null {
  if (!header) return null;
  const match = /^Bearer\s+([^,\s]+)\s*,\s*Id=([^,\s]+)\s*,\s*Signature=([0-9a-fA-F]+)\s*,\s*Timestamp=(\d{1,12})\s*$/.exec(
    header,
  );
  if (!match) return null;
  const [, apiKey, identifier, signature, timestamp] = match as unknown as [string, string, string, string, string];
  return { apiKey, identifier, signature, timestamp };
}

/** Constant-time comparison of two hex digests (different lengths compare unequal, still without early exit on content). */
export function hexDigestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a.toLowerCase(), 'utf8');
  const right = Buffer.from(b.toLowerCase(), 'utf8');
  if (left.length !== right.length) {
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}

export interface SignerOptions {
  apiKey: string;
  identifier: string;
  sharedKeyHex: string;
  form: SignatureForm;
}

/** Builds the Authorization header of one request. */
export function signRequest(
  opts: SignerOptions,
  req: { method: string; url: string; body?: unknown },
  now: () => number = Date.now,
): string {
  const timestamp = Math.floor(now() / 1000);
  const token = signingToken({
    method: req.method,
    url: req.url,
    payload: signaturePayload(req.body),
    identifier: opts.identifier,
    timestamp,
    form: opts.form,
  });
  return formatAuthorization({
    apiKey: opts.apiKey,
    identifier: opts.identifier,
    signature: hmacHex(token, opts.sharedKeyHex),
    timestamp: String(timestamp),
  });
}
