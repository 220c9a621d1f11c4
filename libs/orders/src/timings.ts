import type { ServiceConfig } from '@cardpull/config';

/** Settings the step logic reads, with the spec's guidance as defaults (ARCHITECTURE.md "Settings"). */
export type StepTimings = Pick<
  ServiceConfig,
  | 'PARTNER_TIMEOUT_MS'
  | 'SYNC_RETRY_FIRST_DELAY_MS'
  | 'SYNC_RETRY_INTERVAL_MS'
  | 'ASYNC_POLL_FIRST_DELAY_MS'
  | 'ASYNC_POLL_INTERVAL_MIN_MS'
  | 'ASYNC_POLL_INTERVAL_MAX_MS'
  | 'UNKNOWN_OUTCOME_WINDOW_MS'
  | 'ASYNC_MAX_ATTEMPTS'
  | 'AWAIT_RECHECK_INTERVAL_MS'
  | 'AWAIT_DEADLINE_MS'
  | 'CIRCUIT_RETRY_MS'
>;

/** Next poll of a pull request: uniformly between the min and max interval (jitter spreads the load). */
export function pollDelay(t: StepTimings, random = Math.random): number {
  return Math.round(t.ASYNC_POLL_INTERVAL_MIN_MS + random() * (t.ASYNC_POLL_INTERVAL_MAX_MS - t.ASYNC_POLL_INTERVAL_MIN_MS));
}

/**
 * Same-ID retry of a sync pull after an unknown outcome: the first one after SYNC_RETRY_FIRST_DELAY_MS
 * (spec: ~1 minute), the following ones every SYNC_RETRY_INTERVAL_MS (spec: ~10 s).
 */
export function syncRetryDelay(t: StepTimings, alreadyRetrying: boolean): number {
  return alreadyRetrying ? t.SYNC_RETRY_INTERVAL_MS : t.SYNC_RETRY_FIRST_DELAY_MS;
}

/**
 * Lease of a partner call: the call's own deadline (an overall AbortSignal timeout, started right after
 * the lease is taken) plus a margin (up to 2 s) for the database round trips around it. A successor can
 * only call once a dead caller's call has certainly ended; a live caller that overruns its lease only
 * loses the race to record (transitions are conditional on the step), it never calls twice at once.
 * 10 s + 2 s keeps a killed worker's in-flight orders resuming within 15 s (docs/BENCHMARKS.md).
 */
export const leaseMs = (t: StepTimings): number => t.PARTNER_TIMEOUT_MS + Math.min(2_000, t.PARTNER_TIMEOUT_MS);

/** Whether the unknown-outcome window that started at `since` has run out. */
export const windowExpired = (t: StepTimings, since: Date | null, now: number): boolean =>
  since !== null && now - since.getTime() >= t.UNKNOWN_OUTCOME_WINDOW_MS;
