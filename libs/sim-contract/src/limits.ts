import { z } from 'zod';

/**
 * The partner's rate limits as the simulator enforces them when told to (SIM_LIMITS, PUT /_sim/limits): per
 * kind of call, requests per second (a token bucket holding one second of requests) and requests in flight.
 * Beyond either the simulator answers 429 `rate_limited` with `Retry-After` (retry_after_s; 0: no
 * Retry-After header at all), before doing anything. Kinds: `create` (POST /cards, POST /pull_requests), `poll` (GET /pull_requests/:id), `read`
 * (catalog, inventory, balance, GET /cards/:id) and `any` (every partner call, counted as well).
 */
export const LIMIT_KINDS = ['create', 'poll', 'read', 'any'] as const;
export type LimitKind = (typeof LIMIT_KINDS)[number];

const limitSchema = z.strictObject({
  per_second: z.number().positive().max(100_000).optional(),
  in_flight: z.number().int().min(1).max(100_000).optional(),
  retry_after_s: z.number().int().min(0).max(3600).default(1),
});

export const simLimitsSchema = z.strictObject(Object.fromEntries(LIMIT_KINDS.map((k) => [k, limitSchema.optional()])) as Record<LimitKind, z.ZodOptional<typeof limitSchema>>);
export type SimLimitsInput = z.input<typeof simLimitsSchema>;
export type SimLimits = z.output<typeof simLimitsSchema>;

/** GET /_sim/limits: the limits, and what they refused and let through since the last reset. */
export interface SimLimitsView {
  limits: SimLimits;
  counts: Record<LimitKind, { admitted: number; refused: number; in_flight: number }>;
}
