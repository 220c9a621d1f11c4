import { Queue, type Job } from 'bullmq';
import type { ServiceConfig } from '@cardpull/config';
import { CALLBACKS_QUEUE, type PayloadOf } from '@cardpull/queue';
import { createTestRedis, type TestRedis } from '@cardpull/testing';
import { QueueProcessor, closeBoundMs, type ProcessorOptions } from './queue-processor';

/** A processor whose one job never ends: BullMQ's close() then waits for ever, as it does when its reconnect hangs. */
class StuckProcessor extends QueueProcessor<typeof CALLBACKS_QUEUE> {
  protected readonly jobNoun = 'stuck job';
  started!: Promise<void>;
  private markStarted!: () => void;
  /** Ends the job at last (after the test), so BullMQ's close completes and its connections close. */
  release!: () => void;
  constructor(config: ServiceConfig) {
    super(CALLBACKS_QUEUE, ['deliver_callback'], config);
    this.started = new Promise((r) => (this.markStarted = r));
  }
  protected options(): ProcessorOptions {
    return { concurrency: 1, lockDuration: 500 };
  }
  process(_job: Job<PayloadOf<typeof CALLBACKS_QUEUE>>): Promise<string> {
    this.markStarted();
    return new Promise<string>((r) => (this.release = () => r('released')));
  }
}

/**
 * SIGTERM ends a worker within a bound, whatever BullMQ's close() does: on a Redis Cluster right after a
 * failover, BullMQ's close could wait for ever on a reconnect of its blocking connection that never
 * settled, and the worker process never exited. Here a job that never ends makes close() wait the same way.
 */
describe("a worker's shutdown is bounded", () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await createTestRedis('queue-processor');
  });
  afterAll(() => redis.close());

  it('the bound is the longest partner deadline, plus the processor lock, plus 5 s', () => {
    const config = { PARTNER_TIMEOUT_MS: 10_000, PARTNER_TIMEOUT_SYNC_MS: 0, PARTNER_TIMEOUT_CREATE_MS: 0, PARTNER_TIMEOUT_POLL_MS: 30_000, PARTNER_TIMEOUT_READ_MS: 0 };
    expect(closeBoundMs(config, 2_000)).toBe(37_000);
    expect(closeBoundMs({ ...config, PARTNER_TIMEOUT_POLL_MS: 0 }, 2_000)).toBe(17_000);
  });

  it('beforeApplicationShutdown returns once the bound has passed, even though BullMQ is still waiting for its job', async () => {
    const config = {
      REDIS_URL: redis.url,
      REDIS_CLUSTER_NODES: [],
      REDIS_PREFIX: redis.prefix,
      WORKER_STALLED_INTERVAL_MS: 1_000,
      PARTNER_TIMEOUT_MS: 100,
      PARTNER_TIMEOUT_SYNC_MS: 0,
      PARTNER_TIMEOUT_CREATE_MS: 0,
      PARTNER_TIMEOUT_POLL_MS: 0,
      PARTNER_TIMEOUT_READ_MS: 0,
    } as unknown as ServiceConfig;
    const processor = new StuckProcessor(config);
    const queue = new Queue(CALLBACKS_QUEUE, { connection: { host: '127.0.0.1', port: Number(new URL(redis.url).port || 6379) }, prefix: redis.prefix });
    try {
      processor.onApplicationBootstrap();
      await queue.add('deliver_callback', { callbackId: 'never-ends' } as never);
      await processor.started;
      const outcome = await Promise.race([
        processor.beforeApplicationShutdown().then(() => 'returned'),
        new Promise<string>((r) => setTimeout(() => r('still waiting'), closeBoundMs(config, 500) + 3_000).unref()),
      ]);
      expect(outcome).toBe('returned');
    } finally {
      processor.release?.();
      await queue.close();
    }
  }, 30_000);
});
