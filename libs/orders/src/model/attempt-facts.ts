import type { AttemptState } from '@cardpull/db';
import type { AttemptRow, OrderRow } from './order.types';

// What the order aggregate says about an attempt, whoever asks: the worker's decision table
// (apps/worker/src/steps/decision) and an operator's re-drive (apps/api/src/admin/orders).

/** Markers kept in partner_status that are not a pull request's status. */
const NOT_A_PULL_STATUS = new Set(['exists', 'unknown', 'unauthorized', 'invalid_signature', 'gift_card_not_found', 'invalid_amount', 'out_of_stock', 'not_enough_funds']);

/** The partner showed the pull request itself (any status it gave, documented or not). */
export const pullRequestSeen = (a: Pick<AttemptRow, 'partnerStatus'>): boolean => a.partnerStatus !== null && !NOT_A_PULL_STATUS.has(a.partnerStatus);

/** The partner showed it knows the ID: the pull request itself, or a 422 "request_id already used". */
export const acknowledged = (a: Pick<AttemptRow, 'partnerStatus'>): boolean => pullRequestSeen(a) || a.partnerStatus === 'exists';

/** The attempt states of a request ID whose outcome is open: never sent, sent, or of unknown outcome. */
export const OPEN_ATTEMPT_STATES: readonly AttemptState[] = ['created', 'sent', 'unknown'];
/** The request ID may still yield a card and only the partner's word or an operator's declaration ends it. */
export const isOpenAttempt = (state: string | null | undefined): boolean => !!state && (OPEN_ATTEMPT_STATES as readonly string[]).includes(state);
const OPEN_STATES_SQL = OPEN_ATTEMPT_STATES.map((s) => `'${s}'`).join(', ');

/**
 * SQL: attempt `a` may still yield a card, so someone still asks about it and its order must stay live:
 *  - its outcome is open (OPEN_STATES_SQL);
 *  - or it is async and an operator declared it dead less than `recheckMs` ago: a GET cannot issue a card,
 *    so its pull request is still read, and a card that shows up is stored and flagged;
 *  - or a version before 2026-11-25 declared it dead by inference (the stored answer of a failed first
 *    call; used without a pull request) less than `recheckMs` ago: re-checked the way it was then.
 * `recheckMs` is the SQL text of a parameter (RECONCILE_DEAD_RECHECK_MS, in ms).
 */
export const mayYieldCardSql = (a: string, recheckMs: string): string => `(${a}.state IN (${OPEN_STATES_SQL})
  OR (${a}.state = 'failed_definitive' AND (
       (${a}.declared_dead_at IS NOT NULL AND ${a}.kind = 'async' AND ${a}.declared_dead_at > now() - make_interval(secs => ${recheckMs}::float8 / 1000))
    OR (${a}.declared_dead_at IS NULL AND ${a}.error_code IN ('stored_answer', 'used_without_pull_request') AND ${a}.updated_at > now() - make_interval(secs => ${recheckMs}::float8 / 1000)))))`;

/**
 * SQL: the predicate of the attempts' partial index `attempts_recheck_request_id_idx` (migration
 * 20261130150000_hot_card_store), for attempt `a`: its outcome is in doubt (`in_doubt`, computed by Postgres from
 * the state and the unknown-outcome window), or it was open while its order had no next step (`unattended`,
 * set by the database's triggers), or it was declared dead (by an operator, or by inference before
 * 2026-11-25). Every attempt the reconciler asks about (reconcileCandidates: mayYieldCardSql, and no step of its
 * order asks about it) meets it, and so does every ID the money-in-doubt figures count. A query that reads
 * through that index names it as it is: Postgres uses a partial index only for a query whose conditions contain
 * its predicate. An ID a step is driving (never in doubt) is not in it: its take (created -> sent) and the store
 * of its card (sent -> succeeded) change no value the index reads, and both are HOT updates.
 */
export const recheckIndexSql = (a: string): string =>
  `(${a}.in_doubt OR ${a}.unattended OR ${a}.declared_dead_at IS NOT NULL OR ${a}.error_code IN ('stored_answer', 'used_without_pull_request'))`;

/**
 * An operator's re-drive of an order whose request ID is open: always the SAME request ID (invariant 2). A
 * sync order sends it again; an async one reads its pull request, or creates it again if the partner never
 * showed it.
 */
export function redriveStep(order: Pick<OrderRow, 'mode'>, attempt: Pick<AttemptRow, 'partnerStatus'>): 'sync_call' | 'async_create' | 'async_poll' {
  if (order.mode === 'sync') return 'sync_call';
  return acknowledged(attempt) ? 'async_poll' : 'async_create';
}
