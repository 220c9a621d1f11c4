import { Inject, Injectable, Logger, type OnApplicationBootstrap, type BeforeApplicationShutdown } from '@nestjs/common';
import { DelayedError, Worker, type Job } from 'bullmq';
import { PinoLogger } from 'nestjs-pino';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { runInJobContext } from '@cardpull/logger';
import { ORDERS_QUEUE, workerConnection, type OrderJobData } from '@cardpull/queue';
import { CallbackQueue } from './callbacks/callback-queue.service';
import { OrderQueue } from './order-queue.service';
import { OrderSteps } from './order-steps.service';

/**
 * The BullMQ worker of the orders queue. Thin (STYLE habit 4): it hands the job to OrderSteps and turns
 * the answer into queue operations; our own failures (database down, a bug) are rethrown so BullMQ retries.
 *
 * Lock and stall settings (WORKER_LOCK_MS, WORKER_STALLED_INTERVAL_MS): a live worker renews its lock
 * every lockDuration/2, so the lock can be short; a killed worker's job is back in the queue within
 * lock + stalled interval (~8 s by default), and the lease in Postgres (see timings.leaseMs) keeps its
 * successor from calling before the dead call's deadline has passed.
 */
@Injectable()
export class OrdersWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly log = new Logger(OrdersWorker.name);
  private worker?: Worker<OrderJobData>;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    private readonly steps: OrderSteps,
    private readonly queue: OrderQueue,
    private readonly callbacks: CallbackQueue,
    private readonly pino: PinoLogger,
  ) {}

  onApplicationBootstrap(): void {
    const lockDuration = this.config.WORKER_LOCK_MS;
    this.worker = new Worker<OrderJobData>(ORDERS_QUEUE, (job, token) => this.process(job, token), {
      connection: workerConnection(this.config.REDIS_URL),
      prefix: this.config.REDIS_PREFIX,
      concurrency: this.config.WORKER_CONCURRENCY,
      lockDuration,
      stalledInterval: this.config.WORKER_STALLED_INTERVAL_MS,
      maxStalledCount: 3,
    });
    this.worker.on('error', (err) => this.log.warn({ err: err.message }, 'orders worker: Redis error'));
    this.worker.on('failed', (job, err) => {
      if (job) this.log.warn({ orderId: job.data.orderId, jobId: job.id, attempt: job.attemptsMade, err: err.message }, 'order step failed; retrying');
    });
    this.log.log(`orders worker started (concurrency ${this.config.WORKER_CONCURRENCY}, lock ${lockDuration} ms)`);
  }

  async process(job: Job<OrderJobData>, token?: string): Promise<string> {
    return runInJobContext(this.pino, job, async () => {
      // The job says which order; the step is read from the order's row (a job's name decides nothing).
      const result = await this.steps.run(job.data);
      if (result.callbacks?.length) await this.callbacks.enqueue(result.callbacks.map((id) => ({ id })));
      switch (result.kind) {
        case 'next':
          await this.queue.schedule(result);
          return `next: ${result.step} in ${Math.round(result.delayMs)} ms`;
        case 'delay':
          // Same job, later: no Postgres write for a step that learned nothing (a poll still waiting).
          await job.moveToDelayed(Date.now() + Math.max(1, Math.round(result.delayMs)), token);
          throw new DelayedError(result.reason);
        default:
          return result.reason;
      }
    });
  }

  /** SIGTERM: stop taking jobs and let the active ones finish (each ends within the partner timeout). */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.worker) return;
    this.log.log('orders worker: finishing in-flight jobs');
    await this.worker.close();
  }
}
