import { createHash, timingSafeEqual } from 'node:crypto';
import type { SimConfig } from '@cardpull/config';
import {
  hexDigestsEqual,
  hmacHex,
  parseAuthorization,
  signaturePayload,
  signingToken,
  type SignatureForm,
} from '@cardpull/partner-client';
import type { StaleTimestampCode } from '@cardpull/sim-contract';
import type { ParsedBody } from '../common/request-context';
import { PartnerError } from '../common/partner-error';

export interface SignedRequest {
  method: string;
  /** The path (and query, if any) exactly as received. */
  path: string;
  host: string | undefined;
  authorization: string | undefined;
  body: ParsedBody;
}

export const FORMS: readonly SignatureForm[] = ['example', 'formula'];

/** The accepted Timestamp difference, and the 401 code beyond it. */
export interface TimestampPolicy {
  windowS: number;
  staleCode: StaleTimestampCode;
}

/**
 * The spec's Authentication rules (see docs/PARTNER-API.md, Signature). Returns null when the request
 * is accepted, otherwise the 401 to answer:
 *  - header missing or malformed, unknown API key or identifier: `unauthorized`;
 *  - Timestamp further than the window (SIM_TIMESTAMP_WINDOW_S) from the partner's clock (the machine's
 *    plus SIM_CLOCK_OFFSET_S): `unauthorized` by default (the window is not shown by the spec; our choice:
 *    the credentials are well-formed but the request is not accepted), or the code SIM_STALE_TIMESTAMP_CODE
 *    names (`invalid_signature`: a partner that does not say it was the time);
 *  - no candidate token gives the signature: `invalid_signature`.
 * Every form the spec allows is a candidate: with or without the identifier, a GET's payload part empty or
 * left out, the URL from the Host header or from SIM_PUBLIC_BASE_URL.
 */
export function verifySignature(
  config: SimConfig,
  req: SignedRequest,
  /** The partner's now (the simulator's clock, offset included). */
  nowMs = Date.now(),
  clock: TimestampPolicy = { windowS: config.SIM_TIMESTAMP_WINDOW_S, staleCode: config.SIM_STALE_TIMESTAMP_CODE },
  /** The token forms accepted (PUT /_sim/readings `signature_forms`; both by default). */
  forms: readonly SignatureForm[] = FORMS,
): PartnerError | null {
  const auth = parseAuthorization(req.authorization);
  if (!auth) {
    return new PartnerError(401, 'unauthorized', 'Missing or malformed Authorization header');
  }
  // Both checked (no early exit), each in constant time.
  const knownKey = safeEqual(auth.apiKey, config.SIM_API_KEY);
  const knownId = safeEqual(auth.identifier, config.SIM_IDENTIFIER);
  if (!knownKey || !knownId) {
    return new PartnerError(401, 'unauthorized', 'Unknown API key or identifier');
  }
  if (Math.abs(nowMs / 1000 - Number(auth.timestamp)) > clock.windowS) {
    const message = clock.staleCode === 'unauthorized' ? `Timestamp is more than ${clock.windowS} seconds away from the server time` : 'Signature does not match the request';
    return new PartnerError(401, clock.staleCode, message);
  }
  let match = false;
  for (const token of candidateTokens(config, req, auth.identifier, auth.timestamp, forms)) {
    // Evaluated for every candidate: no early exit that would tell which form came close.
    match = hexDigestsEqual(hmacHex(token, config.SIM_SHARED_KEY), auth.signature) || match;
  }
  return match ? null : new PartnerError(401, 'invalid_signature', 'Signature does not match the request');
}

function candidateTokens(config: SimConfig, req: SignedRequest, identifier: string, timestamp: string, forms: readonly SignatureForm[]): string[] {
  const urls = [`http://${req.host ?? ''}${req.path}`];
  if (config.SIM_PUBLIC_BASE_URL) urls.push(`${config.SIM_PUBLIC_BASE_URL.replace(/\/$/, '')}${req.path}`);
  const payload = payloadOf(req.body);
  const omitOptions = req.method.toUpperCase() === 'GET' && payload === '' ? [false, true] : [false];
  const tokens: string[] = [];
  for (const url of urls) {
    for (const form of forms) {
      for (const omitEmptyPayload of omitOptions) {
        tokens.push(signingToken({ method: req.method, url, payload, identifier, timestamp, form, omitEmptyPayload }));
      }
    }
  }
  return tokens;
}

/** POST: the canonical JSON of the body. A body that is not JSON cannot be canonicalised: its text, lowercased. */
function payloadOf(body: ParsedBody): string {
  if (body.kind === 'json') return signaturePayload(body.value);
  if (body.kind === 'invalid') return body.raw.toLowerCase();
  return '';
}

function safeEqual(a: string, b: string): boolean {
  // Hashing first gives equal lengths, so timingSafeEqual never leaks the expected length.
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}
