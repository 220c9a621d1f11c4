import type { Card, DefinitiveCode, PullRequest } from '@cardpull/partner-client';
import { interruptedMessage, type AttemptPatch, type Decision, type DecisionInput } from './decision.types';
import { askingPastWindow, definitiveForThisId, pullRequestFailed } from './endings';
import { pullRequestSeen } from '@cardpull/orders';
import { askAgain, hadUnknown, mismatchOf, pollDelay, windowStart, type UnknownAnswer } from './facts';
import { notFound } from './not-found';
import { forReconciler } from './reconciling';

/**
 * The classification table (docs/ARCHITECTURE.md) as code: from (order, its attempt's history, the
 * partner's answer) to what happens next. Pure: the step runner and the reconciler (through PartnerAsk) call
 * it and apply what it says; nothing else decides what a partner answer means.
 *
 * The rule it is built around (invariant 2): a request ID is dead only on the partner's own word about it,
 * and there are exactly two such words: a definitive (business) answer to the ID's FIRST send, before any
 * send of it had an unknown outcome; and async status `error` for that ID. (The third way, an operator's
 * audited declaration after asking the partner, is OperatorActions'.) Nothing else kills an ID: not a
 * business error answered to a re-send (the spec does not say in which order the partner checks errors; it
 * may check stock or funds before it looks at a request ID it knows), not a balance or inventory read (it
 * can change between the answer and the read, and its units are not shown), not 404s from a read copy
 * after the partner acknowledged the ID, not a timer. Everything else asks the same ID again: a sync ID is
 * re-sent, an async one polled (or created again with the SAME ID when the partner never acknowledged it),
 * on the spec's cadence and, past UNKNOWN_OUTCOME_WINDOW_MS, ever slower, with the order in needs_attention.
 */
export function decide(input: DecisionInput): Decision {
  const decision = decideAnswer(input);
  if (!input.reconciling) return decision;
  const d = forReconciler(input, decision);
  // What the answer does to the order asked about, when the card in it is another ID's, is the reconciler's too.
  return d.kind === 'store_card' && d.answeredFor ? { ...d, answeredFor: { ...d.answeredFor, then: forReconciler(input, d.answeredFor.then) } } : d;
}

function decideAnswer(i: DecisionInput): Decision {
  const a = i.answer;
  if (a.kind === 'interrupted') {
    return unknownOutcome(i, { reason: 'interrupted', message: interruptedMessage(a) }, a.sentAt);
  }
  if (a.kind === 'credentials') return credentials(i, a.code, a.message);
  if (a.kind === 'success') {
    return i.sent === 'sync_call' ? cardAnswer(i.order, a.value as Card, 'issued') : pullRequestAnswer(i, a.value as PullRequest);
  }
  if (a.kind === 'definitive' && i.sent !== 'async_poll') return businessError(i, a.code, a.message);
  if (a.kind === 'request_id_used' && i.sent === 'async_create') return requestIdUsed(i, a.message);
  if (a.kind === 'not_found' && i.sent === 'async_poll') return notFound(i, a.code, a.message);
  if (a.kind === 'unknown') return unknownOutcome(i, a);
  return unknownOutcome(i, { reason: 'unexpected', message: `unexpected ${a.kind} answer to ${i.sent}`, httpStatus: 'httpStatus' in a ? a.httpStatus : undefined });
}

/** A card for the request ID asked about: its order's card, or a mismatch naming how it differs (the store decides surplus). */
export function cardAnswer(order: DecisionInput['order'], card: Card, partnerStatus: string): Decision {
  return { kind: 'store_card', rule: 'card', card, mismatch: mismatchOf(order, card), attempt: { state: 'succeeded', partnerStatus, error: null, notFoundSince: 'clear' } };
}

