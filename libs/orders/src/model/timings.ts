import type { ServiceConfig } from '@cardpull/config';

/**
 * A lease that is not renewed while its call is in flight (the reconciler's re-send of a sync request ID):
 * the call's own deadline (an overall AbortSignal timeout, started right after the lease is taken) plus a
 * margin (up to 2 s) for the database round trips around it. A successor can only call once a dead
 * caller's call has certainly ended; a live caller that overruns its lease only loses the race to record
 * (transitions are conditional on the step), it never calls twice at once. The steps' own sends hold a
 * short lease instead (ORDER_LEASE_MS), renewed while their call is in flight (the worker's LeaseKeeper).
 * A lease is written and compared with the database's clock (now()), never a worker's.
 */
export const leaseMs = (t: Pick<ServiceConfig, 'PARTNER_TIMEOUT_MS' | 'PARTNER_TIMEOUT_SYNC_MS' | 'PARTNER_TIMEOUT_CREATE_MS' | 'PARTNER_TIMEOUT_POLL_MS'>): number => {
  const call = longestPullTimeoutMs(t);
  return call + Math.min(2_000, call);
};

/**
 * The longest deadline of a call a lease covers: sync pull, async creation and poll (PARTNER_TIMEOUT_*_MS,
 * each PARTNER_TIMEOUT_MS when unset). The reconciler's lease covers its reads of a pull request or card too.
 */
export const longestPullTimeoutMs = (t: Pick<ServiceConfig, 'PARTNER_TIMEOUT_MS' | 'PARTNER_TIMEOUT_SYNC_MS' | 'PARTNER_TIMEOUT_CREATE_MS' | 'PARTNER_TIMEOUT_POLL_MS'>): number =>
  Math.max(t.PARTNER_TIMEOUT_SYNC_MS || t.PARTNER_TIMEOUT_MS, t.PARTNER_TIMEOUT_CREATE_MS || t.PARTNER_TIMEOUT_MS, t.PARTNER_TIMEOUT_POLL_MS || t.PARTNER_TIMEOUT_MS);
