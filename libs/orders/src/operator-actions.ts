import { Injectable } from '@nestjs/common';
import { AfterCommit } from './after-commit';
import { redriveStep } from './attempt-facts';
import { StepsRepository } from './steps.repository';
import { TransitionsRepository } from './transitions.repository';

/** Why an operator's action did not apply (the API turns it into an HTTP error, a bulk action counts it). */
export type ActionRefusal = { ok: false; status: 404 | 409; code: 'order_not_found' | 'not_needs_attention' | 'not_redrivable' | 'order_changed'; message: string };
export type ActionDone = {
  ok: true;
  status: 'in_progress' | 'failed';
  callbacks: string[];
  next?: { stepSeq: number; step: 'sync_call' | 'async_create' | 'async_poll'; delayMs: number };
};

/** Who acts and why; `bulk` names the bulk action the order was touched by (its audit entry says so). */
export interface ActionBy {
  actor: string;
  who: string;
  reason: string;
  bulk?: { id: string; action: string };
}

/**
 * The operator's two actions on an order in needs_attention (one at a time from the order page, or many
 * from a bulk action), each recorded on the order's timeline with who, why and, for a bulk action, which.
 * Both are guarded by the order's step, so two operators (or an operator and a bulk action) cannot act
 * twice. The jobs are enqueued only once the transition is committed (AfterCommit); a failed enqueue is
 * harmless (the sweeper re-derives them from Postgres, invariant 4).
 */
@Injectable()
export class OperatorActions {
  constructor(
    private readonly steps: StepsRepository,
    private readonly transitions: TransitionsRepository,
    private readonly afterCommit: AfterCommit,
  ) {}

  /**
   * Re-drive with the SAME request ID (invariant 2; redriveStep): the unknown-outcome window starts again.
   * Not for a card that does not match its order: sending its request ID again would only bring it back.
   */
  async redrive(orderId: string, by: ActionBy): Promise<ActionDone | ActionRefusal> {
    const current = await this.needsAttention(orderId);
    if (!current.ok) return current;
    const { order, attempt } = current;
    if (order.errorCode === 'card_mismatch') {
      return { ok: false, status: 409, code: 'not_redrivable', message: 'The partner issued a card that does not match this order; it is kept. Mark the order failed (the card stays listed for a refund)' };
    }
    const step = redriveStep(order, attempt);
    const result = await this.transitions.transition({
      orderId,
      stepSeq: order.stepSeq,
      actor: by.actor,
      status: 'in_progress',
      next: { step, delayMs: 0 },
      error: null,
      attempt: { requestId: attempt.requestId, unknownSince: 'restart' },
      event: { type: 'redriven', requestId: attempt.requestId, detail: { reason: by.reason, step, ...(by.bulk ? { bulk: by.bulk } : {}) } },
    });
    if (!result.applied) return { ok: false, status: 409, code: 'order_changed', message: 'The order changed meanwhile; reload it' };
    const next = { stepSeq: result.stepSeq, step, delayMs: 0 };
    await this.afterCommit.run({ next: { orderId, ...next }, callbacks: result.callbackEventIds });
    return { ok: true, status: 'in_progress', callbacks: result.callbackEventIds, next };
  }

  /**
   * Ends the order as failed with the operator's reason. Its request ID is left as it is: while its outcome
   * is unknown the reconciler keeps asking the partner, and a card that shows up later is stored and
   * completes the order (completed_after_failed on its timeline).
   */
  async markFailed(orderId: string, by: ActionBy): Promise<ActionDone | ActionRefusal> {
    const current = await this.needsAttention(orderId);
    if (!current.ok) return current;
    const { order, attempt } = current;
    const result = await this.transitions.transition({
      orderId,
      stepSeq: order.stepSeq,
      actor: by.actor,
      status: 'failed',
      next: null,
      error: { code: 'marked_failed', message: `Marked failed by ${by.who}: ${by.reason}` },
      event: { type: 'marked_failed', requestId: attempt.requestId, detail: { reason: by.reason, ...(by.bulk ? { bulk: by.bulk } : {}) } },
    });
    if (!result.applied) return { ok: false, status: 409, code: 'order_changed', message: 'The order changed meanwhile; reload it' };
    await this.afterCommit.run({ callbacks: result.callbackEventIds });
    return { ok: true, status: 'failed', callbacks: result.callbackEventIds };
  }

  private async needsAttention(orderId: string) {
    const current = await this.steps.current(orderId);
    if (!current) return { ok: false as const, status: 404 as const, code: 'order_not_found' as const, message: `No order ${orderId}` };
    if (current.order.status !== 'needs_attention') {
      return { ok: false as const, status: 409 as const, code: 'not_needs_attention' as const, message: `Order ${orderId} is ${current.order.status}, not needs_attention` };
    }
    return { ok: true as const, ...current };
  }
}
