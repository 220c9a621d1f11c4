import { z } from 'zod';

export const FAULT_ENDPOINTS = ['cards', 'pull_requests', 'pull_request_status', 'any'] as const;
export const FAULT_MODES = [
  'latency',
  'hang',
  'error_after_issue',
  'error_before_issue',
  'reset',
  'come_back_later',
  'async_error',
  'rate_limited',
  'wrong_card',
  'business_first',
  'read_lag',
  'accepted_202',
  'inventory_unlimited',
  'other_request_id',
] as const;

export type FaultEndpoint = (typeof FAULT_ENDPOINTS)[number];
export type FaultMode = (typeof FAULT_MODES)[number];

/**
 * Readings of the spec's silent points, as opposed to delivery faults. A reading is matched on its own (the
 * first reading of that mode that matches), so it combines with a delivery fault on the same request:
 *  - business_first: the partner checks business errors (gift card, amount, stock, funds) on the body of a
 *    repeated request ID BEFORE it looks at the ID (the spec does not show the order of its checks);
 *  - read_lag: GET /pull_requests/:id is served by a read copy that lags: 404 for latency_ms after creation
 *    (lag_from 'creation') or after the partner first answered 422 "already used" for the ID (lag_from
 *    'already_used': only IDs that were repeated);
 *  - accepted_202: "come back later" is 202 {"status": "processing"} instead of 409 pull_in_progress;
 *  - inventory_unlimited: GET /inventories/:code says available_amount "unlimited" (stocks []) while the stock
 *    is limited, zero included: pulls still meet out_of_stock;
 *  - other_request_id: the pull request in an answer (POST /pull_requests, GET /pull_requests/:id) carries a
 *    request_id other than the one asked (`shown`: the asked pull request relabeled, or another one whole).
 */
export const READING_MODES = ['business_first', 'read_lag', 'accepted_202', 'inventory_unlimited', 'other_request_id'] as const satisfies readonly FaultMode[];
export type ReadingMode = (typeof READING_MODES)[number];
export const isReading = (mode: FaultMode): mode is ReadingMode => (READING_MODES as readonly FaultMode[]).includes(mode);

/** Modes that act before the partner does anything, so they also hit a repeat of a known request ID. */
export const BEFORE_ANYTHING: readonly FaultMode[] = ['error_before_issue', 'rate_limited'];

/**
 * The kind of a partner request, as faults see it: the three pull endpoints, and `read` for every other
 * GET (gift cards, inventories, balance, GET /cards/:id), which only endpoint `any` reaches.
 */
export type RequestKind = 'cards' | 'pull_requests' | 'pull_request_status' | 'read';

const EVERY_KIND: readonly RequestKind[] = ['cards', 'pull_requests', 'pull_request_status', 'read'];

/** Where each mode means something; a fault for `any` applies only there. */
export const MODE_APPLIES_TO: Record<FaultMode, readonly RequestKind[]> = {
  latency: EVERY_KIND,
  hang: EVERY_KIND,
  error_before_issue: EVERY_KIND,
  reset: EVERY_KIND,
  rate_limited: EVERY_KIND,
  error_after_issue: ['cards', 'pull_requests'],
  come_back_later: ['cards'],
  async_error: ['pull_requests'],
  wrong_card: ['cards', 'pull_requests'],
  business_first: ['cards', 'pull_requests'],
  read_lag: ['pull_request_status'],
  accepted_202: ['cards'],
  // GET /inventories/:code is a `read`: only endpoint `any` reaches it.
  inventory_unlimited: ['read'],
  // POST /cards answers a card, which has no request_id: nothing to differ.
  other_request_id: ['pull_requests', 'pull_request_status'],
};

/** Defaults of latency_ms per mode (hang: longer than any client timeout). */
export const DEFAULT_LATENCY_MS: Partial<Record<FaultMode, number>> = {
  latency: 5_000,
  hang: 120_000,
  come_back_later: 30_000,
  read_lag: 3_000,
};

/** Defaults of `status` for the modes that answer with a broken response. */
export const DEFAULT_STATUS: Partial<Record<FaultMode, number>> = {
  error_after_issue: 500,
  error_before_issue: 503,
  rate_limited: 429,
};

