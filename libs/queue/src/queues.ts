import type { JobsOptions } from 'bullmq';

/**
 * The one list of queues, jobs, payloads and retry options. Jobs carry ids, never state: Postgres holds
 * the state, and a handler reads the order row and decides from it. The worker refuses
 * to start unless every job name below has exactly one handler (apps/worker/src/processors/job-handlers.ts).
 */
export const ORDERS_QUEUE = 'orders';
/** Caller callbacks (outbox deliveries). */
export const CALLBACKS_QUEUE = 'callbacks';
export type QueueName = typeof ORDERS_QUEUE | typeof CALLBACKS_QUEUE;

export interface OrderJobData {
  orderId: string;
  /** The order's step_seq when the job was scheduled; a job for an older step finds nothing to do. */
  stepSeq: number;
  /** The W3C traceparent of the order's trace (only with tracing on): the step's spans continue it. */
  trace?: string;
}

export interface CallbackJobData {
  eventId: string;
}

/**
 * A step job retries only for our own failures (database down, a bug); partner outcomes never throw, they
 * schedule the next step in Postgres. When the retries run out the job is removed, and the sweeper
 * re-enqueues the order from Postgres (invariant 4).
 */
const ORDER_STEP_OPTIONS: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: { age: 3_600, count: 5_000 },
  removeOnFail: true,
};

/** One job per event; retries are scheduled by the deliverer from Postgres (attempts, backoff), not by BullMQ. */
const CALLBACK_OPTIONS: JobsOptions = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: { age: 3_600, count: 5_000 },
  removeOnFail: true,
};

/**
 * Every job: its queue, its payload type and its retry options. The order steps' names are the values of
 * the `OrderStep` enum of the schema (libs/orders checks that the two lists agree at compile time); the
 * job's name is what the job dashboard shows, the step that runs is read from the order's row.
 */
export const JOBS = {
  sync_call: { queue: ORDERS_QUEUE, options: ORDER_STEP_OPTIONS },
  async_create: { queue: ORDERS_QUEUE, options: ORDER_STEP_OPTIONS },
  async_poll: { queue: ORDERS_QUEUE, options: ORDER_STEP_OPTIONS },
  resume_check: { queue: ORDERS_QUEUE, options: ORDER_STEP_OPTIONS },
  deliver_callback: { queue: CALLBACKS_QUEUE, options: CALLBACK_OPTIONS },
} as const satisfies Record<string, { queue: QueueName; options: JobsOptions }>;

interface JobPayloads {
  sync_call: OrderJobData;
  async_create: OrderJobData;
  async_poll: OrderJobData;
  resume_check: OrderJobData;
  deliver_callback: CallbackJobData;
}

export type JobName = keyof typeof JOBS;
/** A job as it is added and handled: `JobOf<'deliver_callback'>` is `{ name: 'deliver_callback'; data: CallbackJobData }`. */
export type JobOf<N extends JobName> = { name: N; data: JobPayloads[N & keyof JobPayloads] };
/** The names of the jobs of one queue. */
export type JobNameOf<Q extends QueueName> = { [N in JobName]: (typeof JOBS)[N]['queue'] extends Q ? N : never }[JobName];
/** The payload of a queue's jobs (one type per queue). */
export type PayloadOf<Q extends QueueName> = JobPayloads[JobNameOf<Q>];
export type OrderJobName = JobNameOf<typeof ORDERS_QUEUE>;

export const JOB_NAMES = Object.keys(JOBS) as JobName[];

/** A job's name, payload and options, ready for `queue.add` / `addBulk`. */
export function jobOf<N extends JobName>(name: N, data: JobPayloads[N & keyof JobPayloads], opts: JobsOptions = {}): JobOf<N> & { opts: JobsOptions } {
  return { name, data, opts: { ...JOBS[name].options, ...opts } };
}

/**
 * Fixed job id per order step (habit 8): enqueueing the same step twice (intake, then the sweeper) is a
 * no-op while the first job lives. BullMQ 6 forbids ':' in custom ids.
 */
export const orderStepJobId = (orderId: string, stepSeq: number): string => `${orderId}-${stepSeq}`;
export const callbackJobId = (eventId: string): string => `cb-${eventId}`;
