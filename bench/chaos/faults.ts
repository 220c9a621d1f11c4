import { request } from 'undici';
import type { LedgerView } from '@cardpull/testing';
import type { SimLimitsInput, SimLimitsView } from '@cardpull/sim-contract';

/**
 * The simulator's control API (apps/partner-sim/README.md), and the partner faults of the chaos run.
 * A small client of its own: SimControl of @cardpull/testing lives beside the in-process simulator, which
 * would pull Nest modules into this script.
 */

export interface FaultSpec {
  endpoint: 'cards' | 'pull_requests' | 'pull_request_status' | 'any';
  mode:
    | 'latency'
    | 'hang'
    | 'error_after_issue'
    | 'error_before_issue'
    | 'reset'
    | 'come_back_later'
    | 'async_error'
    | 'rate_limited'
    | 'wrong_card'
    | 'business_first'
    | 'read_lag'
    | 'accepted_202';
  share?: number;
  times?: number;
  latency_ms?: number;
  status?: number;
  gift_card_codes?: string[];
  request_ids?: string[];
  error_code?: string;
  retry_after_s?: number;
  retry_after_format?: 'seconds' | 'http_date';
  amount_delta?: number;
}

export interface FaultView extends FaultSpec {
  id: string;
  hits: number;
}

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
 * The partner of the run reads the spec's silent points the hostile way, all at once (readings, each
 * matched on its own, so they combine with the delivery faults):
 *  - business_first: a repeat of a known request ID is checked for stock, funds, amount and gift card
 *    before its ID is looked at (with the scarce facial value of load.ts, a re-send after a lost answer
 *    meets out_of_stock while its first send holds a card);
 *  - read_lag: half the reads of a young pull request (younger than readLagMs) answer 404;
 *  - accepted_202: half the "come back later" answers are 202 {"status": "processing"}.
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
export function faultPlan(share: number, partnerTimeoutMs: number): FaultSpec[] {
  if (share <= 0) return [];
  const hangMs = Math.max(3 * partnerTimeoutMs, partnerTimeoutMs + 2_000);
  return [
    { endpoint: 'any', mode: 'business_first' },
    { endpoint: 'pull_request_status', mode: 'read_lag', share: 0.5, latency_ms: readLagMs(partnerTimeoutMs) },
    { endpoint: 'cards', mode: 'accepted_202', share: 0.5 },
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
  for (const f of faults) out[`${f.endpoint}/${f.mode}`] = (out[`${f.endpoint}/${f.mode}`] ?? 0) + f.hits;
  return out;
}
