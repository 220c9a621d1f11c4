import { askStep, firstStep } from '@cardpull/orders';
import type { AttemptFacts, Decision, DecisionTimings, OrderFacts } from './decision.types';

/**
 * resume_check of an order waiting for funds or stock (awaiting_funds / awaiting_stock), from the partner's
 * balance or inventory read just now (`condition`: 'cleared', 'not_cleared', or 'unknown' when the read
 * failed or is stale: not trusted). Only an ID the partner's own word killed (a business error answered to
 * its first send) waits here: when the condition clears, a NEW request ID; at the waiting deadline the order
 * fails. A read only says when to try again: it never judges an ID (if it is wrong, the new ID's first send
 * is refused and its answer is that ID's fate).
 *
 * An order of an earlier version may wait here on a live ID (a business error answered to a re-send): it goes
 * back to asking the SAME ID at once, whatever the read says.
 */
export function decideResume(i: {
  order: OrderFacts;
  attempt: AttemptFacts;
  now: number;
  timings: DecisionTimings;
  condition: 'cleared' | 'not_cleared' | 'unknown';
}): Decision {
  const { order, attempt, now, timings: t } = i;
  if (attempt.state !== 'failed_definitive') {
    return {
      kind: 'transition',
      rule: 'condition_cleared',
      status: 'in_progress',
      error: null,
      next: { step: askStep(order.mode), delayMs: 0 },
      event: { type: 'resumed', detail: { was: order.status, same_request_id: true } },
    };
  }
  const code = order.errorCode ?? (order.status === 'awaiting_funds' ? 'not_enough_funds' : 'out_of_stock');
  if (order.waitDeadline && order.waitDeadline.getTime() <= now) {
    const message = `${order.errorMessage ?? code} (still so at the waiting deadline ${order.waitDeadline.toISOString()})`;
    return { kind: 'transition', rule: 'wait_deadline', status: 'failed', next: null, error: { code, message }, event: { type: 'failed', detail: { code, reason: 'wait_deadline' } } };
  }
  if (i.condition !== 'cleared') return { kind: 'stay', rule: 'still_waiting', delayMs: t.AWAIT_RECHECK_INTERVAL_MS };
  return {
    kind: 'transition',
    rule: 'condition_cleared',
    status: 'in_progress',
    error: null,
    next: { step: firstStep(order.mode), delayMs: 0 },
    newAttempt: true,
    event: { type: 'resumed', detail: { was: order.status } },
  };
}
