import type { DefinitiveCode } from '@cardpull/partner-client';
import type { AttemptPatch, Decision, DecisionInput, Rule } from './decision.types';
import { WAITING_STATUS, backoffDelay, windowExpired } from './facts';

// Decisions that end a request ID, park its order, or keep asking about it past the window, shared by the
// rows of decide.ts and not-found.ts.

/**
 * Async status `error` for this request ID: the partner's own word that it is dead (its second proof of
 * death, with a definitive answer to a first send). A new request ID, up to ASYNC_MAX_ATTEMPTS, then the
 * order fails.
 */
export function pullRequestFailed(i: DecisionInput, message: string): Decision {
  const code = 'pull_request_error';
  const dead: AttemptPatch = { state: 'failed_definitive', partnerStatus: 'error', error: { code, message } };
  if (i.attempt.seq >= i.timings.ASYNC_MAX_ATTEMPTS) {
    const text = `The partner's pull failed for ${i.attempt.seq} request IDs in a row (last: ${message})`;
    return { kind: 'transition', rule: 'pull_request_error', status: 'failed', error: { code, message: text }, next: null, attempt: dead, event: { type: 'failed', detail: { code, attempts: i.attempt.seq } } };
  }
  return {
    kind: 'transition',
    rule: 'pull_request_error',
    status: 'in_progress',
    error: null,
    next: { step: 'async_create', delayMs: 0 },
    attempt: dead,
    newAttempt: true,
    event: { type: 'new_attempt', detail: { reason: code } },
  };
}

/** A business error answered to the FIRST send of a request ID: the partner's word on that ID's fate. */
export function definitiveForThisId(i: Pick<DecisionInput, 'order' | 'attempt' | 'now' | 'timings'>, code: DefinitiveCode, message: string): Decision {
  const rule: Rule = 'business_error';
  const dead: AttemptPatch = { state: 'failed_definitive', partnerStatus: code, error: { code, message } };
  const waiting = WAITING_STATUS[code];
  if (!waiting) return { kind: 'transition', rule, status: 'failed', error: { code, message }, next: null, attempt: dead, event: { type: 'failed', detail: { code, message } } };
  const deadline = i.order.waitDeadline;
  if (deadline && deadline.getTime() <= i.now) {
    return {
      kind: 'transition',
      rule,
      status: 'failed',
      error: { code, message: `${message} (still so at the waiting deadline)` },
      next: null,
      attempt: dead,
      event: { type: 'failed', detail: { code, message, deadline: deadline.toISOString() } },
    };
  }
  return {
    kind: 'transition',
    rule,
    status: waiting,
    error: { code, message },
    waitDeadline: 'start',
    next: { step: 'resume_check', delayMs: i.timings.AWAIT_RECHECK_INTERVAL_MS },
    attempt: dead,
    event: { type: waiting, detail: { code, message } },
  };
}

/**
 * Invariant 2's "when in doubt, wait on the same ID and tell a person": `d` asks the same request ID again
 * (a re-send, a poll, a re-create with the same ID). Within UNKNOWN_OUTCOME_WINDOW_MS (from `since`) it goes
 * as it is. Past it the asking goes on ever slower (backoffDelay, never before a Retry-After the decision
 * already waits for), and the order is `needs_attention` (outcome_unknown) the first time, with a callback;
 * its step stays, so nothing but the partner's answer or an operator's declaration stops the asking.
 */
export function askingPastWindow(i: DecisionInput, d: Decision, since: Date, last: { code: string; message: string }): Decision {
  const { timings: t, now } = i;
  if (d.kind === 'store_card' || !windowExpired(t, since, now)) return d;
  const step = d.kind === 'transition' ? d.next : { step: i.sent, delayMs: d.delayMs };
  if (!step) return d;
  const delayMs = Math.max(step.delayMs, backoffDelay(t, since, now, step.delayMs));
  if (i.order.status === 'needs_attention') {
    return d.kind === 'stay' ? { ...d, delayMs } : { ...d, next: { step: step.step, delayMs } };
  }
  const message =
    `No answer from the partner settles request ID ${i.attempt.requestId} since ${since.toISOString()} (last: ${last.code}: ${last.message}). ` +
    'It is still asked, ever less often, until the partner answers; ask the partner about it, and declare it dead only on their word';
  const attempt: AttemptPatch = { ...(d.kind === 'transition' ? d.attempt : d.note), state: 'unknown', error: last, unknownSince: 'start' };
  return {
    kind: 'transition',
    rule: d.rule === 'unknown_outcome' ? 'unknown_window_expired' : d.rule,
    status: 'needs_attention',
    error: { code: 'outcome_unknown', message },
    next: { step: step.step, delayMs },
    attempt,
    event: { type: 'needs_attention', detail: { reason: last.code, message } },
  };
}
