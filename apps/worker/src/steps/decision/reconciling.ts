import type { Decision, DecisionInput } from './decision.types';

/**
 * The reconciler asks about the request IDs that no step of their order asks any more: IDs an operator
 * declared dead (async ones only, polled for the re-check window: a GET cannot issue a card), and, as a
 * safety net, open IDs of orders without a step (those of versions that parked them, a card stored under
 * another request ID). A card is always stored. An order without a step moves on when the answer lets it (a
 * pending pull request resumes polling with a fresh window, the partner's `error` gets the ID its
 * successor); anything else is the reconciler's next pass. A failed or completed order never moves, and a
 * dead ID's answers are only ever a card: its attempt records no more.
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
  if (d.status === 'needs_attention' || ['unknown_outcome', 'business_error_not_proof', 'request_id_mismatch', 'credentials'].includes(d.rule)) {
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
