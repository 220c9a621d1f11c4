import { Inject, Injectable } from '@nestjs/common';
import type { PullMode } from '@cardpull/db';
import { AfterCommit, StepsRepository, leaseMs } from '@cardpull/orders';
import { CALL_GATE, isHeldBack, type CallGate } from '@cardpull/partner-client';
import { contextFrom, withSpan } from '@cardpull/platform';
import { DecisionApplier } from '../steps/decision-applier.service';
import { PartnerAsk } from '../steps/partner-ask.service';
import { PeriodicTask } from '../tasks/periodic-task';

const PAGE = 200;

export interface ReconcileReport {
  /** Attempts asked about (a POST with the same request ID for sync, a GET of the pull request for async). */
  checked: number;
  /** Of those, the ones whose order or attempt the answer moved (a card stored, polling resumed, the partner's `error`). */
  resolved: number;
  /** Asked, but nothing the partner said settled them: asked again next pass. */
  unchanged: number;
  /** Not asked: held back by the partner limits, or leased by someone asking it right now. */
  skipped: number;
  /** The check failed (its error is logged); the pass went on with the others. */
  errors: number;
}

const emptyReport = (): ReconcileReport => ({ checked: 0, resolved: 0, unchanged: 0, skipped: 0, errors: 0 });

/**
 * Periodic re-check (RECONCILE_INTERVAL_MS) of the request IDs that no step asks about any more
 * (StepsRepository.reconcileCandidates): async IDs an operator declared dead, read for a card for
 * RECONCILE_DEAD_RECHECK_MS (a GET cannot issue one), and, as a safety net, open IDs of orders without a
 * step. Asking, deciding and applying is PartnerAsk's, the same as a step's (decide, with `reconciling`): a
 * card is always stored (completed_after_failed, or a surplus); an order without a step moves on when the
 * answer allows. A sync ID is only ever re-sent under the order's lease (one sender per ID), and never once
 * declared dead. Each pass pages through every such attempt with a cursor, each in its own error boundary.
 */
@Injectable()
export class Reconciler extends PeriodicTask<ReconcileReport> {
  protected readonly taskName = 'reconciliation';
  protected readonly every = 'RECONCILE_INTERVAL_MS';

  constructor(
    private readonly steps: StepsRepository,
    private readonly asker: PartnerAsk,
    private readonly applier: DecisionApplier,
    private readonly afterCommit: AfterCommit,
    @Inject(CALL_GATE) private readonly gate: CallGate,
  ) {
    super();
  }

  /** One pass, unless another worker is running one (a call while one runs here shares it). */
  async reconcileOnce(): Promise<ReconcileReport> {
    return (await this.runOnce()) ?? emptyReport();
  }

  /** One pass at a time across the deployment (PeriodicTask: the task's lease is held until it ends). */
  protected async tick(): Promise<ReconcileReport> {
    const report = emptyReport();
    let cursor = '';
    for (;;) {
      const page = await this.steps.reconcileCandidates(cursor, PAGE, this.config.RECONCILE_DEAD_RECHECK_MS);
      for (const { orderId, requestId, kind } of page) {
        try {
          report[await this.check(orderId, requestId, kind)]++;
        } catch (error) {
          report.errors++;
          this.log.error({ orderId, requestId, err: (error as Error).message }, 'reconciliation of one attempt failed; the pass goes on');
        }
      }
      if (page.length < PAGE) break;
      cursor = page[page.length - 1]!.requestId;
    }
    report.checked = report.resolved + report.unchanged;
    if (report.checked || report.errors) this.log.log(report, 'reconciliation pass');
    return report;
  }

  private async check(orderId: string, requestId: string, attemptKind: PullMode): Promise<'resolved' | 'unchanged' | 'skipped'> {
    const owner = this.applier.actor;
    // The permit comes before the lease, which records a re-send as a call sent (see StepRunner.run). A sync
    // ID is asked by sending it again: a creation; an async one by a poll, which never waits here.
    const permit = await this.gate.acquire(attemptKind === 'sync' ? 'create' : 'poll', { maxWaitMs: 0, urgent: true });
    if (isHeldBack(permit)) return 'skipped';
    const current = await (attemptKind === 'sync' ? this.steps.leaseForReconcile(orderId, requestId, owner, leaseMs(this.config)) : this.steps.attemptOf(orderId, requestId)).catch((error: unknown) => {
      permit.done({ sent: false });
      throw error;
    });
    if (!current) {
      permit.done({ sent: false });
      return 'skipped';
    }
    const { order, attempt, clock } = current;
    try {
      // In the order's trace (kept with the order at intake): the call, and the step it may schedule.
      const attributes = { 'cardpull.order_id': order.id, 'cardpull.request_id': requestId };
      return await withSpan('reconcile', attributes, async () => {
        const { result, decision } = await this.asker.ask(order, attempt, attemptKind === 'sync' ? 'sync_call' : 'async_poll', clock, permit, { reconciling: true, actor: owner });
        await this.afterCommit.run({ callbacks: result.callbacks, next: result.kind === 'next' ? result : null });
        const moved = decision.kind !== 'stay' || decision.note?.state !== undefined;
        return moved ? 'resolved' : 'unchanged';
      }, contextFrom(order.traceParent));
    } finally {
      // Harmless when the transition already cleared it, or when none was taken (a read).
      if (attemptKind === 'sync') await this.steps.releaseLease(order.id, owner);
    }
  }
}
