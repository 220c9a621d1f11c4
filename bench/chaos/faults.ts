import { request } from 'undici';
import type { LedgerView } from '@cardpull/testing';
import type { Fault, FaultSpecInput, SimLimitsInput, SimLimitsView } from '@cardpull/sim-contract';

/**
 * The simulator's control API (apps/partner-sim/README.md), and the partner faults of the chaos run.
 * A small client of its own: SimControl of @cardpull/testing lives beside the in-process simulator, which
 * would pull Nest modules into this script.
 */

/** A fault as POST /_sim/faults takes it, and as GET /_sim/faults lists it (with its hits). */
export type FaultSpec = FaultSpecInput;
export type FaultView = Fault;

export class SimClient {
  constructor(readonly baseUrl: string) {}

  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await request(`${this.baseUrl}${path}`, {
      method: method as 'GET',
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      headersTimeout: 60_000,
      bodyTimeout: 60_000,
    });
    const text = await res.body.text();
    if (res.statusCode < 200 || res.statusCode >= 300) throw new Error(`simulator ${method} ${path} answered ${res.statusCode}: ${text.slice(0, 500)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  setBalance(amount: number) {
    return this.call('PUT', '/_sim/balance', { amount });
  }
  /** Every amount of a fixed gift card (no facial value), one facial value, or 'unlimited'. */
  setStock(giftCardCode: string, quantity: number | 'unlimited', facialValue?: number) {
    return this.call('PUT', '/_sim/stock', { gift_card_code: giftCardCode, quantity, ...(facialValue === undefined ? {} : { facial_value: facialValue }) });
  }
  addFault(spec: FaultSpec) {
    return this.call<{ id: string }>('POST', '/_sim/faults', spec);
  }
  async faults(): Promise<FaultView[]> {
    return (await this.call<{ faults: FaultView[] }>('GET', '/_sim/faults')).faults;
  }
  clearFaults() {
    return this.call('DELETE', '/_sim/faults');
  }
  ledger(): Promise<LedgerView> {
    return this.call('GET', '/_sim/ledger');
  }
  /** Replaces the partner's rate limits (PUT /_sim/limits); its counts start again. */
  setLimits(limits: SimLimitsInput): Promise<SimLimitsView> {
    return this.call('PUT', '/_sim/limits', limits);
  }
  /** The partner's rate limits and what they admitted and refused since the last PUT (GET /_sim/limits). */
  limits(): Promise<SimLimitsView> {
    return this.call('GET', '/_sim/limits');
  }
}

/** How long the read copy of GET /pull_requests/:id lags in the run: kept well under PULL_REQUEST_SETTLE_MS (settings.ts). */
export const readLagMs = (partnerTimeoutMs: number) => 2 * partnerTimeoutMs;

/**
 * How long the read copy lags after a 422 "already used" under the hostile readings: longer than any settle
 * window a service could wait for 404s (3 x PULL_REQUEST_SETTLE_MS when the run has one, at least 30 s).
 */
export const longReadLagMs = (settleMs: number | undefined) => Math.max(30_000, 3 * (Number.isFinite(settleMs) ? settleMs! : 0));

export interface FaultPlanOptions {
  /** CHAOS_HOSTILE_READINGS: the readings that would make a service declare a live request ID dead by inference. */
  hostileReadings: boolean;
  /** PULL_REQUEST_SETTLE_MS of the run, if it has one (the long read lag outlasts it). */
  settleMs?: number;
}

/**
 * The partner of the run reads the spec's silent points the hostile way, all at once (readings, each
 * matched on its own, so they combine with the delivery faults):
 *  - business_first: a repeat of a known request ID is checked for stock, funds, amount and gift card
 *    before its ID is looked at (with the scarce facial value of load.ts, a re-send after a lost answer
 *    meets out_of_stock while its first send holds a card);
 *  - read_lag: half the reads of a young pull request (younger than readLagMs) answer 404;
 *  - accepted_202: half the "come back later" answers are 202 {"status": "processing"}.
 * With `hostileReadings` (the default; CHAOS_HOSTILE_READINGS=false leaves them out), the readings that tempt
 * a service to declare a request ID dead on anything but the partner's word about it:
 *  - inventory_unlimited: a quarter of the inventory reads of a gift card with limited stock (the scarce
 *    facial value at 0 included) say "unlimited" while pulls still meet out_of_stock: no proof that an
 *    out_of_stock re-send was the ID's own stored answer;
 *  - read_lag after a 422 "already used": every read of a pull request whose ID was answered 422 "already
 *    used" is 404 for longReadLagMs after that answer, longer than any settle window, while it goes on to
 *    its card: 404s after a 422 prove nothing;
 *  - other_request_id: 5 % of the pull request reads answer another pull request whole (its request_id,
 *    status, card: an error or another order's card), and 5 % of the creation answers carry another
 *    request_id: an answer about another ID says nothing of this one.
 * Then the delivery fault families, each hitting `share` of the requests it matches (rate limits half as
 * often, cards for another amount a tenth as often). They are matched in this order and the first that
 * wins its draw applies:
 *  - rate_limited: 429 with Retry-After 1 s, nothing done (any request, reads included);
 *  - hang: the partner did the work (card issued, pull request created) but holds the answer past our
 *    client timeout: unknown outcome, same request ID later;
 *  - error_after_issue: card issued, answer an HTML 500: unknown outcome;
 *  - reset: work done, TCP connection destroyed without an answer: unknown outcome;
 *  - come_back_later: 409 pull_in_progress (or 202) to every call for a while, then the card;
 *  - async_error: the pull request ends in `error`: definitive, a new request ID (ASYNC_MAX_ATTEMPTS bounds it);
 *  - error_before_issue 503 on polls: the poll fails, the pull request is untouched;
 *  - wrong_card: the card issued is for another amount (the order needs attention: card_mismatch).
 */
export function faultPlan(share: number, partnerTimeoutMs: number, opts: FaultPlanOptions = { hostileReadings: true }): FaultSpec[] {
  if (share <= 0) return [];
  const hangMs = Math.max(3 * partnerTimeoutMs, partnerTimeoutMs + 2_000);
  const hostile: FaultSpec[] = opts.hostileReadings
    ? [
        { endpoint: 'any', mode: 'inventory_unlimited', share: 0.25 },
        // Share 1 of the IDs it matches (only those answered 422 "already used"): a 200 between the 404s would end the run of 404s.
        { endpoint: 'pull_request_status', mode: 'read_lag', lag_from: 'already_used', latency_ms: longReadLagMs(opts.settleMs) },
        { endpoint: 'pull_request_status', mode: 'other_request_id', shown: 'another', share: 0.05 },
        { endpoint: 'pull_requests', mode: 'other_request_id', share: 0.05 },
      ]
    : [];
  return [
    { endpoint: 'any', mode: 'business_first' },
    { endpoint: 'pull_request_status', mode: 'read_lag', share: 0.5, latency_ms: readLagMs(partnerTimeoutMs) },
    { endpoint: 'cards', mode: 'accepted_202', share: 0.5 },
    ...hostile,
    { endpoint: 'any', mode: 'rate_limited', share: share / 2, retry_after_s: 1 },
    { endpoint: 'cards', mode: 'hang', share, latency_ms: hangMs },
    { endpoint: 'pull_requests', mode: 'hang', share, latency_ms: hangMs },
    { endpoint: 'cards', mode: 'error_after_issue', share },
    { endpoint: 'cards', mode: 'reset', share },
    { endpoint: 'pull_requests', mode: 'reset', share },
    { endpoint: 'cards', mode: 'come_back_later', share, latency_ms: 4 * partnerTimeoutMs },
    { endpoint: 'pull_requests', mode: 'async_error', share },
    { endpoint: 'pull_request_status', mode: 'error_before_issue', share, status: 503 },
    { endpoint: 'cards', mode: 'wrong_card', share: share / 10 },
    { endpoint: 'pull_requests', mode: 'wrong_card', share: share / 10 },
  ];
}

export async function applyFaults(sim: SimClient, plan: FaultSpec[]): Promise<void> {
  for (const f of plan) await sim.addFault(f);
}

/** Hits per fault (read just before they are cleared). */
export function faultHits(faults: FaultView[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const f of faults) {
    // The two read_lag readings apart: from creation, and after a 422 "already used".
    const key = `${f.endpoint}/${f.mode}${f.lag_from === 'already_used' ? '_after_422' : ''}`;
    out[key] = (out[key] ?? 0) + f.hits;
  }
  return out;
}
