import { Injectable } from '@nestjs/common';
import { ApiError } from '@cardpull/platform/api-error';
import { isAcknowledged } from './step-outcomes.service';
import { StepsRepository } from './steps.repository';

export interface AdminActionResult {
  orderId: string;
  status: string;
  /** Callback events the action's transition wrote (to enqueue once committed). */
  callbacks: string[];
  /** The step to enqueue, when the action scheduled one. */
  next?: { stepSeq: number; step: 'sync_call' | 'async_create' | 'async_poll'; at: Date };
}

/**
 * Operator actions on an order in needs_attention, each recorded on the order's timeline with who did it
 * and why (the audit trail). Both are guarded by the order's step, so two operators cannot act twice.
 */
@Injectable()
export class AdminActions {
  constructor(private readonly steps: StepsRepository) {}

  /**
   * Re-drive with the SAME request ID (invariant 2): the unknown-outcome window starts again. A sync order
   * calls POST /cards again; an async one polls its pull request, or creates it again if the partner never
   * acknowledged it.
   */
  async redrive(orderId: string, user: string, reason: string): Promise<AdminActionResult> {
    const { order, attempt } = await this.needsAttention(orderId);
    const step = order.mode === 'sync' ? 'sync_call' : isAcknowledged(attempt) ? 'async_poll' : 'async_create';
    const at = new Date();
    const result = await this.steps.transition({
      orderId,
      guard: { stepSeq: order.stepSeq },
      actor: `admin:${user}`,
      status: 'in_progress',
      next: { step, at },
      error: null,
      attempt: { requestId: attempt.requestId, unknownSince: 'restart' },
      event: { type: 'redriven', requestId: attempt.requestId, detail: { reason, step } },
    });
    if (!result.applied) throw new ApiError(409, 'order_changed', 'The order changed meanwhile; reload it');
    return { orderId, status: 'in_progress', callbacks: result.callbackEventIds, next: { stepSeq: result.stepSeq, step, at } };
  }

  /** Ends the order as failed with the operator's reason (a card that shows up later is still stored). */
  async markFailed(orderId: string, user: string, reason: string): Promise<AdminActionResult> {
    const { order, attempt } = await this.needsAttention(orderId);
    const result = await this.steps.transition({
      orderId,
      guard: { stepSeq: order.stepSeq },
      actor: `admin:${user}`,
      status: 'failed',
      next: null,
      error: { code: 'marked_failed', message: `Marked failed by ${user}: ${reason}` },
      event: { type: 'marked_failed', requestId: attempt.requestId, detail: { reason } },
    });
    if (!result.applied) throw new ApiError(409, 'order_changed', 'The order changed meanwhile; reload it');
    return { orderId, status: 'failed', callbacks: result.callbackEventIds };
  }

  private async needsAttention(orderId: string) {
    const current = await this.steps.current(orderId);
    if (!current) throw new ApiError(404, 'order_not_found', `No order ${orderId}`);
    if (current.order.status !== 'needs_attention') {
      throw new ApiError(409, 'not_needs_attention', `Order ${orderId} is ${current.order.status}, not needs_attention`);
    }
    return current;
  }
}
