import { Inject, Injectable } from '@nestjs/common';
import type { Job } from 'bullmq';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { CALLBACKS_QUEUE, type CallbackJobData } from '@cardpull/queue';
import { CallbackDeliverer } from '../callbacks/callback-deliverer.service';
import { QueueProcessor, type ProcessorSettings } from './queue-processor';

/** The processor of the callbacks queue: one job per event, re-delayed until delivered or given up. */
@Injectable()
export class CallbacksProcessor extends QueueProcessor<typeof CALLBACKS_QUEUE, ProcessorSettings & Pick<ServiceConfig, 'CALLBACK_TIMEOUT_MS' | 'WORKER_LOCK_MS'>> {
  constructor(
    @Inject(SERVICE_CONFIG) config: ProcessorSettings & Pick<ServiceConfig, 'CALLBACK_TIMEOUT_MS' | 'WORKER_LOCK_MS'>,
    private readonly deliverer: CallbackDeliverer,
  ) {
    super(CALLBACKS_QUEUE, ['deliver_callback'], config);
  }

  protected readonly jobNoun = 'callback delivery';

  protected options() {
    return { concurrency: 8, lockDuration: Math.max(this.config.WORKER_LOCK_MS, this.config.CALLBACK_TIMEOUT_MS + 5_000) };
  }

  async process(job: Job<CallbackJobData>, token?: string): Promise<string> {
    const result = await this.deliverer.deliver(job.data.eventId);
    return result.kind === 'retry' ? this.later(job, token, result.delayMs, 'callback retry') : result.reason;
  }
}
