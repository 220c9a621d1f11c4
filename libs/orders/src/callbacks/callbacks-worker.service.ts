import { Inject, Injectable, Logger, type OnApplicationBootstrap, type BeforeApplicationShutdown } from '@nestjs/common';
import { DelayedError, Worker, type Job } from 'bullmq';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { CALLBACKS_QUEUE, workerConnection, type CallbackJobData } from '@cardpull/queue';
import { CallbackDeliverer } from './callback-deliverer.service';

/** BullMQ worker of the callbacks queue: one job per event, re-delayed until delivered or given up. */
@Injectable()
export class CallbacksWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly log = new Logger(CallbacksWorker.name);
  private worker?: Worker<CallbackJobData>;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    private readonly deliverer: CallbackDeliverer,
  ) {}

  onApplicationBootstrap(): void {
    this.worker = new Worker<CallbackJobData>(CALLBACKS_QUEUE, (job, token) => this.process(job, token), {
      connection: workerConnection(this.config.REDIS_URL),
      prefix: this.config.REDIS_PREFIX,
      concurrency: 8,
      lockDuration: Math.max(this.config.WORKER_LOCK_MS, this.config.CALLBACK_TIMEOUT_MS + 5_000),
      stalledInterval: this.config.WORKER_STALLED_INTERVAL_MS,
    });
    this.worker.on('error', (err) => this.log.warn({ err: err.message }, 'callbacks worker: Redis error'));
  }

  async process(job: Job<CallbackJobData>, token?: string): Promise<string> {
    const result = await this.deliverer.deliver(job.data.eventId);
    if (result.kind === 'retry') {
      await job.moveToDelayed(Date.now() + Math.max(1, Math.round(result.delayMs)), token);
      throw new DelayedError('callback retry');
    }
    return result.reason;
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.worker?.close();
  }
}
