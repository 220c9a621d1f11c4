import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { OrderStep } from '@cardpull/db';
import { ORDERS_QUEUE, ORDER_JOB_OPTIONS, orderStepJobId, type OrderJobData } from '@cardpull/queue';

const ENQUEUE_TIMEOUT_MS = 1_000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
  });
  promise.catch(() => undefined);
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export interface ScheduledStep {
  orderId: string;
  stepSeq: number;
  step: OrderStep;
  at: Date;
}

/**
 * Puts order steps on the queue. Every enqueue happens after the step is committed in Postgres, and a
 * failure here is only logged: the order is durable and the sweeper enqueues it later (invariant 4).
 */
@Injectable()
export class OrderQueue {
  private readonly log = new Logger(OrderQueue.name);
  private lastRedisError = 0;

  constructor(@InjectQueue(ORDERS_QUEUE) readonly queue: Queue<OrderJobData>) {
    // Without a listener BullMQ prints every reconnection error; one warning per 10 s says enough.
    queue.on('error', (err) => {
      if (Date.now() - this.lastRedisError < 10_000) return;
      this.lastRedisError = Date.now();
      this.log.warn({ err: err.message }, 'Redis unreachable for the orders queue; orders are kept in Postgres meanwhile');
    });
  }

  async schedule(step: ScheduledStep): Promise<boolean> {
    try {
      // BullMQ waits for its connection before adding: bound the wait so an API whose Redis is down still
      // answers quickly (the add may still land later; the fixed job id makes that harmless).
      await withTimeout(this.queue.add(step.step, { orderId: step.orderId, stepSeq: step.stepSeq }, this.options(step)), ENQUEUE_TIMEOUT_MS);
      return true;
    } catch (error) {
      this.log.warn(
        { orderId: step.orderId, err: (error as Error).message },
        'could not enqueue the next step; the sweeper will (the order is safe in Postgres)',
      );
      return false;
    }
  }

  /** Adds many steps at once (the sweeper); steps whose job still lives are left alone by BullMQ. */
  async scheduleMany(steps: ScheduledStep[]): Promise<void> {
    for (let i = 0; i < steps.length; i += 500) {
      const chunk = steps.slice(i, i + 500);
      await this.queue.addBulk(
        chunk.map((s) => ({ name: s.step, data: { orderId: s.orderId, stepSeq: s.stepSeq }, opts: this.options(s) })),
      );
    }
  }

  /** Ids of every job that will still run: waiting (also while paused), delayed, active or prioritized. */
  async liveJobIds(): Promise<Set<string>> {
    const ids = await this.queue.getRanges(['active', 'wait', 'delayed', 'prioritized', 'waiting-children'], 0, -1);
    return new Set(ids);
  }

  private options(step: ScheduledStep) {
    return {
      ...ORDER_JOB_OPTIONS,
      jobId: orderStepJobId(step.orderId, step.stepSeq),
      delay: Math.max(0, step.at.getTime() - Date.now()),
    };
  }
}
