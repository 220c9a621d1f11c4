import { Queue, Worker } from 'bullmq';
import Redis from 'ioredis';
import { createTestRedis, type TestRedis } from '@cardpull/testing';
import { ORDERS_QUEUE, orderStepJobId, type OrderJobData } from '@cardpull/queue';
import { OrderQueue } from './order-queue.service';

/**
 * OrderQueue against a real Redis (own key prefix): partner calls go before due polls, and the steps
 * scheduled in one event-loop turn all land (one addBulk), each under its fixed job id.
 */
describe('OrderQueue (real Redis)', () => {
  let redis: TestRedis;
  let queue: Queue<OrderJobData>;
  let orders: OrderQueue;
  const connections: Redis[] = [];
  /** BullMQ leaves a connection it was given open: the suite closes its own. */
  const connection = () => {
    const c = new Redis(redis.url, { maxRetriesPerRequest: null });
    connections.push(c);
    return c;
  };

  beforeAll(async () => {
    redis = await createTestRedis('order-queue');
    queue = new Queue<OrderJobData>(ORDERS_QUEUE, { connection: connection(), prefix: redis.prefix });
    orders = new OrderQueue(queue);
  });

  afterAll(async () => {
    await queue.close();
    for (const c of connections) c.disconnect();
    await redis.close();
  });

  beforeEach(() => redis.flush());

  it('a due sync call or async creation is taken before due polls and funds/stock re-checks, whatever the order they were added in', async () => {
    await Promise.all([
      ...Array.from({ length: 5 }, (_, i) => orders.schedule({ orderId: `poll-${i}`, stepSeq: 2, step: 'async_poll', delayMs: 0 })),
      orders.schedule({ orderId: 'resume', stepSeq: 3, step: 'resume_check', delayMs: 0 }),
    ]);
    await orders.schedule({ orderId: 'sync', stepSeq: 1, step: 'sync_call', delayMs: 0 });
    await orders.schedule({ orderId: 'async', stepSeq: 1, step: 'async_create', delayMs: 0 });

    const taken: string[] = [];
    const worker = new Worker<OrderJobData>(ORDERS_QUEUE, null, { connection: connection(), prefix: redis.prefix, autorun: false });
    try {
      for (let i = 0; i < 8; i++) {
        const job = await worker.getNextJob(`token-${i}`, { block: false });
        if (job) taken.push(job.data.orderId);
      }
    } finally {
      await worker.close();
    }
    expect(taken.slice(0, 2)).toEqual(['sync', 'async']);
    expect(taken.slice(2).sort()).toEqual(['poll-0', 'poll-1', 'poll-2', 'poll-3', 'poll-4', 'resume']);
  });

  it('steps scheduled together are all enqueued under their fixed job ids, and scheduling one again adds nothing', async () => {
    const steps = Array.from({ length: 150 }, (_, i) => ({ orderId: `o-${i}`, stepSeq: 1, step: 'sync_call' as const, delayMs: 60_000 }));
    const results = await Promise.all(steps.map((s) => orders.schedule(s)));
    expect(results.every(Boolean)).toBe(true);
    await orders.schedule(steps[0]!);
    const live = await orders.liveJobIds();
    expect(live.size).toBe(150);
    for (const s of steps) expect(live.has(orderStepJobId(s.orderId, s.stepSeq))).toBe(true);
  });
});
