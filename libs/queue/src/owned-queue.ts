import type { JobType, Queue } from 'bullmq';
import { liveJobIds, removeLeftovers } from './queue-repair';

/** A queue's job counts by state and whether it is paused: what the metrics and the operations page show. */
export interface QueueCounts {
  counts: Record<string, number>;
  paused: boolean;
}

/**
 * The verbs every owner of a BullMQ queue gives its users (the sweeper's repair, the metrics' counts), so
 * that the queue itself stays its owner's: no class outside its owner (libs/orders: OrderQueue, CallbackQueue) holds a raw BullMQ queue, except
 * the job dashboard, which is handed its queues by OPERATOR_QUEUES.
 */
export abstract class OwnedQueue<T> {
  protected constructor(protected readonly queue: Queue<T>) {}

  /** Ids of every job that will still run (see queue-repair.ts). */
  liveJobIds(): Promise<Set<string>> {
    return liveJobIds(this.queue);
  }

  /** Removes what is left of jobs that are not live, so they can be added again (see queue-repair.ts). */
  removeLeftovers(jobIds: string[]): Promise<void> {
    return removeLeftovers(this.queue, jobIds);
  }

  async counts(states: JobType[]): Promise<QueueCounts> {
    const [counts, paused] = await Promise.all([this.queue.getJobCounts(...states), this.queue.isPaused()]);
    return { counts, paused };
  }
}