function pullRequestAnswer(i: DecisionInput, pr: PullRequest): Decision {
  if (typeof pr.request_id === 'string' && pr.request_id !== i.attempt.requestId) return requestIdMismatch(i, pr);
  if (pr.status === 'success' && pr.card) return cardAnswer(i.order, pr.card, 'success');
  if (pr.status === 'error') return pullRequestFailed(i, 'the partner reported status error for this pull request');
  // waiting, processing, or a status the spec does not show: still pending.
  const { attempt: att, timings: t } = i;
  const seen: AttemptPatch = { partnerStatus: pr.status, error: null, notFoundSince: 'clear' };
  const last = { code: 'still_pending', message: `pull request still ${pr.status}` };
  if (i.sent === 'async_create') {
    const created: Decision = { kind: 'transition', rule: 'pull_request_pending', next: { step: 'async_poll', delayMs: t.ASYNC_POLL_FIRST_DELAY_MS }, attempt: seen, event: { type: 'pull_request_created', detail: { status: pr.status } } };
    return askingPastWindow(i, created, windowStart(att), last);
  }
  if (i.order.status === 'awaiting_funds' || i.order.status === 'awaiting_stock') {
    // Found while the order waited (an order of a version that parked live IDs in a waiting status).
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
  const stay: Decision = { kind: 'stay', rule: 'pull_request_pending', delayMs: pollDelay(t, i.random), ...(Object.keys(note).length ? { note } : {}) };
  return askingPastWindow(i, stay, windowStart(att), last);
}

/**
 * The partner answered with a pull request whose request_id is not the one asked: it says nothing about
 * ours (not even an `error`). The order needs attention, and our request ID is asked again like any
 * unanswered one. A card in the answer is that other ID's: stored as its answer when the ID is ours, else on
 * this order as a mismatch (never the order's card, never dropped; see `answeredFor`).
 */
function requestIdMismatch(i: DecisionInput, pr: PullRequest): Decision {
  const message = `The partner answered a question about request ID ${i.attempt.requestId} with pull request ${pr.id} of request ID ${pr.request_id} (status ${pr.status}); ours is asked again`;
  const last = { code: 'request_id_mismatch', message };
  const next = { step: 'async_poll' as const, delayMs: pollDelay(i.timings, i.random) };
  const ours: Decision =
    i.order.status === 'needs_attention'
      ? askingPastWindow(i, { kind: 'stay', rule: 'request_id_mismatch', delayMs: next.delayMs }, windowStart(i.attempt), last)
      : {
          kind: 'transition',
          rule: 'request_id_mismatch',
          status: 'needs_attention',
          error: last,
          next,
          attempt: { error: last, unknownSince: 'start', ...(i.attempt.state === 'sent' ? { state: 'unknown' as const } : {}) },
          event: { type: 'needs_attention', detail: { reason: 'request_id_mismatch', message, answered_request_id: pr.request_id } },
        };
  if (!pr.card) return ours;
  return {
    kind: 'store_card',
    rule: 'request_id_mismatch',
    card: pr.card,
    mismatch: `request ID ${pr.request_id} instead of ${i.attempt.requestId}`,
    // Stored on this order only when the other ID is not ours: ours stays open.
    attempt: { state: i.attempt.state === 'sent' ? 'unknown' : i.attempt.state },
    answeredFor: { requestId: pr.request_id, then: ours },
  };
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
  // A re-send (or re-create) of an ID whose earlier send had no answer: the partner may have checked this
  // body before it looked at the ID, which may still hold a pull (the last unit, say). Not proof: the same ID again.
  const why = `${message} (answered to a re-send of request ID ${i.attempt.requestId}, whose earlier send had no answer: not proof of its fate; the same ID is asked again)`;
  if (i.sent === 'sync_call') return unknownOutcome(i, { reason: code, message: why }, undefined, 'business_error_not_proof');
  // Async: read the pull request. It shows up (the first creation went through), or its absence is seen
  // long enough to create it again with the same ID (not-found.ts).
  const d: Decision = {
    kind: 'transition',
    rule: 'business_error_not_proof',
    next: { step: 'async_poll', delayMs: pollDelay(i.timings, i.random) },
    // The 404s that count start after this answer: each creation again waits a whole settle window.
    attempt: { state: 'unknown', error: { code, message: why }, unknownSince: 'start', notFoundSince: 'clear' },
    event: i.attempt.errorCode === code ? undefined : { type: 'business_error_not_proof', detail: { code, message, same_request_id: true } },
  };
  return askingPastWindow(i, d, windowStart(i.attempt), { code, message: why });
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

/**
 * Invariant 2: an unknown outcome is asked again with the SAME request ID (sync: re-sent, how soon by what
 * the answer showed, askAgain; async: polled, never before a Retry-After), and past
 * UNKNOWN_OUTCOME_WINDOW_MS ever slower with the order in needs_attention (askingPastWindow).
 */
function unknownOutcome(i: DecisionInput, u: UnknownAnswer, sentAt?: Date, rule: 'unknown_outcome' | 'business_error_not_proof' = 'unknown_outcome'): Decision {
  const { attempt: att, timings: t, now } = i;
  const since = att.unknownSince ?? sentAt ?? new Date(now);
  const last = { code: u.reason, message: u.message };
  if (i.sent === 'async_poll') {
    const stay: Decision = { kind: 'stay', rule, delayMs: Math.max(pollDelay(t, i.random), u.retryAfterMs ?? 0), ...(att.unknownSince ? {} : { note: { unknownSince: 'start' } }) };
    return askingPastWindow(i, stay, since, last);
  }
  const d: Decision = {
    kind: 'transition',
    rule,
    next: askAgain(i, u, sentAt),
    attempt: { state: 'unknown', error: last, unknownSince: sentAt ?? 'start' },
    // One timeline entry when the attempt becomes unknown or the reason changes, not one per retry.
    event:
      hadUnknown(att) && att.errorCode === u.reason
        ? undefined
        : { type: rule === 'unknown_outcome' ? 'outcome_unknown' : 'business_error_not_proof', detail: { reason: u.reason, http_status: u.httpStatus ?? null, message: u.message, retry_after_ms: u.retryAfterMs ?? null } },
  };
  return askingPastWindow(i, d, since, last);
}
