import { OrderQueue, type ScheduledStep } from '@cardpull/orders';
import { orderStepJobId } from '@cardpull/queue';
import { waitFor } from '@cardpull/testing';
import { idemKey, useStack } from '../support/stack';

/**
 * The intake answers once the order is committed (the order and its request ID are durable then): the 202
 * does not wait for Redis. The first step's job follows in the background, as every job is only a trigger
 * (a step whose job never reaches Redis is enqueued by the sweeper). So an intake costs its caller one round
 * trip to Postgres, not one to Redis after it.
 */
const GOOD = { gift_card_code: 'ACME-BOOKS-FIXED', amount: 2500 };

describe('the intake answers at the commit, not after the enqueue', () => {
  const stack = useStack({ worker: false });

  it('a POST is answered 202 while its first step\'s enqueue is held; the job lands in Redis once the enqueue goes on', async () => {
    const queue = stack.api!.get(OrderQueue);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const schedule = queue.schedule.bind(queue);
    const asked: ScheduledStep[] = [];
    const spy = jest.spyOn(queue, 'schedule').mockImplementation(async (step: ScheduledStep) => {
      asked.push(step);
      await held;
      return schedule(step);
    });
    try {
      const answer = stack.call('POST', '/v1/orders', { body: GOOD, headers: { 'idempotency-key': idemKey('answer-at-commit') } });
      // Whether the answer came while the enqueue was still held (on the old code it never does: the POST
      // waited for the enqueue, so the guard's bound ends the race instead).
      const first = await Promise.race([answer, new Promise<null>((resolve) => setTimeout(() => resolve(null), 10_000))]);
      expect(first?.status).toBe(202);
      const id: string = first!.body.order.id;
      // The enqueue was asked for, for this order's first step, and is still held.
      expect(asked.map((s) => [s.orderId, s.stepSeq])).toEqual([[id, 1]]);
      expect((await queue.liveJobIds()).has(orderStepJobId(id, 1))).toBe(false);
      release();
      await waitFor('the first step\'s job in Redis', async () => (await queue.liveJobIds()).has(orderStepJobId(id, 1)), 10_000);
    } finally {
      release();
      spy.mockRestore();
    }
  });
});