export const faultSpecSchema = z
  .strictObject({
    endpoint: z.enum(FAULT_ENDPOINTS),
    mode: z.enum(FAULT_MODES),
    /** Fraction of the matching requests that are hit, drawn at random per request. */
    share: z.number().min(0).max(1).default(1),
    gift_card_codes: z.array(z.string().min(1)).min(1).optional(),
    request_ids: z.array(z.string().min(1)).min(1).optional(),
    /** Stop after hitting this many requests. */
    times: z.number().int().min(1).optional(),
    latency_ms: z.number().int().min(0).max(3_600_000).optional(),
    status: z.number().int().min(100).max(599).optional(),
    /** error_before_issue: answer the partner's envelope with this code (a business error, say) instead of an HTML page. */
    error_code: z.string().min(1).max(100).optional(),
    /** rate_limited, error_before_issue, come_back_later: the Retry-After header, in seconds... */
    retry_after_s: z.number().int().min(0).max(86_400).optional(),
    /** ...written as delay-seconds (default) or as an HTTP date. */
    retry_after_format: z.enum(['seconds', 'http_date']).optional(),
    /** wrong_card: the card issued is for the ordered amount plus this (default 100). */
    amount_delta: z.number().int().min(-1_000_000).max(1_000_000).optional(),
    /** read_lag: the lag runs from the pull request's creation (default) or from the first 422 "already used" of its ID. */
    lag_from: z.enum(['creation', 'already_used']).optional(),
    /**
     * other_request_id: `relabeled` (default): the asked pull request (its id, status, card) with request_id
     * `shown_request_id` or `<asked>-other`; `another`: another pull request whole (its id, request_id, status,
     * card): the one of `shown_request_id` if the partner has it, else the latest created other than the asked
     * (none: as relabeled). `another` also answers a GET for an ID the partner does not know.
     */
    shown: z.enum(['relabeled', 'another']).optional(),
    shown_request_id: z.string().min(1).max(200).optional(),
  })
  .superRefine((spec, ctx) => {
    if (spec.endpoint !== 'any' && !MODE_APPLIES_TO[spec.mode].includes(spec.endpoint)) {
      ctx.addIssue({
        code: 'custom',
        path: ['mode'],
        message: `mode ${spec.mode} does not apply to endpoint ${spec.endpoint} (it applies to ${MODE_APPLIES_TO[spec.mode].join(', ')})`,
      });
    }
    if (spec.error_code !== undefined && spec.mode !== 'error_before_issue') {
      ctx.addIssue({ code: 'custom', path: ['error_code'], message: 'only error_before_issue answers with an error code' });
    }
    if (spec.amount_delta !== undefined && spec.mode !== 'wrong_card') {
      ctx.addIssue({ code: 'custom', path: ['amount_delta'], message: 'only wrong_card changes the amount' });
    }
    if (spec.lag_from !== undefined && spec.mode !== 'read_lag') {
      ctx.addIssue({ code: 'custom', path: ['lag_from'], message: 'only read_lag has a lag_from' });
    }
    for (const field of ['shown', 'shown_request_id'] as const) {
      if (spec[field] !== undefined && spec.mode !== 'other_request_id') {
        ctx.addIssue({ code: 'custom', path: [field], message: `only other_request_id takes ${field}` });
      }
    }
    if ((spec.retry_after_s !== undefined || spec.retry_after_format !== undefined) && !['rate_limited', 'error_before_issue', 'come_back_later'].includes(spec.mode)) {
      ctx.addIssue({ code: 'custom', path: ['retry_after_s'], message: 'only rate_limited, error_before_issue and come_back_later send a Retry-After' });
    }
  });

export type FaultSpecInput = z.input<typeof faultSpecSchema>;
export type FaultSpec = z.output<typeof faultSpecSchema>;

export interface Fault extends FaultSpec {
  id: string;
  hits: number;
}

/** The Retry-After header a fault asks for, if any; an HTTP date by the partner's clock (`nowMs`). */
export function retryAfterHeader(fault: Fault, fallbackS?: number, nowMs = Date.now()): Record<string, string> {
  const seconds = fault.retry_after_s ?? fallbackS;
  if (seconds === undefined) return {};
  return {
    'Retry-After': fault.retry_after_format === 'http_date' ? new Date(nowMs + seconds * 1000).toUTCString() : String(seconds),
  };
}
