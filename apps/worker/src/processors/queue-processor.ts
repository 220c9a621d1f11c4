import { Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { DelayedError, Worker, type ConnectionOptions, type Job } from 'bullmq';
import type { ServiceConfig } from '@cardpull/config';
import { bullConnection, closeConnection, queuePrefix, type JobNameOf, type PayloadOf, type QueueName } from '@cardpull/queue';

export interface ProcessorOptions {
  concurrency: number;
  /** How long a job's lock lasts; a live worker renews it every half of it. */
  lockDuration: number;
  maxStalledCount?: number;
}

/**
 * The one way cardpull runs a BullMQ worker (both processors extend it): the Worker is created once the
 * application has started (after the job-handler check of job-handlers.ts), on its own connection; Redis
 * errors are logged, not thrown; SIGTERM stops taking jobs and waits for the active ones
 * (beforeApplicationShutdown runs before the database pool closes). A processor only decodes its job,
 * calls its runner and rethrows our own failures so BullMQ retries them (JOBS' options).
 */
export abstract class QueueProcessor<Q extends QueueName> implements OnApplicationBootstrap, BeforeApplicationShutdown {
  protected readonly log = new Logger(this.constructor.name);
  private worker?: Worker<PayloadOf<Q>>;
  private connection?: ConnectionOptions;

  protected constructor(
    readonly queue: Q,
    /** The job names this processor handles (checked at start-up against the job list, JOBS). */
    readonly handles: readonly JobNameOf<Q>[],
    protected readonly config: ServiceConfig,
  ) {}

  /** What one job is, in the log: "order step failed; retrying". */
  protected abstract readonly jobNoun: string;
  protected abstract options(): ProcessorOptions;
  abstract process(job: Job<PayloadOf<Q>>, token?: string): Promise<string>;

  onApplicationBootstrap(): void {
    const options = this.options();
    this.connection = bullConnection(this.config, 'worker');
    this.worker = new Worker<PayloadOf<Q>>(this.queue, (job, token) => this.process(job, token), {
      connection: this.connection,
      prefix: queuePrefix(this.config),
      stalledInterval: this.config.WORKER_STALLED_INTERVAL_MS,
      ...options,
    });
    this.worker.on('error', (err) => this.log.warn({ err: err.message }, `${this.queue} worker: Redis error`));
    // Only our own failures get here (a bug, the database down): a partner's answer never throws. With the
    // stack, at error: these are the lines to read first.
    this.worker.on('failed', (job, err) => {
      if (job) this.log.error({ ...job.data, jobId: job.id, attempt: job.attemptsMade, err }, `${this.jobNoun} failed: ${err.message}; retrying`);
    });
    this.log.log(`${this.queue} worker started (concurrency ${options.concurrency}, lock ${options.lockDuration} ms)`);
  }

  /** SIGTERM: stop taking jobs and let the active ones finish (each ends within the partner timeout). */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.worker) return;
    this.log.log(`${this.queue} worker: finishing in-flight jobs`);
    await this.worker.close();
    if (this.connection) await closeConnection(this.connection);
  }

  /** Runs this same job again in `delayMs` (no Postgres write): BullMQ's documented way, a DelayedError. */
  protected async later(job: Job<PayloadOf<Q>>, token: string | undefined, delayMs: number, reason: string): Promise<never> {
    await job.moveToDelayed(Date.now() + Math.max(1, Math.round(delayMs)), token);
    throw new DelayedError(reason);
  }
}
