import { Injectable } from '@nestjs/common';
import { AdminActions, CallbackQueue, OrderQueue, type AdminActionResult } from '@cardpull/orders';

/**
 * The operator's two actions on a needs_attention order. AdminActions commits the transition and its audit
 * event (actor admin:<user>, the reason); the jobs are enqueued only afterwards, and a failed enqueue is
 * harmless (the sweeper re-derives them from Postgres, invariant 4).
 */
@Injectable()
export class OrderActions {
  constructor(
    private readonly actions: AdminActions,
    private readonly orderQueue: OrderQueue,
    private readonly callbackQueue: CallbackQueue,
  ) {}

  /** Same request ID again (invariant 2); the unknown-outcome window starts over. */
  async redrive(orderId: string, user: string, reason: string): Promise<AdminActionResult> {
    return this.enqueue(await this.actions.redrive(orderId, user, reason));
  }

  async markFailed(orderId: string, user: string, reason: string): Promise<AdminActionResult> {
    return this.enqueue(await this.actions.markFailed(orderId, user, reason));
  }

  private async enqueue(result: AdminActionResult): Promise<AdminActionResult> {
    if (result.next) await this.orderQueue.schedule({ orderId: result.orderId, ...result.next });
    await this.callbackQueue.enqueue(result.callbacks.map((id) => ({ id })));
    return result;
  }
}
