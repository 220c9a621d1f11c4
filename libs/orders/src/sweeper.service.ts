import { Inject, Injectable, Logger, type OnApplicationBootstrap, type BeforeApplicationShutdown } from '@nestjs/common';
import type { Pool } from 'pg';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { PG_POOL, withTransaction, type OrderStep } from '@cardpull/db';
import { callbackJobId, orderStepJobId } from '@cardpull/queue';
import { PartnerCircuit } from './circuit.service';
import { CallbackQueue } from './callbacks/callback-queue.service';
import { CallbacksRepository } from './callbacks/callbacks.repository';
import { OrderQueue, type ScheduledStep } from './order-queue.service';
import { Periodic } from './periodic';
import { removeLeftovers } from './queue-repair';

/** Any constant: the advisory lock that lets one worker at a time sweep. */
const SWEEP_LOCK = 4_242_001;

export interface SweepReport {
  swept: boolean;
  pending: number;
  enqueued: number;
}

/**
 * Invariant 4 (Redis is disposable): at start-up and every SWEEP_INTERVAL_MS, every order with a next
 * step gets a job unless its job still lives. A flushed Redis, a killed worker or a lost job therefore
 * only delays orders. Runs on a timer in the process, not as a repeatable job, because a repeatable job
 * would vanish with the Redis it is meant to repair.
 */
@Injectable()
export class Sweeper implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly log = new Logger(Sweeper.name);
  private readonly periodic = new Periodic('sweep', this.log, () => this.doSweep());

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly queue: OrderQueue,
    private readonly circuit: PartnerCircuit,
    private readonly callbackQueue: CallbackQueue,
    private readonly callbacks: CallbacksRepository,
  ) {}

  onApplicationBootstrap(): void {
    this.periodic.start(this.config.SWEEP_INTERVAL_MS, { now: true });
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.periodic.stop();
  }

  /** One sweep; concurrent calls share it. */
  sweep(): Promise<SweepReport> {
    return this.periodic.run();
  }

  private doSweep(): Promise<SweepReport> {
    // The advisory lock lives as long as this transaction: one worker at a time sweeps.
    return withTransaction(this.pool, async (client) => {
      const { rows: lock } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS ok', [SWEEP_LOCK]);
      if (!lock[0]?.ok) return { swept: false, pending: 0, enqueued: 0 };
      // How long until each step is due, by the database's clock (no worker's clock decides it).
      const { rows } = await client.query<{ id: string; step_seq: number; next_step: OrderStep; delay_ms: number }>(
        `SELECT id, step_seq, next_step, GREATEST(0, extract(epoch FROM next_step_at - now()) * 1000)::float8 AS delay_ms
         FROM orders WHERE next_step IS NOT NULL`,
      );
      await this.circuit.reconcile();
      // Read Redis after Postgres: a step that moved on in between is re-added under its old id, and its
      // job then finds a stale step and does nothing (harmless); the other order would miss a step.
      const live = await this.queue.liveJobIds();
      const missing: ScheduledStep[] = rows
        .filter((r) => !live.has(orderStepJobId(r.id, r.step_seq)))
        .map((r) => ({ orderId: r.id, stepSeq: r.step_seq, step: r.next_step, delayMs: r.delay_ms }));
      // A job id that is not live may still have its hash (a list lost without it, a finished job kept):
      // BullMQ would take the re-add for a duplicate and drop it. Remove the leftover first.
      await removeLeftovers(this.queue.queue, missing.map((m) => orderStepJobId(m.orderId, m.stepSeq)));
      if (missing.length) await this.queue.scheduleMany(missing);
      // The callback outbox the same way (Postgres first, then Redis): every pending event has a delivery job.
      const pendingCallbacks = await this.callbacks.pending();
      const liveCallbacks = await this.callbackQueue.liveJobIds();
      const lostCallbacks = pendingCallbacks.filter((e) => !liveCallbacks.has(callbackJobId(e.id)));
      await removeLeftovers(this.callbackQueue.queue, lostCallbacks.map((e) => callbackJobId(e.id)));
      await this.callbackQueue.enqueue(lostCallbacks.map((e) => ({ id: e.id, delayMs: e.delayMs })));
      if (missing.length || lostCallbacks.length) {
        this.log.warn(
          { enqueued: missing.length, pending: rows.length, callbacks: lostCallbacks.length },
          `sweeper re-enqueued ${missing.length} order step(s) and ${lostCallbacks.length} callback(s) that had no job`,
        );
      }
      return { swept: true, pending: rows.length, enqueued: missing.length };
    });
  }
}
