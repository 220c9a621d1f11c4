import type { DefinitiveCode } from '@cardpull/partner-client';
import type { AttemptPatch, Decision, DecisionInput, Rule } from './decision.types';
import { WAITING_STATUS } from './facts';

// Decisions that end a request ID or park its order, shared by the rows of decide.ts and not-found.ts.

/**
 * The ID is proven dead without a card (async status `error`, or used but without a pull request): a new
 * request ID, up to ASYNC_MAX_ATTEMPTS, then the order fails.
 */
export function proven(i: DecisionInput, code: 'pull_request_error' | 'used_without_pull_request', message: string): Decision {
  const rule: Rule = code === 'pull_request_error' ? 'pull_request_error' : 'used_but_empty';
  const dead: AttemptPatch = { state: 'failed_definitive', partnerStatus: code === 'pull_request_error' ? 'error' : i.attempt.partnerStatus, error: { code, message } };
  if (i.attempt.seq >= i.timings.ASYNC_MAX_ATTEMPTS) {
    const text = `The partner's pull failed for ${i.attempt.seq} request IDs in a row (last: ${message})`;
    return { kind: 'transition', rule, status: 'failed', error: { code, message: text }, next: null, attempt: dead, event: { type: 'failed', detail: { code, attempts: i.attempt.seq } } };
  }
  return {
    kind: 'transition',
    rule,
    status: 'in_progress',
    error: null,
    next: { step: 'async_create', delayMs: 0 },
    attempt: dead,
    newAttempt: true,
    event: { type: 'new_attempt', detail: { reason: code } },
  };
}

/** A business error that describes this request ID's fate (its first send, or its pull request proven absent). */
export function definitiveForThisId(i: Pick<DecisionInput, 'order' | 'attempt' | 'now' | 'timings'>, code: DefinitiveCode, message: string, rule: Rule = 'business_error'): Decision {
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

/** No definitive answer within UNKNOWN_OUTCOME_WINDOW_MS (or a wait that ran out on a live ID): parked for an operator. */
export function needsAttention(i: DecisionInput, last: { code: string; message: string }, since: Date, rule: Rule): Decision {
  const message = `No definitive answer for request ID ${i.attempt.requestId} since ${since.toISOString()} (last: ${last.code}: ${last.message})`;
  return {
    kind: 'transition',
    rule,
    status: 'needs_attention',
    next: null,
    error: { code: 'unknown_outcome', message },
    attempt: { state: 'unknown', error: last, unknownSince: 'start' },
    event: { type: 'needs_attention', detail: { reason: last.code, message } },
  };
}
