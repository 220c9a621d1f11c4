import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { TurnBatch, type OrderStep } from '@cardpull/db';
import { currentTraceparent, withTimeout } from '@cardpull/platform';
import { ORDERS_QUEUE, OwnedQueue, PriorityBand, jobOf, orderStepJobId, type BandRaise, type OrderJobData, type OrderJobName } from '@cardpull/queue';
import type { ScheduledStep } from '../model/order.types';
import { AGED_PRIORITY, BACKGROUND_PRIORITY } from './queue-priorities';
import { FairShare } from './fair-share';
import { isBackgroundStep, isSendStep } from '../model/order-steps';

const ENQUEUE_TIMEOUT_MS = 1_000;
/** The set of polls moved ahead and still waiting, beside the queue's own keys (PriorityBand). */
const AGED_SET = 'cardpull-aged';

/** The orders queue's job names are the schema's steps, no more and no fewer (checked by the compiler). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const STEPS_ARE_JOBS: Same<OrderStep, OrderJobName> = true;
void STEPS_ARE_JOBS;


/** At most this many steps written in one go (a batch is flushed earlier at the end of the event-loop turn). */
const MAX_SCHEDULE_BATCH = 64;
/**
 * At most this many enqueues at a time; steps scheduled meanwhile go together in the next one. With Redis
 * down each waits ENQUEUE_TIMEOUT_MS, so a burst of intakes leaves a few pending batches, not one per order.
 */
const MAX_SCHEDULES_IN_FLIGHT = 4;
/**
 * At most this many steps waiting for their enqueue in one process; beyond, a step is not enqueued (answered
 * false at once, logged) and the sweeper enqueues it from Postgres. The intake answers without waiting for
 * its enqueue (OrdersService), so a Redis that hangs (no answer, no refusal) must not grow this without end.
 */
const MAX_SCHEDULE_BACKLOG = 10_000;

interface Waiting {
  step: ScheduledStep;
  done: (ok: boolean) => void;
}

/**
 * Puts order steps on the queue. Every enqueue happens after the step is committed in Postgres, and a
 * failure here is only logged: the order is durable and the sweeper enqueues it later (invariant 4).
 * Steps scheduled in one turn of the event loop (concurrent requests, concurrent jobs) are written to Redis
 * together, one add each; the fixed job ids keep every add idempotent.
 */
@Injectable()
export class OrderQueue extends OwnedQueue<OrderJobData> {
  private readonly log = new Logger(OrderQueue.name);
  private lastRedisError = 0;
  private lastBacklogFull = 0;
  /** Steps scheduled and not yet answered (waiting for a batch, or in one). */
  private backlog = 0;
  /** At most this many in `backlog` (a test's subclass sets a smaller one). */
  protected readonly maxBacklog: number = MAX_SCHEDULE_BACKLOG;
  private readonly fair: FairShare;
  private readonly agedPolls: PriorityBand;
  private readonly batch = new TurnBatch<Waiting>(MAX_SCHEDULE_BATCH, (waiting) => this.flush(waiting), MAX_SCHEDULES_IN_FLIGHT);

  constructor(
    @InjectQueue(ORDERS_QUEUE) queue: Queue<OrderJobData>,
    @Optional() @Inject(SERVICE_CONFIG) config?: Pick<ServiceConfig, 'CLIENT_WEIGHTS'>,
  ) {
    super(queue);
    this.agedPolls = new PriorityBand(queue, BACKGROUND_PRIORITY, AGED_PRIORITY, AGED_SET);
    this.fair = new FairShare(Date.now, config?.CLIENT_WEIGHTS);
    // Without a listener BullMQ prints every reconnection error; one warning per 10 s says enough.
    queue.on('error', (err) => {
      if (Date.now() - this.lastRedisError < 10_000) return;
      this.lastRedisError = Date.now();
      this.log.warn({ err: err.message }, 'Redis unreachable for the orders queue; orders are kept in Postgres meanwhile');
    });
  }

