import { Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { DelayedError, Worker, type ConnectionOptions, type Job } from 'bullmq';
import type { ServiceConfig } from '@cardpull/config';
import { TimeoutError, withTimeout } from '@cardpull/platform';
import { bullConnection, closeConnection, queuePrefix, type JobNameOf, type PayloadOf, type QueueName } from '@cardpull/queue';

/** How long a closing worker's Redis connection may take to say goodbye. */
const CONNECTION_CLOSE_MS = 5_000;

/**
 * The longest a worker's close may take: the longest partner deadline (an active job's call), plus the
 * processor's lock (a callback's lock covers its delivery timeout) and 5 s.
 */
export function closeBoundMs(
  config: Pick<ServiceConfig, 'PARTNER_TIMEOUT_MS' | 'PARTNER_TIMEOUT_SYNC_MS' | 'PARTNER_TIMEOUT_CREATE_MS' | 'PARTNER_TIMEOUT_POLL_MS' | 'PARTNER_TIMEOUT_READ_MS'>,
  lockDuration: number,
): number {
  const deadlines = [config.PARTNER_TIMEOUT_SYNC_MS, config.PARTNER_TIMEOUT_CREATE_MS, config.PARTNER_TIMEOUT_POLL_MS, config.PARTNER_TIMEOUT_READ_MS].map((ms) => ms || config.PARTNER_TIMEOUT_MS);
  return Math.max(config.PARTNER_TIMEOUT_MS, ...deadlines) + lockDuration + 5_000;
}

/** The settings a processor reads: its Redis connection, the stalled-job check, the partner deadlines its close waits for. */
export type ProcessorSettings = Parameters<typeof closeBoundMs>[0] & Pick<ServiceConfig, 'REDIS_URL' | 'REDIS_CLUSTER_NODES' | 'REDIS_PREFIX' | 'WORKER_STALLED_INTERVAL_MS'>;

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
export abstract class QueueProcessor<Q extends QueueName, S extends ProcessorSettings = ProcessorSettings> implements OnApplicationBootstrap, BeforeApplicationShutdown {
  protected readonly log = new Logger(this.constructor.name);
  private worker?: Worker<PayloadOf<Q>>;
  private connection?: ConnectionOptions;

  protected constructor(
    readonly queue: Q,
    /** The job names this processor handles (checked at start-up against the job list, JOBS). */
    readonly handles: readonly JobNameOf<Q>[],
    protected readonly config: S,
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

  /**
   * SIGTERM: stop taking jobs and let the active ones finish (each ends within its partner deadline). The
   * wait is bounded: BullMQ's close can hang when its blocking connection's reconnect never settles (seen on
   * a Redis Cluster right after a failover), and a worker that never exits holds its deploy. Past the bound
   * the process goes on shutting down; a job still running loses its lock and its order's lease, and
   * another worker takes it over with the same request ID.
   */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.worker) return;
    this.log.log(`${this.queue} worker: finishing in-flight jobs`);
    const boundMs = closeBoundMs(this.config, this.options().lockDuration);
    const closed = async (work: Promise<unknown>, ms: number, what: string) => {
      try {
        await withTimeout(work, ms);
        return true;
      } catch (error) {
        if (!(error instanceof TimeoutError)) throw error;
        this.log.error(`${this.queue} worker: ${what} did not end within ${ms} ms (a Redis reconnect that never settled); shutting down without it`);
        return false;
      }
    };
    if ((await closed(this.worker.close(), boundMs, 'BullMQ close')) && this.connection) {
      await closed(closeConnection(this.connection), CONNECTION_CLOSE_MS, 'its Redis connection');
    }
  }

  /** Runs this same job again in `delayMs` (no Postgres write): BullMQ's documented way, a DelayedError. */
  protected async later(job: Job<PayloadOf<Q>>, token: string | undefined, delayMs: number, reason: string): Promise<never> {
    await job.moveToDelayed(Date.now() + Math.max(1, Math.round(delayMs)), token);
    throw new DelayedError(reason);
  }
}
