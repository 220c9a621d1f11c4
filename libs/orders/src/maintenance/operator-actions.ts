import { Injectable } from '@nestjs/common';
import { contextFrom, withSpan } from '@cardpull/platform';
import { AfterCommit } from '../write/after-commit';
import { isOpenAttempt, redriveStep } from '../model/attempt-facts';
import type { AttemptRow, OrderRow } from '../model/order.types';
import { firstStep } from '../model/order-steps';
import { StepsRepository, type CurrentStep } from '../write/steps.repository';
import { TransitionsRepository, type Transition } from '../write/transitions.repository';

/** Why an operator's action did not apply (the API turns it into an HTTP error, a bulk action counts it). */
export type ActionRefusal = {
  ok: false;
  status: 400 | 404 | 409;
  code: 'order_not_found' | 'not_needs_attention' | 'not_redrivable' | 'order_changed' | 'being_asked' | 'reason_required' | 'not_open';
  message: string;
  /** being_asked: how long until the lease of the call in flight ends, in ms (renewed while the call lasts: ask again then). */
  retryAfterMs?: number;
};
export type ActionDone = {
  ok: true;
  status: 'in_progress' | 'failed' | 'needs_attention';
  callbacks: string[];
  next?: { stepSeq: number; step: 'sync_call' | 'async_create' | 'async_poll'; delayMs: number };
  /** A re-drive after the ID was declared dead: the request ID minted for the order. */
  newRequestId?: string;
};

/** Who acts and why; `bulk` names the bulk action the order was touched by (its audit entry says so). */
export interface ActionBy {
  actor: string;
  who: string;
  reason: string;
  bulk?: { id: string; action: string };
}


/**
 * The operator's actions on an order in needs_attention (one at a time from the order page, or many from a
 * bulk action), each recorded on the order's timeline with who, why and, for a bulk action, which. They keep
 * invariant 2, whose last word is the operator's:
 *  - **declare dead**: the operator, having asked the partner, says the order's request ID will never yield
 *    a card (a reason is required: the partner's ticket, say). Its asking stops, except that an async ID is
 *    still polled for a card for RECONCILE_DEAD_RECHECK_MS (a GET cannot issue one); a sync ID is never sent
 *    again. The order stays in needs_attention until a re-drive or mark failed.
 *  - **re-drive**: an open request ID is asked again, the SAME one, with a fresh unknown-outcome window; a
 *    dead one (declared, or killed by the partner's word) is replaced by a new request ID, minted here.
 *  - **mark failed**: ends the order; on an open ID it IS declare dead plus the failure, with the same reason.
 * One sender per ID: an action on an order whose request ID is being asked right now (a lease in force) is
 * refused with how long the call may last, never clears that lease. Each is guarded by the order's step, so
 * two operators (or an operator and a bulk action) cannot act twice. The jobs are enqueued only once the
 * transition is committed (AfterCommit); a failed enqueue is harmless (the sweeper, invariant 4).
 */
@Injectable()
export class OperatorActions {
  constructor(
    private readonly steps: StepsRepository,
    private readonly transitions: TransitionsRepository,
    private readonly afterCommit: AfterCommit,
  ) {}

  async redrive(orderId: string, by: ActionBy): Promise<ActionDone | ActionRefusal> {
    const current = await this.actionable(orderId);
    if (!current.ok) return current;
    const { order, attempt } = current;
    if (attempt.state === 'succeeded') {
      return { ok: false, status: 409, code: 'not_redrivable', message: 'The partner issued a card for this request ID that does not match the order; it is kept. Mark the order failed (the card stays listed for a refund)' };
    }
    // In the order's trace (kept with the order at intake): the re-driven step's job continues this span.
    const attributes = { 'cardpull.order_id': orderId, 'cardpull.request_id': attempt.requestId, 'cardpull.actor': by.actor };
    return withSpan('operator redrive', attributes, () => this.redriveNow(order, attempt, by), contextFrom(order.traceParent));
  }

  private async redriveNow(order: OrderRow, attempt: AttemptRow, by: ActionBy): Promise<ActionDone | ActionRefusal> {
    const orderId = order.id;
    const open = isOpenAttempt(attempt.state);
    const step = open ? redriveStep(order, attempt) : firstStep(order.mode);
    const result = await this.transitions.transition({
      ...this.guarded(order, by),
      status: 'in_progress',
      next: { step, delayMs: 0 },
      error: null,
      ...(open ? { attempt: { requestId: attempt.requestId, unknownSince: 'restart' as const } } : { newAttempt: { kind: order.mode, replaces: attempt.requestId } }),
      event: { type: 'redriven', requestId: open ? attempt.requestId : undefined, detail: { reason: by.reason, step, same_request_id: open, ...(by.bulk ? { bulk: by.bulk } : {}) } },
    });
    if (!result.applied) return this.whyNotApplied(orderId);
    const next = { stepSeq: result.stepSeq, step, delayMs: 0 };
    await this.afterCommit.run({ next: { orderId, ...next }, callbacks: result.callbackEventIds });
    return { ok: true, status: 'in_progress', callbacks: result.callbackEventIds, next, ...(result.newRequestId ? { newRequestId: result.newRequestId } : {}) };
  }

