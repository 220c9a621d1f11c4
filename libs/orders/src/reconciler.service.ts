import { Inject, Injectable, Logger, type OnApplicationBootstrap, type BeforeApplicationShutdown } from '@nestjs/common';
import type { Pool } from 'pg';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { PG_POOL } from '@cardpull/db';
import { PartnerClient } from '@cardpull/partner-client';
import { CallbackQueue } from './callbacks/callback-queue.service';
import { OrderQueue } from './order-queue.service';
import { Periodic } from './periodic';
import type { AttemptRow, OrderRow } from './order.types';
import { StepOutcomes, isAcknowledged, type StepResult } from './step-outcomes.service';
import { StepsRepository } from './steps.repository';
import { leaseMs } from './timings';

const RECONCILE_LOCK = 4_242_002;
const BATCH = 200;

export interface ReconcileReport {
  checked: number;
  resolved: number;
  stillUnknown: number;
}

/**
 * Periodic re-check of attempts left in an unknown state (orders in needs_attention): a sync attempt is
 * sent again with its SAME request ID (the partner answers the first call's result), an async one is
 * read with GET /pull_requests/:id. A card found completes the order; a definitive answer ends the
 * attempt as usual; a pull request still pending resumes polling. Nothing found changes nothing.
 */
@Injectable()
export class Reconciler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly log = new Logger(Reconciler.name);
  private readonly periodic = new Periodic('reconciliation', this.log, () => this.reconcile());

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly steps: StepsRepository,
    private readonly outcomes: StepOutcomes,
    private readonly partner: PartnerClient,
    private readonly orders: OrderQueue,
    private readonly callbacks: CallbackQueue,
  ) {}

  onApplicationBootstrap(): void {
    this.periodic.start(this.config.RECONCILE_INTERVAL_MS);
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.periodic.stop();
  }

  /** One pass over the orders in needs_attention with an unknown attempt (a call while one runs shares it). */
  reconcileOnce(): Promise<ReconcileReport> {
    return this.periodic.run();
  }

  private async reconcile(): Promise<ReconcileReport> {
    const client = await this.pool.connect();
    let ids: string[];
    try {
      const { rows: lock } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [RECONCILE_LOCK]);
      if (!lock[0]?.ok) return { checked: 0, resolved: 0, stillUnknown: 0 };
      try {
        const { rows } = await client.query<{ id: string }>(
          `SELECT o.id FROM orders o
           JOIN LATERAL (SELECT state FROM attempts a WHERE a.order_id = o.id ORDER BY a.seq DESC LIMIT 1) a ON true
           WHERE o.status = 'needs_attention' AND a.state = 'unknown' ORDER BY o.updated_at LIMIT $1`,
          [BATCH],
        );
        ids = rows.map((r) => r.id);
        const report: ReconcileReport = { checked: 0, resolved: 0, stillUnknown: 0 };
        for (const id of ids) {
          const resolved = await this.check(id);
          if (resolved === null) continue;
          report.checked++;
          if (resolved) report.resolved++;
          else report.stillUnknown++;
        }
        if (report.checked) this.log.log(report, 'reconciliation of unknown attempts');
        return report;
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [RECONCILE_LOCK]);
      }
    } finally {
      client.release();
    }
  }

  /** True when the order moved on, false when still unknown, null when it could not be leased. */
  private async check(orderId: string): Promise<boolean | null> {
    const current = await this.steps.leaseForReconcile(orderId, this.outcomes.actor, leaseMs(this.config));
    if (!current) return null;
    const { order, attempt } = current;
    const result = order.mode === 'sync' ? await this.checkSync(order, attempt) : await this.checkAsync(order, attempt);
    if (result === 'unknown') return false;
    if (result.callbacks?.length) await this.callbacks.enqueue(result.callbacks.map((id) => ({ id })));
    if (result.kind === 'next') await this.orders.schedule(result);
    return true;
  }

  private async checkSync(order: OrderRow, attempt: AttemptRow): Promise<StepResult | 'unknown'> {
    const out = await this.partner.createCard(attempt.requestId, order.giftCardCode, order.amount);
    if (out.kind === 'success') return this.outcomes.card(order, attempt, out.value, 'issued');
    if (out.kind === 'definitive') return this.outcomes.definitive(order, attempt, out.code, out.message);
    await this.steps.releaseLease(order.id, this.outcomes.actor, { requestId: attempt.requestId, code: out.kind === 'unknown' ? out.reason : out.kind, message: out.message });
    return 'unknown';
  }

  private async checkAsync(order: OrderRow, attempt: AttemptRow): Promise<StepResult | 'unknown'> {
    const out = await this.partner.getPullRequest(attempt.requestId);
    if (out.kind === 'success') {
      if (out.value.status === 'success' && out.value.card) return this.outcomes.card(order, attempt, out.value.card, 'success');
      if (out.value.status === 'error') return this.outcomes.asyncError(order, attempt);
      return this.resume(order, attempt, 'async_poll', `pull request ${out.value.status}`);
    }
    if (out.kind === 'not_found' && !isAcknowledged(attempt)) return this.resume(order, attempt, 'async_create', 'never created');
    await this.steps.releaseLease(order.id, this.outcomes.actor, { requestId: attempt.requestId, code: out.kind === 'unknown' ? out.reason : out.kind, message: out.message });
    return 'unknown';
  }

  private resume(order: OrderRow, attempt: AttemptRow, step: 'async_poll' | 'async_create', why: string): Promise<StepResult> {
    return this.outcomes.apply(order, {
      status: 'in_progress',
      next: { step, at: new Date() },
      error: null,
      attempt: { requestId: attempt.requestId, unknownSince: 'restart' },
      event: { type: 'reconciled_resumed', requestId: attempt.requestId, detail: { why, step } },
    });
  }
}
