import { costOf, discountInForce, discountPpm } from '@cardpull/partner-client';
import { sendRequest, type SimResponse } from '@cardpull/testing';
import { seedCatalog } from '../../../apps/partner-sim/src/catalog/seed';
import { type SimHandle } from '../../support/simulator';
import { authorizationOf, hmacHexOf, payloadOf, tokenOf } from './signer';

/** An answer of the simulator (the harness's SimResponse), its body loosely typed for the tests. */
export type Resp<T = any> = SimResponse<T>;

export interface CallOptions {
  method: 'GET' | 'POST';
  path: string;
  /** Sent as JSON and signed. */
  body?: unknown;
  /** Sent as is (e.g. not JSON); signed lowercased. */
  rawBody?: string;
  /** Sign this body instead of the one sent (a tampered request). */
  signedBody?: unknown;
  headers?: Record<string, string>;
  /** Token form: `example` (with the identifier, the default) or `formula`. */
  form?: 'example' | 'formula';
  /** GET: leave the empty payload part out ("GET+url+ts") instead of keeping it empty ("GET+url++ts"). */
  omitPayload?: boolean;
  sharedKeyHex?: string;
  apiKey?: string;
  identifier?: string;
  timestamp?: number;
  /** The URL put in the token (default: the one requested). */
  signedUrl?: string;
  /** null: no Authorization header; a string: this header as is. */
  authorization?: string | null;
  timeoutMs?: number;
}

/** One request to the simulator, signed with the test's own signer (see signer.ts). */
export async function call<T = any>(sim: SimHandle, o: CallOptions): Promise<Resp<T>> {
  const url = `${sim.baseUrl}${o.path}`;
  const timestamp = o.timestamp ?? Math.floor(Date.now() / 1000);
  const identifier = o.identifier ?? sim.config.SIM_IDENTIFIER;
  const signed = o.signedBody ?? o.body;
  const payload =
    o.rawBody !== undefined ? o.rawBody.toLowerCase() : signed !== undefined ? payloadOf(signed) : o.omitPayload ? undefined : '';
  const token = tokenOf({
    verb: o.method,
    url: o.signedUrl ?? url,
    payload,
    identifier: (o.form ?? 'example') === 'example' ? identifier : undefined,
    timestamp,
  });
  const signature = hmacHexOf(o.sharedKeyHex ?? sim.config.SIM_SHARED_KEY, token);
  const authorization =
    o.authorization === undefined ? authorizationOf(o.apiKey ?? sim.config.SIM_API_KEY, identifier, signature, timestamp) : o.authorization;
  const text = o.rawBody ?? (o.body === undefined ? undefined : JSON.stringify(o.body));
  // Signed here; sent and read (JSON, or the text of an injected error page) by the harness.
  return sendRequest<T>(url, {
    method: o.method,
    body: text,
    headers: {
      accept: 'application/json',
      ...(text === undefined ? {} : { 'content-type': 'application/json' }),
      ...(authorization === null ? {} : { authorization }),
      ...o.headers,
    },
    timeoutMs: o.timeoutMs,
  });
}

export const pullSync = (sim: SimHandle, giftCardCode: string, amount: unknown, requestId?: string, extra: Partial<CallOptions> = {}) =>
  call(sim, {
    method: 'POST',
    path: '/partners/v1/cards',
    body: { card: { gift_card_code: giftCardCode, amount } },
    headers: requestId === undefined ? {} : { 'X-RequestId': requestId },
    ...extra,
  });

export const createPullRequest = (sim: SimHandle, giftCardCode: string, amount: unknown, requestId: string, extra: Partial<CallOptions> = {}) =>
  call(sim, {
    method: 'POST',
    path: '/partners/v1/pull_requests',
    body: { pull_request: { gift_card_code: giftCardCode, amount, request_id: requestId } },
    ...extra,
  });

export const getPullRequest = (sim: SimHandle, requestId: string, extra: Partial<CallOptions> = {}) =>
  call(sim, { method: 'GET', path: `/partners/v1/pull_requests/${encodeURIComponent(requestId)}`, ...extra });

export const get = (sim: SimHandle, path: string, extra: Partial<CallOptions> = {}) => call(sim, { method: 'GET', path, ...extra });

export const balanceOf = async (sim: SimHandle): Promise<number> =>
  (await get(sim, '/partners/v1/balance')).body.balance.amount as number;

/** Polls a pull request until it leaves waiting/processing; returns every status seen, in order, deduplicated. */
export async function followPullRequest(sim: SimHandle, requestId: string, timeoutMs = 5_000): Promise<{ statuses: string[]; last: Resp }> {
  const statuses: string[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await getPullRequest(sim, requestId);
    const status = res.body.pull_request.status as string;
    if (statuses[statuses.length - 1] !== status) statuses.push(status);
    if (status === 'success' || status === 'error') return { statuses, last: res };
    if (Date.now() > deadline) throw new Error(`pull request ${requestId} still ${status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 15));
  }
}

/** What an error answer of the spec's table looks like: HTTP status, then the envelope's code and status. */
export const ENVELOPE = (httpStatus: number, code: string, status: string) => ({
  status: httpStatus,
  body: { errors: [{ code, message: expect.any(String) }], status },
});

/**
 * What a card of the seed catalog's gift card `code` costs now, in currency units: its face value less the
 * discount in force (the seed's scheduled discounts decide), as the simulator draws it from the balance.
 */
export function seedCostNow(code: string, amount: number): number {
  const giftCard = seedCatalog('staging').find((e) => e.giftCard.code === code)!.giftCard;
  return costOf(amount, discountPpm(discountInForce(giftCard, new Date()), 'percent')) / 100;
}
