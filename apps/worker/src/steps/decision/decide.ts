import type { OrderStatus, OrderStep } from '@cardpull/db';
import type { Card, DefinitiveCode, PullRequest } from '@cardpull/partner-client';
import type { AttemptPatch, Decision, DecisionInput } from './decision.types';
import { definitiveForThisId, needsAttention, proven } from './endings';
import { pullRequestSeen } from '@cardpull/orders';
import { WAITING_STATUS, hadUnknown, mismatchOf, pollDelay, windowExpired } from './facts';
import { notFound } from './not-found';
import { forReconciler } from './reconciling';

/**
 * ARCHITECTURE.md's classification table as code: from (order, its attempt's history, the partner's
 * answer) to what happens next. Pure: the step runner, the reconciler and the admin actions call it and
 * apply what it says; nothing else decides what a partner answer means.
 *
 * The rule it is built around (invariant 2, "same ID until proven dead"): once a request ID has had an
 * unknown outcome, it stays the order's only live ID until the partner gives an answer that can only
 * describe that ID's fate: a card; async status `error`; 404s on its pull request spread over
 * PULL_REQUEST_SETTLE_MS; for a sync ID, the same business error again while the partner's own balance or
 * inventory shows the condition cleared. The spec does not say in which order the partner checks errors,
 * so a business error answered to a re-send may be about the re-send's body checked before the request ID
 * (the ID's first send may still have taken the last unit and yield a card): it is not proof, and the order
 * waits on the same ID.
 */
export function decide(input: DecisionInput): Decision {
  const decision = decideAnswer(input);
  return input.reconciling ? forReconciler(input, decision) : decision;
}

function decideAnswer(i: DecisionInput): Decision {
  const a = i.answer;
  if (a.kind === 'interrupted') {
    return unknownOutcome(i, { reason: 'interrupted', message: 'the worker that made the call stopped before recording its answer' }, a.sentAt);
  }
  if (a.kind === 'credentials') return credentials(i, a.code, a.message);
  if (a.kind === 'success') {
    return i.sent === 'sync_call' ? storeCard(i, a.value as Card, 'issued') : pullRequestAnswer(i, a.value as PullRequest);
  }
  if (a.kind === 'definitive' && i.sent !== 'async_poll') return businessError(i, a.code, a.message);
  if (a.kind === 'request_id_used' && i.sent === 'async_create') return requestIdUsed(i, a.message);
  if (a.kind === 'not_found' && i.sent === 'async_poll') return notFound(i, a.code, a.message);
  if (a.kind === 'unknown') return unknownOutcome(i, a);
  return unknownOutcome(i, { reason: 'unexpected', message: `unexpected ${a.kind} answer to ${i.sent}`, httpStatus: 'httpStatus' in a ? a.httpStatus : undefined });
}

function storeCard(i: DecisionInput, card: Card, partnerStatus: string): Decision {
  return {
    kind: 'store_card',
    rule: 'card',
    card,
    mismatch: mismatchOf(i.order, card),
    attempt: { state: 'succeeded', partnerStatus, error: null, notFoundSince: 'clear' },
  };
}

function pullRequestAnswer(i: DecisionInput, pr: PullRequest): Decision {
  if (pr.status === 'success' && pr.card) return storeCard(i, pr.card, 'success');
  if (pr.status === 'error') return proven(i, 'pull_request_error', 'the partner reported status error for this pull request');
  // waiting, processing, or a status the spec does not show: still pending.
  const { attempt: att, timings: t, now } = i;
  const started = att.unknownSince ?? att.firstSentAt ?? att.createdAt;
  if (windowExpired(t, started, now)) {
    return needsAttention(i, { code: 'still_pending', message: `pull request still ${pr.status}` }, started, 'pull_request_pending');
  }
  const seen: AttemptPatch = { partnerStatus: pr.status, error: null, notFoundSince: 'clear' };
  if (i.sent === 'async_create') {
    return { kind: 'transition', rule: 'pull_request_pending', next: { step: 'async_poll', delayMs: t.ASYNC_POLL_FIRST_DELAY_MS }, attempt: seen, event: { type: 'pull_request_created', detail: { status: pr.status } } };
  }
  if (i.order.status !== 'in_progress') {
    // Found while the order waited on it (a business error answered to a re-send was not its fate).
    return {
      kind: 'transition',
      rule: 'pull_request_pending',
      status: 'in_progress',
      error: null,
      next: { step: 'async_poll', delayMs: pollDelay(t, i.random) },
      attempt: seen,
      event: { type: 'pull_request_found', detail: { status: pr.status } },
    };
  }
  const note: AttemptPatch = {};
  if (pr.status !== att.partnerStatus) note.partnerStatus = pr.status;
  if (att.notFoundSince) note.notFoundSince = 'clear';
  return { kind: 'stay', rule: 'pull_request_pending', delayMs: pollDelay(t, i.random), ...(Object.keys(note).length ? { note } : {}) };
}

function requestIdUsed(i: DecisionInput, message: string): Decision {
  return {
    kind: 'transition',
    rule: 'request_id_used',
    next: { step: 'async_poll', delayMs: 0 },
    attempt: { partnerStatus: pullRequestSeen(i.attempt) ? i.attempt.partnerStatus : 'exists', error: null },
    event: { type: 'pull_request_exists', detail: { message } },
  };
}

