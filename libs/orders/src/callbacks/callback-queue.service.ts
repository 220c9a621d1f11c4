import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { CALLBACKS_QUEUE, callbackJobId, jobOf, type CallbackJobData } from '@cardpull/queue';
import { OwnedQueue } from '@cardpull/queue';

/** Enqueues callback deliveries after their event is committed; a failure is only logged (the sweeper retries). */
@Injectable()
export class CallbackQueue extends OwnedQueue<CallbackJobData> {
  private readonly log = new Logger(CallbackQueue.name);

  constructor(@InjectQueue(CALLBACKS_QUEUE) queue: Queue<CallbackJobData>) {
    super(queue);
    queue.on('error', () => undefined); // the orders queue already reports an unreachable Redis
  }

  /** `delayMs`: from now (relative: when it is due was decided by the database's clock). */
  async enqueue(events: { id: string; delayMs?: number }[]): Promise<void> {
    if (!events.length) return;
    try {
      await this.queue.addBulk(
        events.map((e) => jobOf('deliver_callback', { eventId: e.id }, { jobId: callbackJobId(e.id), delay: Math.max(0, Math.round(e.delayMs ?? 0)) })),
      );
    } catch (error) {
      this.log.warn({ err: (error as Error).message, events: events.length }, 'could not enqueue callbacks; the sweeper will');
    }
  }
}
