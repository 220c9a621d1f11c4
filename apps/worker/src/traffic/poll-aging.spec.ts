import type { Queue } from 'bullmq';
import { AGED_PRIORITY, BACKGROUND_PRIORITY, OrderQueue } from '@cardpull/orders';
import { ORDERS_QUEUE, type OrderJobData } from '@cardpull/queue';
import { openTestQueue, type TestQueue } from '@cardpull/testing';
import { PollAging } from './poll-aging';

/**
 * PollAging over OrderQueue against a real Redis (own key prefix): new orders hold a due poll back in the
 * queue for PARTNER_POLL_MAX_YIELD_MS at most (issue 12, item 2). OrderQueue.raiseWaitingPolls reads
 * BullMQ's prioritized set as BullMQ writes it (PriorityBand, libs/queue), so this also checks that
 * reading against the BullMQ version installed.
 */
let q: TestQueue<OrderJobData>;
let queue: Queue<OrderJobData>;
let orders: OrderQueue;

beforeAll(async () => {
  q = await openTestQueue<OrderJobData>(ORDERS_QUEUE, 'poll-aging');
  queue = q.queue;
  orders = new OrderQueue(queue);
});

afterAll(() => q.close());

beforeEach(() => q.redis.flush());

describe('PollAging', () => {
  const MAX_WAIT_MS = 5_000;
  let now = 0;
  const priorityOf = async (orderId: string, stepSeq: number) => (await queue.getJob(`${orderId}-${stepSeq}`))?.priority;

  it('polls that have waited the bound behind creations go before new creations; younger polls still wait behind them', async () => {
    const aging = new PollAging(orders, MAX_WAIT_MS, () => now);
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
    expect(await new PollAging(orders, MAX_WAIT_MS, () => now).tick()).toBe(0);

    const taken = await q.takeAll();
    // The bulk client's first order has priority 1 too (its fair share) and was queued first.
    expect(taken).toEqual(['bulk-0', 'old-poll-0', 'old-poll-1', 'old-poll-2', 'bulk-1', 'bulk-2', 'bulk-3', 'young-poll']);
  });

  it('a backlog of due polls never starves new orders: at most the budget of moved polls waits ahead of creations at once, fleet-wide', async () => {
    now = 0;
    const aging = new PollAging(orders, MAX_WAIT_MS, () => now, 2);
    const other = new PollAging(orders, MAX_WAIT_MS, () => now, 2);
    await Promise.all(Array.from({ length: 6 }, (_, i) => orders.schedule({ orderId: `poll-${i}`, stepSeq: 2, step: 'async_poll', delayMs: 0 })));
    expect([await aging.tick(), await other.tick()]).toEqual([0, 0]);
    await Promise.all(Array.from({ length: 3 }, (_, i) => orders.schedule({ orderId: `new-${i}`, stepSeq: 1, step: 'sync_call', delayMs: 0, client: 'shop' })));
    now = 6_000;
    // Two workers' ticks together move the budget, not twice it.
    expect((await aging.tick()) + (await other.tick())).toBe(2);
    // A worker takes three jobs: the shop's first order (priority 1, queued before the polls were moved), then the two moved polls.
    expect(await q.take(3)).toEqual(['new-0', 'poll-0', 'poll-1']);
    // Those two are no longer waiting: the next tick moves two more, and the new orders' rest still go before the other polls.
    now = 7_000;
    expect(await aging.tick()).toBe(2);
    expect(await q.takeAll()).toEqual(['poll-2', 'poll-3', 'new-1', 'new-2', 'poll-4', 'poll-5']);
  });

  it('without the ager, the same polls wait behind every creation (what the ager changes)', async () => {
    await Promise.all([0, 1].map((i) => orders.schedule({ orderId: `poll-${i}`, stepSeq: 2, step: 'async_poll', delayMs: 0 })));
    await Promise.all(Array.from({ length: 3 }, (_, i) => orders.schedule({ orderId: `bulk-${i}`, stepSeq: 1, step: 'sync_call', delayMs: 0, client: 'bulk' })));
    expect(await q.takeAll()).toEqual(['bulk-0', 'bulk-1', 'bulk-2', 'poll-0', 'poll-1']);
  });
});
