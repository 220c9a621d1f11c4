import { Inject, Injectable } from '@nestjs/common';
import type { Job } from 'bullmq';
import { PinoLogger } from 'nestjs-pino';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { runInJobContext } from '@cardpull/logger';
import { contextFrom, tracingOn, withSpan } from '@cardpull/platform';
import { AfterCommit, BACKGROUND_PRIORITY, ORDER_STEP_NAMES, StepsRepository, isBackgroundStep } from '@cardpull/orders';
import { ORDERS_QUEUE, type OrderJobData } from '@cardpull/queue';
import { StepRunner } from '../steps/step-runner';
import { QueueProcessor, type ProcessorSettings } from './queue-processor';

/**
 * The processor of the orders queue. Thin (STYLE habit 4): it hands the job to the StepRunner and turns
 * the answer into queue operations; our own failures (database down, a bug) are rethrown so BullMQ retries.
 *
 * Lock and stall settings (WORKER_LOCK_MS, WORKER_STALLED_INTERVAL_MS): a live worker renews its lock
 * every lockDuration/4 to lockDuration/2, so the lock can be short; a killed worker's job is back in the
 * queue within lock + stalled interval (3 s by default), and the order's lease in Postgres (ORDER_LEASE_MS,
 * renewed while a call is in flight: LeaseKeeper) keeps its successor from calling while the lease's
 * holder may still be sending. A live worker whose lock lapsed (its event loop stood still) only gets its
 * job run twice: the copy finds the lease held, or the step moved on.
 */
@Injectable()
export class OrderStepsProcessor extends QueueProcessor<typeof ORDERS_QUEUE, ProcessorSettings & Pick<ServiceConfig, 'WORKER_CONCURRENCY' | 'WORKER_LOCK_MS'>> {
  constructor(
    @Inject(SERVICE_CONFIG) config: ProcessorSettings & Pick<ServiceConfig, 'WORKER_CONCURRENCY' | 'WORKER_LOCK_MS'>,
    private readonly steps: StepRunner,
    private readonly afterCommit: AfterCommit,
    private readonly pino: PinoLogger,
    private readonly orders: StepsRepository,
  ) {
    super(ORDERS_QUEUE, ORDER_STEP_NAMES, config);
  }

  protected readonly jobNoun = 'order step';

  protected options() {
    return { concurrency: this.config.WORKER_CONCURRENCY, lockDuration: this.config.WORKER_LOCK_MS, maxStalledCount: 3 };
  }

  process(job: Job<OrderJobData>, token?: string): Promise<string> {
    // The order's trace goes on in this step (its job carries the traceparent); the next step it schedules continues it.
    const attributes = { 'cardpull.order_id': job.data.orderId, 'cardpull.step': job.name, 'cardpull.step_seq': job.data.stepSeq };
    const inTrace = (trace: string | null | undefined) => withSpan(`order step ${job.name}`, attributes, () => this.step(job, token), contextFrom(trace));
    // Not async: a step's promise is the span's own, with no wrapper (one more promise and await per card).
    const trace = this.traceOf(job);
    return trace instanceof Promise ? trace.then(inTrace) : inTrace(trace);
  }

  /**
   * The trace the step goes on in: its job's, or else (a job from before the order kept its trace) the one
   * kept with the order. Read only with tracing on and only for such a job: never a round trip per step,
   * and no promise to wait on either (answered as it is, not wrapped).
   */
  private traceOf(job: Job<OrderJobData>): string | null | undefined | Promise<string | undefined> {
    if (job.data.trace || !tracingOn()) return job.data.trace;
    return this.orders.traceParents([job.data.orderId]).then(
      (kept) => kept.get(job.data.orderId),
      () => undefined,
    );
  }

  private step(job: Job<OrderJobData>, token?: string): Promise<string> {
    return runInJobContext(this.pino, job, async () => {
      // The job says which order; the step is read from the order's row (a job's name decides nothing).
      const result = await this.steps.run(job.data, job.name, job.priority);
      await this.afterCommit.run({ callbacks: result.callbacks, next: result.kind === 'next' ? result : null });
      switch (result.kind) {
        case 'next':
          return `next: ${result.step} in ${Math.round(result.delayMs)} ms`;
        case 'delay':
          // Same job, later: no Postgres write for a step that learned nothing (a poll still waiting). A
          // poll moved ahead by the poll ager waits behind creations again next time.
          if (isBackgroundStep(job.name) && job.priority !== BACKGROUND_PRIORITY) await job.changePriority({ priority: BACKGROUND_PRIORITY });
          return this.later(job, token, result.delayMs, result.reason);
        default:
          return result.reason;
      }
    });
  }
}
