import { Injectable } from '@nestjs/common';
import { AfterCommit, RetentionRepository, StepsRepository, TransitionsRepository, redriveStep } from '@cardpull/orders';
import { ApiError } from '@cardpull/platform';

export interface AdminActionResult {
  orderId: string;
  status: string;
  /** Callback events the action's transition wrote (enqueued once committed). */
  callbacks: string[];
  /** The step enqueued, when the action scheduled one. */
  next?: { stepSeq: number; step: 'sync_call' | 'async_create' | 'async_poll'; delayMs: number };
}

/**
 * The operator's two actions on an order in needs_attention, each recorded on the order's timeline with who
 * did it and why (the audit trail, actor admin:<user>). Both are guarded by the order's step, so two
 * operators cannot act twice. The jobs are enqueued only once the transition is committed (AfterCommit), and
 * a failed enqueue is harmless (the sweeper re-derives them from Postgres, invariant 4).
 */
@Injectable()
export class AdminActions {
  constructor(
    private readonly steps: StepsRepository,
    private readonly transitions: TransitionsRepository,
    private readonly afterCommit: AfterCommit,
    private readonly retention: RetentionRepository,
  ) {}

  /**
   * A customer disputes the order: its card secrets are kept past RETENTION_SECRETS_DAYS (live or archived
   * order alike). Recorded on the live order's timeline (`disputed`, actor admin:<user>, the reason), or in
   * the archived document's `disputes`.
   */
  async dispute(orderId: string, user: string, reason: string): Promise<void> {
    if (!(await this.retention.markDisputed(orderId, `admin:${user}`, reason))) throw new ApiError(404, 'order_not_found', `No order ${orderId}`);
  }

  /**
   * Re-drive with the SAME request ID (invariant 2; redriveStep of libs/orders): the unknown-outcome
   * window starts again. Not for a card that does not match its order: sending its request ID again
   * would only bring the same card back.
   */
  async redrive(orderId: string, user: string, reason: string): Promise<AdminActionResult> {
    const { order, attempt } = await this.needsAttention(orderId);
    if (order.errorCode === 'card_mismatch') {
      throw new ApiError(409, 'not_redrivable', 'The partner issued a card that does not match this order; it is kept. Mark the order failed (the card stays listed for a refund)');
    }
    const step = redriveStep(order, attempt);
    const result = await this.transitions.transition({
      orderId,
      stepSeq: order.stepSeq,
      actor: `admin:${user}`,
      status: 'in_progress',
      next: { step, delayMs: 0 },
      error: null,
      attempt: { requestId: attempt.requestId, unknownSince: 'restart' },
      event: { type: 'redriven', requestId: attempt.requestId, detail: { reason, step } },
    });
    if (!result.applied) throw new ApiError(409, 'order_changed', 'The order changed meanwhile; reload it');
    const next = { stepSeq: result.stepSeq, step, delayMs: 0 };
    await this.afterCommit.run({ next: { orderId, ...next }, callbacks: result.callbackEventIds });
    return { orderId, status: 'in_progress', callbacks: result.callbackEventIds, next };
  }

  /**
   * Ends the order as failed with the operator's reason. Its request ID is left as it is: while its outcome
   * is unknown the reconciler keeps asking the partner, and a card that shows up later is stored and
   * completes the order (completed_after_failed on its timeline).
   */
  async markFailed(orderId: string, user: string, reason: string): Promise<AdminActionResult> {
    const { order, attempt } = await this.needsAttention(orderId);
    const result = await this.transitions.transition({
      orderId,
      stepSeq: order.stepSeq,
      actor: `admin:${user}`,
      status: 'failed',
      next: null,
      error: { code: 'marked_failed', message: `Marked failed by ${user}: ${reason}` },
      event: { type: 'marked_failed', requestId: attempt.requestId, detail: { reason } },
    });
    if (!result.applied) throw new ApiError(409, 'order_changed', 'The order changed meanwhile; reload it');
    await this.afterCommit.run({ callbacks: result.callbackEventIds });
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
