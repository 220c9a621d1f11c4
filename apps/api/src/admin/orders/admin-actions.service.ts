import { Injectable } from '@nestjs/common';
import { OperatorActions, RetentionRepository, type ActionDone, type ActionRefusal } from '@cardpull/orders';
import { ApiError } from '@cardpull/platform';

export interface AdminActionResult {
  orderId: string;
  status: string;
  /** Callback events the action's transition wrote (enqueued once committed). */
  callbacks: string[];
  /** The step enqueued, when the action scheduled one. */
  next?: { stepSeq: number; step: 'sync_call' | 'async_create' | 'async_poll'; delayMs: number };
  /** A re-drive after the request ID was declared dead: the new request ID. */
  newRequestId?: string;
}

/**
 * The operator's actions from the order page (OperatorActions of libs/orders does the work, recorded on
 * the order's timeline as admin:<user>), their refusals as HTTP errors; and a dispute.
 */
@Injectable()
export class AdminActions {
  constructor(
    private readonly actions: OperatorActions,
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

  /** Re-drive: the same request ID while it is open, a new one once it is dead (OperatorActions.redrive). */
  async redrive(orderId: string, user: string, reason: string): Promise<AdminActionResult> {
    return this.result(orderId, await this.actions.redrive(orderId, { actor: `admin:${user}`, who: user, reason }));
  }

  /** The operator's word that the order's open request ID is dead (OperatorActions.declareDead). */
  async declareDead(orderId: string, user: string, reason: string): Promise<AdminActionResult> {
    return this.result(orderId, await this.actions.declareDead(orderId, { actor: `admin:${user}`, who: user, reason }));
  }

  /** Ends the order as failed with the operator's reason, declaring an open request ID dead (OperatorActions.markFailed). */
  async markFailed(orderId: string, user: string, reason: string): Promise<AdminActionResult> {
    return this.result(orderId, await this.actions.markFailed(orderId, { actor: `admin:${user}`, who: user, reason }));
  }

  private result(orderId: string, r: ActionDone | ActionRefusal): AdminActionResult {
    if (!r.ok) throw new ApiError(r.status, r.code, r.message);
    return { orderId, status: r.status, callbacks: r.callbacks, ...(r.next ? { next: r.next } : {}), ...(r.newRequestId ? { newRequestId: r.newRequestId } : {}) };
  }
}
