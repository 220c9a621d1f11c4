import type { AttemptRow, OrderRow } from './order.types';

// What the order aggregate says about an attempt, whoever asks: the worker's decision table
// (apps/worker/src/steps/decision) and an operator's re-drive (apps/api/src/admin/orders).

/** Markers kept in partner_status that are not a pull request's status. */
const NOT_A_PULL_STATUS = new Set(['exists', 'unknown', 'unauthorized', 'invalid_signature', 'gift_card_not_found', 'invalid_amount', 'out_of_stock', 'not_enough_funds']);

/** The partner showed the pull request itself (any status it gave, documented or not). */
export const pullRequestSeen = (a: Pick<AttemptRow, 'partnerStatus'>): boolean => a.partnerStatus !== null && !NOT_A_PULL_STATUS.has(a.partnerStatus);

/** The partner showed it knows the ID: the pull request itself, or a 422 "request_id already used". */
export const acknowledged = (a: Pick<AttemptRow, 'partnerStatus'>): boolean => pullRequestSeen(a) || a.partnerStatus === 'exists';

/**
 * An operator's re-drive of a needs_attention order: always the SAME request ID (invariant 2). A sync order
 * sends it again; an async one reads its pull request, or creates it again if the partner never showed it.
 */
export function redriveStep(order: Pick<OrderRow, 'mode'>, attempt: Pick<AttemptRow, 'partnerStatus'>): 'sync_call' | 'async_create' | 'async_poll' {
  if (order.mode === 'sync') return 'sync_call';
  return acknowledged(attempt) ? 'async_poll' : 'async_create';
}