/** A business error (gift_card_not_found, invalid_amount, out_of_stock, not_enough_funds) answered to a POST. */
function businessError(i: DecisionInput, code: DefinitiveCode, message: string): Decision {
  if (!hadUnknown(i.attempt)) return definitiveForThisId(i, code, message);
  const waiting = WAITING_STATUS[code];
  if (i.sent === 'sync_call') {
    if (waiting && i.attempt.errorCode === code && i.conditionCleared) return storedAnswer(i, code, message);
    if (!waiting) {
      // Not proof, and nothing of the partner's can clear it: the same ID again, within the unknown window.
      return unknownOutcome(i, { reason: code, message: `${message} (answered to a re-send of a request ID whose earlier send had no answer: not proof of its fate)` });
    }
    if (i.order.waitDeadline && i.order.waitDeadline.getTime() <= i.now) {
      return needsAttention(i, { code, message: `${message} (still so at the waiting deadline)` }, i.attempt.unknownSince!, 'business_error_after_unknown');
    }
    return waitOnSameId(i, code, message, waiting, { step: 'resume_check', delayMs: i.timings.AWAIT_RECHECK_INTERVAL_MS });
  }
  // Async: keep reading the pull request. It shows up (its first create went through), or 404s spread over
  // PULL_REQUEST_SETTLE_MS prove the partner never had it; then this business error is believed.
  return waitOnSameId(i, code, message, waiting, { step: 'async_poll', delayMs: pollDelay(i.timings, i.random) });
}

function waitOnSameId(i: DecisionInput, code: DefinitiveCode, message: string, waiting: OrderStatus | undefined, next: { step: OrderStep; delayMs: number }): Decision {
  return {
    kind: 'transition',
    rule: 'business_error_after_unknown',
    ...(waiting ? { status: waiting, error: { code, message }, waitDeadline: 'start' as const } : {}),
    next,
    attempt: { state: 'unknown', error: { code, message }, unknownSince: 'start' },
    event: i.attempt.errorCode === code ? undefined : { type: 'business_error_not_proof', detail: { code, message, same_request_id: true } },
  };
}

/**
 * The same business error again while the partner's own balance or inventory shows the condition cleared:
 * it can only be the stored answer of a first call that failed. The ID is dead: a new one, at once.
 */
function storedAnswer(i: DecisionInput, code: DefinitiveCode, message: string): Decision {
  const why = `${message} (again, while the partner's ${code === 'out_of_stock' ? 'inventory' : 'balance'} shows it cleared: the stored answer of a first call that failed)`;
  return {
    kind: 'transition',
    rule: 'stored_answer',
    status: 'in_progress',
    error: null,
    next: { step: 'sync_call', delayMs: 0 },
    attempt: { state: 'failed_definitive', partnerStatus: code, error: { code: 'stored_answer', message: why } },
    newAttempt: true,
    event: { type: 'new_attempt', detail: { reason: 'stored_answer', code } },
  };
}

function credentials(i: DecisionInput, code: string, message: string): Decision {
  const circuit = { code, message };
  const error = { code, message };
  if (i.sent === 'async_poll') return { kind: 'stay', rule: 'credentials', delayMs: i.timings.CIRCUIT_RETRY_MS, note: { error }, circuit };
  // A 401 means the partner did not act on the call: the attempt is as it was before it.
  const before = i.attempt.state === 'sent' ? 'unknown' : i.attempt.state;
  return {
    kind: 'transition',
    rule: 'credentials',
    next: { step: i.sent, delayMs: i.timings.CIRCUIT_RETRY_MS },
    attempt: { state: before, error },
    circuit,
    event: i.attempt.errorCode === code ? undefined : { type: 'credentials_refused', detail: { code, message } },
  };
}

interface UnknownAnswer {
  reason: string;
  message: string;
  httpStatus?: number;
  retryAfterMs?: number;
}

/**
 * Invariant 2: an unknown outcome is retried with the SAME request ID (sync: after the first delay, then
 * every interval; async: by polling; never before a Retry-After), until UNKNOWN_OUTCOME_WINDOW_MS, then
 * needs_attention.
 */
function unknownOutcome(i: DecisionInput, u: UnknownAnswer, sentAt?: Date): Decision {
  const { attempt: att, timings: t, now } = i;
  const windowStart = att.unknownSince ?? sentAt ?? new Date(now);
  const error = { code: u.reason, message: u.message };
  if (windowExpired(t, windowStart, now)) return needsAttention(i, error, windowStart, 'unknown_window_expired');
  const retryAfter = u.retryAfterMs ?? 0;
  if (i.sent === 'async_poll') {
    return { kind: 'stay', rule: 'unknown_outcome', delayMs: Math.max(pollDelay(t, i.random), retryAfter), ...(att.unknownSince ? {} : { note: { unknownSince: 'start' } }) };
  }
  const next: OrderStep = i.sent === 'sync_call' ? 'sync_call' : 'async_poll';
  const wait = next === 'sync_call' ? (hadUnknown(att) ? t.SYNC_RETRY_INTERVAL_MS : t.SYNC_RETRY_FIRST_DELAY_MS) : t.ASYNC_POLL_FIRST_DELAY_MS;
  // An interrupted call counts from when it was sent.
  const fromSend = sentAt && next === 'sync_call' ? sentAt.getTime() + wait - now : wait;
  return {
    kind: 'transition',
    rule: 'unknown_outcome',
    next: { step: next, delayMs: Math.max(0, fromSend, retryAfter) },
    attempt: { state: 'unknown', error, unknownSince: sentAt ?? 'start' },
    // One timeline entry when the attempt becomes unknown or the reason changes, not one per retry.
    event:
      hadUnknown(att) && att.errorCode === u.reason
        ? undefined
        : { type: 'outcome_unknown', detail: { reason: u.reason, http_status: u.httpStatus ?? null, message: u.message, retry_after_ms: u.retryAfterMs ?? null } },
  };
}
