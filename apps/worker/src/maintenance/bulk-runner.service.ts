import { Injectable } from '@nestjs/common';
import { BulkActionsRepository, OperatorActions, type ActionBy, type ActionDone, type ActionRefusal, type BulkActionKind } from '@cardpull/orders';
import { PeriodicTask } from '../tasks/periodic-task';

/** How long a bulk action waits for a call in flight on one order before it skips the order. */
const MAX_WAIT_FOR_CALL_MS = 15_000;

/**
 * Runs the operators' bulk actions (started on the operations page): every second, the next
 * BULK_ACTIONS_PER_SECOND orders of the oldest running one are re-driven, declared dead or marked failed by
 * OperatorActions, as their creator, each with its own audit entry naming the bulk action; an order that
 * is no longer in needs_attention (someone acted meanwhile) is skipped and counted. Once per second across
 * the fleet (PeriodicTask), so the rate holds however many workers run; the progress is in Postgres.
 */
@Injectable()
export class BulkRunner extends PeriodicTask<number> {
  protected readonly taskName = 'bulk actions';
  protected readonly every = 1_000;

  constructor(
    private readonly bulk: BulkActionsRepository,
    private readonly actions: OperatorActions,
  ) {
    super();
  }

  /** No bulk action running (the usual case): the tick claims nothing, so an idle fleet writes nothing each second. */
  protected override async idle(): Promise<{ answer: number } | null> {
    return (await this.bulk.anyRunning()) ? null : { answer: 0 };
  }

  protected async tick(): Promise<number> {
    const batch = await this.bulk.nextBatch(this.config.BULK_ACTIONS_PER_SECOND);
    if (!batch) return 0;
    const { action, orderIds } = batch;
    const by = { actor: `admin:${action.createdBy}`, who: action.createdBy, reason: action.reason, bulk: { id: action.id, action: action.action } };
    let applied = 0;
    for (const orderId of orderIds) {
      let r = await this.act(action.action, orderId, by);
      // One sender per ID: an order whose request ID is being asked right now waits for that call, up to
      // MAX_WAIT_FOR_CALL_MS: until its lease's end, again while the lease is renewed (the call goes on).
      const waitUntil = Date.now() + MAX_WAIT_FOR_CALL_MS;
      while (!r.ok && r.code === 'being_asked' && Date.now() < waitUntil) {
        const wait = Math.min(r.retryAfterMs || 1_000, waitUntil - Date.now());
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, wait) + 100));
        r = await this.act(action.action, orderId, by);
      }
      if (r.ok) applied++;
      else this.log.warn({ bulkAction: action.id, orderId, code: r.code, reason: r.message }, `bulk ${action.action}: order skipped`);
    }
    await this.bulk.advance(action.id, action.position, orderIds.length, applied, orderIds.length - applied);
    if (action.position + orderIds.length >= action.total) {
      this.log.log({ bulkAction: action.id, action: action.action, total: action.total }, `bulk ${action.action} ${action.id} done`);
    }
    return orderIds.length;
  }

  private act(kind: BulkActionKind, orderId: string, by: ActionBy): Promise<ActionDone | ActionRefusal> {
    switch (kind) {
      case 'redrive':
        return this.actions.redrive(orderId, by);
      case 'declare_dead':
        return this.actions.declareDead(orderId, by);
      case 'mark_failed':
        return this.actions.markFailed(orderId, by);
    }
  }
}
