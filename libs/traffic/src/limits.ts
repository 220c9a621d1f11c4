import { z } from 'zod';
import type { CallKind } from '@cardpull/partner-client';

/** A scope of limits: a kind of call, or `any` (every call counts there too). */
export type Scope = CallKind | 'any';
export const SCOPES: readonly Scope[] = ['create', 'poll', 'read', 'any'];

export interface ScopeLimit {
  /** Calls per second, fleet-wide (a token bucket holding half a second, see scripts.ts); 0: unlimited. */
  perSecond: number;
  /** Calls in flight, fleet-wide; 0: unlimited. */
  inFlight: number;
}

export type PartnerLimits = Record<Scope, ScopeLimit>;

const limitSchema = z.strictObject({
  per_second: z.number().positive().max(100_000).optional(),
  in_flight: z.number().int().min(1).max(100_000).optional(),
});
const limitsSchema = z.strictObject({
  create: limitSchema.optional(),
  poll: limitSchema.optional(),
  read: limitSchema.optional(),
  any: limitSchema.optional(),
});

/**
 * PARTNER_LIMITS (already parsed as JSON by the settings) in depth: the kinds it may name and their
 * numbers; anything else is refused at start-up with the setting's name.
 */
export function parsePartnerLimits(value: unknown): PartnerLimits {
  const parsed = limitsSchema.safeParse(value);
  if (!parsed.success) {
    const problem = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new Error(`PARTNER_LIMITS: ${problem} (e.g. {"any":{"per_second":50},"create":{"in_flight":8}})`);
  }
  const of = (scope: Scope): ScopeLimit => ({ perSecond: parsed.data[scope]?.per_second ?? 0, inFlight: parsed.data[scope]?.in_flight ?? 0 });
  return { create: of('create'), poll: of('poll'), read: of('read'), any: of('any') };
}
