import type { OrderStep } from '@cardpull/db';
import type { AttemptFacts, Decision, DecisionTimings, OrderFacts } from './decision.types';

/**
 * resume_check of an order waiting for funds or stock (awaiting_funds / awaiting_stock), from the partner's
 * balance or inventory read just now (`condition`: 'cleared', 'not_cleared', or 'unknown' when the read
 * failed or is stale: not trusted).
 *  - The attempt is dead (a definitive answer to its first send): when the condition clears, a NEW request ID.
 *  - The attempt is live (the business error came on a re-send after an unknown outcome, so it may still
 *    yield a card): when the condition clears, the SAME request ID again; its answer then says whether it
 *    was the stored answer of a failed first call (see decide: stored_answer).
 *  - At the waiting deadline a dead attempt fails the order; a live one never does: needs_attention.
 */
export function decideResume(i: {
  order: OrderFacts;
  attempt: AttemptFacts;
  now: number;
  timings: DecisionTimings;
  condition: 'cleared' | 'not_cleared' | 'unknown';
}): Decision {
  const { order, attempt, now, timings: t } = i;
  const live = attempt.state !== 'failed_definitive';
  const code = order.errorCode ?? (order.status === 'awaiting_funds' ? 'not_enough_funds' : 'out_of_stock');
  if (order.waitDeadline && order.waitDeadline.getTime() <= now) {
    const message = `${order.errorMessage ?? code} (still so at the waiting deadline ${order.waitDeadline.toISOString()})`;
    if (live) {
      const why = `No definitive answer for request ID ${attempt.requestId}: its first send had no answer and its re-sends were answered ${code}; it may still yield a card`;
      return {
        kind: 'transition',
        rule: 'wait_deadline',
        status: 'needs_attention',
        next: null,
        error: { code: 'unknown_outcome', message: `${why} (${message})` },
        attempt: { state: 'unknown', unknownSince: 'start' },
        event: { type: 'needs_attention', detail: { reason: code, message: why } },
      };
    }
    return { kind: 'transition', rule: 'wait_deadline', status: 'failed', next: null, error: { code, message }, event: { type: 'failed', detail: { code, reason: 'wait_deadline' } } };
  }
  if (i.condition !== 'cleared') return { kind: 'stay', rule: 'still_waiting', delayMs: t.AWAIT_RECHECK_INTERVAL_MS };
  if (live) {
    const step: OrderStep = order.mode === 'sync' ? 'sync_call' : 'async_poll';
    return {
      kind: 'transition',
      rule: 'condition_cleared',
      status: 'in_progress',
      error: null,
      next: { step, delayMs: 0 },
      event: { type: 'resumed', detail: { was: order.status, same_request_id: true } },
    };
  }
  return {
    kind: 'transition',
    rule: 'condition_cleared',
    status: 'in_progress',
    error: null,
    next: { step: order.mode === 'sync' ? 'sync_call' : 'async_create', delayMs: 0 },
    newAttempt: true,
    event: { type: 'resumed', detail: { was: order.status } },
  };
}