  /** The operator's word that the order's open request ID is dead (see the class). The order stays in needs_attention. */
  async declareDead(orderId: string, by: ActionBy): Promise<ActionDone | ActionRefusal> {
    if (!by.reason.trim()) return reasonRequired('declare a request ID dead');
    const current = await this.actionable(orderId);
    if (!current.ok) return current;
    const { order, attempt } = current;
    if (!isOpenAttempt(attempt.state)) return { ok: false, status: 409, code: 'not_open', message: `Request ID ${attempt.requestId} is ${attempt.state}: there is nothing to declare` };
    const message = `Request ID ${attempt.requestId} declared dead by ${by.who}: ${by.reason}. Re-drive to pull with a new request ID, or mark the order failed`;
    const result = await this.transitions.transition({
      ...this.guarded(order, by),
      next: null,
      error: { code: 'declared_dead', message },
      attempt: declaredDead(attempt, by),
      event: { type: 'declared_dead', requestId: attempt.requestId, detail: { reason: by.reason, kind: attempt.kind, ...(by.bulk ? { bulk: by.bulk } : {}) } },
    });
    if (!result.applied) return this.whyNotApplied(orderId);
    return { ok: true, status: 'needs_attention', callbacks: result.callbackEventIds };
  }

  /**
   * Ends the order as failed with the operator's reason. An open request ID is declared dead by the same
   * statement (the same reason, one more audit entry): nothing sends it again; an async one is still
   * polled for a card for the re-check window, and a card that arrives then is stored and flagged
   * (completed_after_failed on the order's timeline).
   */
  async markFailed(orderId: string, by: ActionBy): Promise<ActionDone | ActionRefusal> {
    if (!by.reason.trim()) return reasonRequired('mark an order failed');
    const current = await this.actionable(orderId);
    if (!current.ok) return current;
    const { order, attempt } = current;
    const open = isOpenAttempt(attempt.state);
    const result = await this.transitions.transition({
      ...this.guarded(order, by),
      status: 'failed',
      next: null,
      error: { code: 'marked_failed', message: `Marked failed by ${by.who}: ${by.reason}` },
      ...(open ? { attempt: declaredDead(attempt, by) } : {}),
      event: { type: 'marked_failed', requestId: attempt.requestId, detail: { reason: by.reason, declared_dead: open, ...(by.bulk ? { bulk: by.bulk } : {}) } },
    });
    if (!result.applied) return this.whyNotApplied(orderId);
    await this.afterCommit.run({ callbacks: result.callbackEventIds });
    return { ok: true, status: 'failed', callbacks: result.callbackEventIds };
  }

  /** The common guard of an operator's transition: the step the operator saw, and no call in flight. */
  private guarded(order: OrderRow, by: ActionBy): Pick<Transition, 'orderId' | 'stepSeq' | 'actor' | 'whenNotLeased'> {
    return { orderId: order.id, stepSeq: order.stepSeq, actor: by.actor, whenNotLeased: true };
  }

  private async actionable(orderId: string): Promise<({ ok: true } & CurrentStep) | ActionRefusal> {
    const current = await this.steps.current(orderId);
    if (!current) return { ok: false, status: 404, code: 'order_not_found', message: `No order ${orderId}` };
    if (current.order.status !== 'needs_attention') {
      return { ok: false, status: 409, code: 'not_needs_attention', message: `Order ${orderId} is ${current.order.status}, not needs_attention` };
    }
    return beingAsked(current) ?? { ok: true, ...current };
  }

  /** A guarded transition did not apply: a call began meanwhile, or the order moved on. */
  private async whyNotApplied(orderId: string): Promise<ActionRefusal> {
    const now = await this.steps.current(orderId);
    return (now && beingAsked(now)) ?? { ok: false, status: 409, code: 'order_changed', message: 'The order changed meanwhile; reload it' };
  }
}

function declaredDead(attempt: AttemptRow, by: ActionBy) {
  return { requestId: attempt.requestId, state: 'failed_definitive' as const, declaredDeadBy: by.who, error: { code: 'declared_dead', message: `declared dead by ${by.who}: ${by.reason}` } };
}

function reasonRequired(what: string): ActionRefusal {
  return { ok: false, status: 400, code: 'reason_required', message: `A reason is required to ${what} (say what the partner answered, e.g. their ticket)` };
}

/** Someone is asking the partner about the order's request ID right now (its lease is in force). */
function beingAsked({ order, attempt, clock }: CurrentStep): ActionRefusal | null {
  if (!order.leaseExpiresAt || clock.until(order.leaseExpiresAt) <= 0) return null;
  const wait = clock.until(order.leaseExpiresAt);
  return {
    ok: false,
    status: 409,
    code: 'being_asked',
    message: `Request ID ${attempt.requestId} is being asked at the partner right now (${order.leaseOwner ?? 'a worker'}); nothing was changed. Try again in ${Math.ceil(wait / 1000)} s, once its answer is in`,
    retryAfterMs: wait,
  };
}
