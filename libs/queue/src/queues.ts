import type { JobsOptions } from 'bullmq';

/**
 * The one list of queues, job names and payloads (STYLE.md habit 2). Jobs carry ids; Postgres holds the
 * state (habit 1): a handler reads the order row and decides from it.
 */
export const ORDERS_QUEUE = 'orders';

/** Order steps: the job name is the order's `next_step` when it was scheduled. */
export const ORDER_JOBS = ['sync_call', 'async_create', 'async_poll', 'resume_check'] as const;
export type OrderJobName = (typeof ORDER_JOBS)[number];

export interface OrderJobData {
  orderId: string;
  /** The order's step_seq when the job was scheduled; a job for an older step finds nothing to do. */
  stepSeq: number;
}

/**
 * Fixed job id per order step (habit 8): enqueueing the same step twice (intake, then the sweeper) is a
 * no-op while the first job lives. BullMQ 6 forbids ':' in custom ids.
 */
export const orderStepJobId = (orderId: string, stepSeq: number): string => `${orderId}-${stepSeq}`;

/**
 * Retry settings beside the job names (habit 3). A step job retries only for our own failures (database
 * down, a bug); partner outcomes never throw, they schedule the next step in Postgres. When the retries
 * run out the job is removed, and the sweeper re-enqueues the order from Postgres (invariant 4).
 */
export const ORDER_JOB_OPTIONS: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: { age: 3_600, count: 5_000 },
  removeOnFail: true,
};

/** Caller callbacks (outbox deliveries). */
export const CALLBACKS_QUEUE = 'callbacks';

export interface CallbackJobData {
  eventId: string;
}

/** One job per event; retries are scheduled by the deliverer from Postgres (attempts, backoff), not by BullMQ. */
export const callbackJobId = (eventId: string): string => `cb-${eventId}`;

export const CALLBACK_JOB_OPTIONS: JobsOptions = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: { age: 3_600, count: 5_000 },
  removeOnFail: true,
};
