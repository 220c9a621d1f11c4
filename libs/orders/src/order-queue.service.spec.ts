import { Queue, Worker } from 'bullmq';
import Redis from 'ioredis';
import { createTestRedis, type TestRedis } from '@cardpull/testing';
import { ORDERS_QUEUE, orderStepJobId, type OrderJobData } from '@cardpull/queue';
import { OrderQueue } from './order-queue.service';
import { AGED_PRIORITY, BACKGROUND_PRIORITY } from './queue-priorities';
import { PollAging } from './poll-aging';

/**
 * OrderQueue against a real Redis (own key prefix): partner calls go before due polls, and the steps
 * scheduled in one event-loop turn all land (one add each, written together), each under its fixed job id. PollAging: new
 * orders hold a due poll back in the queue for PARTNER_POLL_MAX_YIELD_MS at most (issue 12, item 2); it
 * reads BullMQ's prioritized set as BullMQ writes it, so this also checks that reading against the BullMQ
 * version installed.
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

  /** Every ready job's order id, in the order a worker takes them. */
  const takeAll = async (): Promise<string[]> => {
    const worker = new Worker<OrderJobData>(ORDERS_QUEUE, null, { connection: connection(), prefix: redis.prefix, autorun: false });
    const taken: string[] = [];
    try {
      for (;;) {
        const job = await worker.getNextJob(`token-${taken.length}`, { block: false });
        if (!job) return taken;
        taken.push(job.data.orderId);
      }
    } finally {
      await worker.close();
    }
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

    const taken = await takeAll();
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

  it("a client's weight (CLIENT_WEIGHTS) reaches its jobs' priorities: a heavy client's tenth order still goes first, a plain client's does not", async () => {
    const weighted = new OrderQueue(queue, { CLIENT_WEIGHTS: new Map([['vip', 1_000]]) });
    for (const client of ['vip', 'plain']) {
      await Promise.all(Array.from({ length: 10 }, (_, i) => weighted.schedule({ orderId: `${client}-${i}`, stepSeq: 1, step: 'sync_call', delayMs: 0, client })));
    }
    const priorities = async (client: string) => Promise.all(Array.from({ length: 10 }, async (_, i) => (await queue.getJob(orderStepJobId(`${client}-${i}`, 1)))?.priority));
    expect(await priorities('vip')).toEqual(Array(10).fill(1));
    expect(await priorities('plain')).toEqual([1, 2, 2, 3, 3, 3, 3, 4, 4, 4]);
  });

  describe('PollAging', () => {
    const MAX_WAIT_MS = 5_000;
    let now = 0;
    const priorityOf = async (orderId: string, stepSeq: number) => (await queue.getJob(`${orderId}-${stepSeq}`))?.priority;

    it('polls that have waited the bound behind creations go before new creations; younger polls still wait behind them', async () => {
      const aging = new PollAging(queue, MAX_WAIT_MS, () => now);
      now = 0;
      await Promise.all([0, 1, 2].map((i) => orders.schedule({ orderId: `old-poll-${i}`, stepSeq: 2, step: 'async_poll', delayMs: 0 })));
      expect(await aging.tick()).toBe(0); // the first look: nothing has waited yet

      now = 3_000;
      await orders.schedule({ orderId: 'young-poll', stepSeq: 2, step: 'async_poll', delayMs: 0 });
      await Promise.all(Array.from({ length: 4 }, (_, i) => orders.schedule({ orderId: `bulk-${i}`, stepSeq: 1, step: 'sync_call', delayMs: 0, client: 'bulk' })));
      expect(await aging.tick()).toBe(0); // 3 s: under the bound

      now = 5_200;
      expect(await aging.tick()).toBe(3);
      expect(await priorityOf('old-poll-0', 2)).toBe(AGED_PRIORITY);
      expect(await priorityOf('young-poll', 2)).toBe(BACKGROUND_PRIORITY);
      // A second worker's tick finds them moved already.
      expect(await new PollAging(queue, MAX_WAIT_MS, () => now).tick()).toBe(0);

      const taken = await takeAll();
      // The bulk client's first order has priority 1 too (its fair share) and was queued first.
      expect(taken).toEqual(['bulk-0', 'old-poll-0', 'old-poll-1', 'old-poll-2', 'bulk-1', 'bulk-2', 'bulk-3', 'young-poll']);
    });

    it('a backlog of due polls never starves new orders: at most the budget of moved polls waits ahead of creations at once, fleet-wide', async () => {
      now = 0;
      const aging = new PollAging(queue, MAX_WAIT_MS, () => now, 2);
      const other = new PollAging(queue, MAX_WAIT_MS, () => now, 2);
      await Promise.all(Array.from({ length: 6 }, (_, i) => orders.schedule({ orderId: `poll-${i}`, stepSeq: 2, step: 'async_poll', delayMs: 0 })));
      expect([await aging.tick(), await other.tick()]).toEqual([0, 0]);
      await Promise.all(Array.from({ length: 3 }, (_, i) => orders.schedule({ orderId: `new-${i}`, stepSeq: 1, step: 'sync_call', delayMs: 0, client: 'shop' })));
      now = 6_000;
      // Two workers' ticks together move the budget, not twice it.
      expect((await aging.tick()) + (await other.tick())).toBe(2);
      // A worker takes three jobs: the shop's first order (priority 1, queued before the polls were moved), then the two moved polls.
      const worker = new Worker<OrderJobData>(ORDERS_QUEUE, null, { connection: connection(), prefix: redis.prefix, autorun: false });
      const taken: string[] = [];
      try {
        for (let i = 0; i < 3; i++) taken.push((await worker.getNextJob(`t-${i}`, { block: false }))!.data.orderId);
      } finally {
        await worker.close();
      }
      expect(taken).toEqual(['new-0', 'poll-0', 'poll-1']);
      // Those two are no longer waiting: the next tick moves two more, and the new orders' rest still go before the other polls.
      now = 7_000;
      expect(await aging.tick()).toBe(2);
      expect(await takeAll()).toEqual(['poll-2', 'poll-3', 'new-1', 'new-2', 'poll-4', 'poll-5']);
    });

    it('without the ager, the same polls wait behind every creation (what the ager changes)', async () => {
      await Promise.all([0, 1].map((i) => orders.schedule({ orderId: `poll-${i}`, stepSeq: 2, step: 'async_poll', delayMs: 0 })));
      await Promise.all(Array.from({ length: 3 }, (_, i) => orders.schedule({ orderId: `bulk-${i}`, stepSeq: 1, step: 'sync_call', delayMs: 0, client: 'bulk' })));
      expect(await takeAll()).toEqual(['bulk-0', 'bulk-1', 'bulk-2', 'poll-0', 'poll-1']);
    });
  });
});
