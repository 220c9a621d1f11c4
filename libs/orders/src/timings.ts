import type { ServiceConfig } from '@cardpull/config';

/**
 * Lease of a partner call: the call's own deadline (an overall AbortSignal timeout, started right after
 * the lease is taken) plus a margin (up to 2 s) for the database round trips around it. A successor can
 * only call once a dead caller's call has certainly ended; a live caller that overruns its lease only
 * loses the race to record (transitions are conditional on the step), it never calls twice at once.
 * 10 s + 2 s keeps a killed worker's in-flight orders resuming within 15 s (docs/BENCHMARKS.md).
 * The lease is written and compared with the database's clock (now()), never a worker's.
 */
export const leaseMs = (t: Pick<ServiceConfig, 'PARTNER_TIMEOUT_MS'>): number => t.PARTNER_TIMEOUT_MS + Math.min(2_000, t.PARTNER_TIMEOUT_MS);
