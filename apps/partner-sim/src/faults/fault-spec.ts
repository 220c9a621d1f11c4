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
] as const;

export type FaultEndpoint = (typeof FAULT_ENDPOINTS)[number];
export type FaultMode = (typeof FAULT_MODES)[number];

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
  error_after_issue: ['cards', 'pull_requests'],
  come_back_later: ['cards'],
  async_error: ['pull_requests'],
};

/** Defaults of latency_ms per mode (hang: longer than any client timeout). */
export const DEFAULT_LATENCY_MS: Partial<Record<FaultMode, number>> = {
  latency: 5_000,
  hang: 120_000,
  come_back_later: 30_000,
};

/** Defaults of `status` for the modes that answer with a broken response. */
export const DEFAULT_STATUS: Partial<Record<FaultMode, number>> = {
  error_after_issue: 500,
  error_before_issue: 503,
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
  })
  .superRefine((spec, ctx) => {
    if (spec.endpoint !== 'any' && !MODE_APPLIES_TO[spec.mode].includes(spec.endpoint)) {
      ctx.addIssue({
        code: 'custom',
        path: ['mode'],
        message: `mode ${spec.mode} does not apply to endpoint ${spec.endpoint} (it applies to ${MODE_APPLIES_TO[spec.mode].join(', ')})`,
      });
    }
  });

export type FaultSpecInput = z.input<typeof faultSpecSchema>;
export type FaultSpec = z.output<typeof faultSpecSchema>;

export interface Fault extends FaultSpec {
  id: string;
  hits: number;
}
