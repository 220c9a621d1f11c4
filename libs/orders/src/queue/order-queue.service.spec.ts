import type { Queue } from 'bullmq';
import { openTestQueue, type TestQueue } from '@cardpull/testing';
import { ORDERS_QUEUE, orderStepJobId, type OrderJobData } from '@cardpull/queue';
import { OrderQueue } from './order-queue.service';

/**
 * OrderQueue against a real Redis (own key prefix): partner calls go before due polls, and the steps
 * scheduled in one event-loop turn all land (one add each, written together), each under its fixed job id.
 * Moving polls ahead (raiseWaitingPolls) is proven with the worker's poll ager (apps/worker, traffic/).
 */
describe('OrderQueue (real Redis)', () => {
  let q: TestQueue<OrderJobData>;
  let queue: Queue<OrderJobData>;
  let orders: OrderQueue;
  const takeAll = () => q.takeAll();

  beforeAll(async () => {
    q = await openTestQueue<OrderJobData>(ORDERS_QUEUE, 'order-queue');
    queue = q.queue;
    orders = new OrderQueue(queue);
  });

  afterAll(() => q.close());

  beforeEach(() => q.redis.flush());

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

  it('while Redis does not answer, at most the backlog bound waits for an enqueue: a step beyond it is answered false at once (left to the sweeper), and room frees once the waiting ones give up', async () => {
    // The bound is 10,000 in the service; 5 here.
    const bounded = new (class extends OrderQueue {
      protected override readonly maxBacklog = 5;
    })(queue);
    const hang = jest.spyOn(queue, 'add').mockImplementation(() => new Promise(() => undefined));
    try {
      const settled: string[] = [];
      const waiting = Array.from({ length: 5 }, (_, i) => bounded.schedule({ orderId: `hung-${i}`, stepSeq: 1, step: 'sync_call', delayMs: 0 }).then((ok) => settled.push(`hung-${i}:${ok}`)));
      const beyond = await bounded.schedule({ orderId: 'beyond', stepSeq: 1, step: 'sync_call', delayMs: 0 });
      settled.push(`beyond:${beyond}`);
      // The step beyond the bound is refused before any waiting one is answered, and never reached Redis.
      expect(settled).toEqual(['beyond:false']);
      await Promise.all(waiting);
      expect(hang.mock.calls.map(([, data]) => (data as OrderJobData).orderId).sort()).toEqual(['hung-0', 'hung-1', 'hung-2', 'hung-3', 'hung-4']);
      // The waiting ones gave up (the enqueue timeout), and said so.
      expect(settled.slice(1).sort()).toEqual(['hung-0:false', 'hung-1:false', 'hung-2:false', 'hung-3:false', 'hung-4:false']);
    } finally {
      hang.mockRestore();
    }
    // The backlog is free again: the next step is enqueued.
    expect(await bounded.schedule({ orderId: 'after', stepSeq: 1, step: 'sync_call', delayMs: 0 })).toBe(true);
    expect((await bounded.liveJobIds()).has(orderStepJobId('after', 1))).toBe(true);
  });
});
