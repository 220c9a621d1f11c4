import { Injectable } from '@nestjs/common';
import { CallbackQueue, CallbacksRepository, OrderQueue, PartnerCircuit, StepsRepository } from '@cardpull/orders';
import { callbackJobId, orderStepJobId } from '@cardpull/queue';
import { PeriodicTask } from '../tasks/periodic-task';

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
export class Sweeper extends PeriodicTask<SweepReport> {
  protected readonly taskName = 'sweep';
  protected readonly every = 'SWEEP_INTERVAL_MS';
  protected override readonly runAtStart = true;

  constructor(
    private readonly steps: StepsRepository,
    private readonly queue: OrderQueue,
    private readonly circuit: PartnerCircuit,
    private readonly callbackQueue: CallbackQueue,
    private readonly callbacks: CallbacksRepository,
  ) {
    super();
  }

  /** One sweep, unless another worker is sweeping; concurrent calls share it. */
  async sweep(): Promise<SweepReport> {
    return (await this.runOnce()) ?? { swept: false, pending: 0, enqueued: 0 };
  }

  /** One worker at a time sweeps (PeriodicTask: the task's lease is held until the sweep ends). */
  protected async tick(): Promise<SweepReport> {
    const pending = await this.steps.pendingSteps();
    await this.circuit.reconcile();
    // Read Redis after Postgres (the other order would miss a step that got its job in between).
    const live = await this.queue.liveJobIds();
    const notLive = pending.filter((s) => !live.has(orderStepJobId(s.orderId, s.stepSeq)));
    // A step whose job finished between the two reads (its order moved on: completed, or a next step with
    // its own job) is not missing: asked again in Postgres, only the steps still due as read are re-created.
    // Each goes on in its order's trace (kept with the order at intake), not in a new one.
    const due = await this.steps.stillDue(notLive);
    const missing = notLive.filter((s) => due.has(s.orderId));
    // A job id that is not live may still have its hash (a list lost without it, a finished job kept):
    // BullMQ would take the re-add for a duplicate and drop it. Remove the leftover first.
    await this.queue.removeLeftovers(missing.map((m) => orderStepJobId(m.orderId, m.stepSeq)));
    if (missing.length) await this.queue.scheduleMany(missing.map((m) => ({ ...m, trace: due.get(m.orderId) ?? null })));
    // The callback outbox the same way (Postgres first, then Redis): every pending event has a delivery job.
    const pendingCallbacks = await this.callbacks.pending();
    const liveCallbacks = await this.callbackQueue.liveJobIds();
    const lostCallbacks = pendingCallbacks.filter((e) => !liveCallbacks.has(callbackJobId(e.id)));
    await this.callbackQueue.removeLeftovers(lostCallbacks.map((e) => callbackJobId(e.id)));
    await this.callbackQueue.enqueue(lostCallbacks.map((e) => ({ id: e.id, delayMs: e.delayMs })));
    if (missing.length || lostCallbacks.length) {
      this.log.warn(
        { enqueued: missing.length, pending: pending.length, callbacks: lostCallbacks.length },
        `sweeper re-enqueued ${missing.length} order step(s) and ${lostCallbacks.length} callback(s) that had no job`,
      );
    }
    return { swept: true, pending: pending.length, enqueued: missing.length };
  }
}
