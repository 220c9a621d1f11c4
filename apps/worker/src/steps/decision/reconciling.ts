import type { Decision, DecisionInput } from './decision.types';

/**
 * The reconciler re-checks IDs of orders that have no step of their own. A card is always stored. An order
 * in needs_attention moves on when the answer lets it (a pending pull request resumes polling with a fresh
 * window, an ID proven dead gets its successor); a retry of the same ID is the reconciler's next pass. A
 * failed or completed order never moves, and an ID already declared dead is only ever asked for a card:
 * its attempt only records what the partner proved.
 */
export function forReconciler(i: DecisionInput, d: Decision): Decision {
  if (d.kind === 'store_card') return d;
  const unchanged: Decision = { kind: 'stay', rule: 'reconcile_unchanged', delayMs: 0, ...(d.circuit ? { circuit: d.circuit } : {}) };
  if (i.attempt.state === 'failed_definitive') return unchanged;
  const terminal = i.order.status === 'completed' || i.order.status === 'failed';
  if (d.kind === 'transition' && d.attempt?.state === 'failed_definitive' && terminal) {
    return { ...unchanged, note: d.attempt };
  }
  if (terminal) return unchanged;
  if (d.kind === 'stay') {
    if (d.rule !== 'pull_request_pending') return { ...unchanged, ...(d.note ? { note: d.note } : {}) };
    return {
      kind: 'transition',
      rule: 'reconcile_resumed',
      status: 'in_progress',
      error: null,
      next: { step: 'async_poll', delayMs: 0 },
      attempt: { ...d.note, unknownSince: 'restart' },
      event: { type: 'reconciled_resumed', detail: { why: 'pull request pending', step: 'async_poll' } },
    };
  }
  if (d.status === 'needs_attention' || d.rule === 'unknown_outcome' || d.rule === 'credentials') {
    return { ...unchanged, ...(d.attempt?.error ? { note: { error: d.attempt.error } } : {}) };
  }
  return {
    ...d,
    rule: 'reconcile_resumed',
    status: d.status ?? 'in_progress',
    ...(d.status === undefined ? { error: null } : {}),
    attempt: d.newAttempt || d.attempt?.state === 'failed_definitive' ? d.attempt : { ...d.attempt, unknownSince: 'restart' },
    event: { type: 'reconciled_resumed', detail: { rule: d.rule, step: d.next?.step ?? null, was: d.event?.type ?? null } },
  };
}