  schedule(step: ScheduledStep): Promise<boolean> {
    // The trace active when the step is scheduled (the request, the step before, an operator's action): its
    // job continues it. Else the order's own, when the caller read it from the row.
    const trace = currentTraceparent() ?? step.trace;
    const traced = trace ? { ...step, trace } : step;
    if (this.backlog >= this.maxBacklog) {
      if (Date.now() - this.lastBacklogFull > 10_000) {
        this.lastBacklogFull = Date.now();
        this.log.warn({ orderId: step.orderId, backlog: this.backlog }, 'too many steps wait for Redis; this one is left to the sweeper (the order is safe in Postgres)');
      }
      return Promise.resolve(false);
    }
    this.backlog++;
    return new Promise<boolean>((resolve) =>
      this.batch.push({
        step: traced,
        done: (ok) => {
          this.backlog--;
          resolve(ok);
        },
      }),
    );
  }

  private async flush(batch: Waiting[]): Promise<void> {
    // One add per step, all written in this turn (ioredis sends them back to back), each caller answered
    // by its own reply: an intake no longer waits for the slowest job of its batch, and BullMQ's addBulk
    // pipeline (a client-side transaction) costs the API more CPU than the adds themselves. BullMQ waits
    // for its connection before adding: a deadline bounds each wait so an API whose Redis is down still
    // answers quickly (the add may still land later; the fixed job id makes that harmless).
    const failed: string[] = [];
    let reason = '';
    await Promise.all(
      batch.map(async (w) => {
        try {
          await withTimeout<unknown>(this.single(w.step), ENQUEUE_TIMEOUT_MS, `Redis did not answer within ${ENQUEUE_TIMEOUT_MS} ms`);
          w.done(true);
        } catch (error) {
          failed.push(w.step.orderId);
          reason = (error as Error).message;
          w.done(false);
        }
      }),
    );
    if (failed.length) this.log.warn({ orderIds: failed, err: reason }, 'could not enqueue the next step; the sweeper will (the order is safe in Postgres)');
  }

  /** Adds many steps at once (the sweeper); steps whose job still lives are left alone by BullMQ. */
  async scheduleMany(steps: ScheduledStep[]): Promise<void> {
    for (let i = 0; i < steps.length; i += 500) {
      const chunk = steps.slice(i, i + 500);
      await this.queue.addBulk(chunk.map((s) => this.job(s)));
    }
  }

  /** Stops workers taking order steps, fleet-wide (the partner circuit while it is open). */
  async pause(): Promise<void> {
    await this.queue.pause();
  }

  async resume(): Promise<void> {
    await this.queue.resume();
  }

  isPaused(): Promise<boolean> {
    return this.queue.isPaused();
  }

  /**
   * Moves polls and re-checks queued when the priority counter was `upToCounter` or less (null: none) ahead
   * of every creation but a client's first (AGED_PRIORITY), at most `budget` of them waiting so at once,
   * fleet-wide; and reads the counter now. The worker's poll ager decides which counter has waited too long.
   */
  raiseWaitingPolls(upToCounter: number | null, budget: number): Promise<BandRaise> {
    return this.agedPolls.raise(upToCounter, budget);
  }

  private single(step: ScheduledStep) {
    const { name, data, opts } = this.job(step);
    return this.queue.add(name, data, opts);
  }

  /**
   * The step's job from the job list (JOBS: its retry options), with its fixed id, delay and priority: a
   * new order's first call by its client's fair share (FairShare), polls and re-checks after every call.
   */
  private job(step: ScheduledStep) {
    const priority = isBackgroundStep(step.step) ? BACKGROUND_PRIORITY : step.client && isSendStep(step.step) ? this.fair.next(step.client) : undefined;
    return jobOf(
      step.step,
      { orderId: step.orderId, stepSeq: step.stepSeq, ...(step.trace ? { trace: step.trace } : {}) },
      {
        jobId: orderStepJobId(step.orderId, step.stepSeq),
        delay: Math.max(0, Math.round(step.delayMs)),
        ...(priority ? { priority } : {}),
      },
    );
  }
}
