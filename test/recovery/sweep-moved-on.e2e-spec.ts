import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { OrderQueue } from '@cardpull/orders';
import { ORDERS_QUEUE, orderStepJobId } from '@cardpull/queue';
import { Sweeper } from '../../apps/worker/src/recovery/sweeper.service';
import { insertOrder, useStack } from '../support/stack';
import { GIFT_CARD, withDb } from './support/recovery';

/**
 * Invariant 4's sweeper re-creates the job of every step that has none, reading Postgres first and Redis
 * second. Under load, steps move on between the two reads (their job finished, the order completed or was
 * given its next step with a job of its own): such a step is not missing, and re-creating its old job only
 * made a stale job and a warning that a job was lost. The sweeper asks Postgres again about the steps it
 * found without a job and re-creates only those still due as it read them.
 */
describe('Invariant 4: the sweeper re-creates the job of a step still due, not of a step that moved on between its reads', () => {
  const stack = useStack({ env: { SWEEP_INTERVAL_MS: '600000' } });

  it('of two orders without a job, the one whose step moved on during the sweep gets none; the other gets its job', async () => {
    const queue = stack.worker!.get(OrderQueue);
    const sweeper = stack.worker!.get(Sweeper);
    await sweeper.sweep(); // the start-up sweep, done (or this one shares it) before the orders exist
    // Both inserted straight into Postgres: neither has a job.
    const movedOn = await insertOrder(stack, { giftCardCode: GIFT_CARD, amount: 5100 });
    const lost = await insertOrder(stack, { giftCardCode: GIFT_CARD, amount: 5100 });

    // Between the sweeper's read of Postgres and its read of Redis, one order's step moves on (as when its
    // job ran and gave the order its next step, which has its own job): its step 1 is no longer due.
    const read = queue.liveJobIds.bind(queue);
    const spy = jest.spyOn(queue, 'liveJobIds').mockImplementationOnce(async () => {
      await withDb(stack, (db) => db.query(`UPDATE orders SET step_seq = step_seq + 1, next_step_at = now() + interval '1 hour' WHERE id = $1`, [movedOn.id]));
      return read();
    });
    const report = await sweeper.sweep();
    spy.mockRestore();

    expect(report).toMatchObject({ swept: true, enqueued: 1 });
    // What Redis holds, read as the job dashboard reads it (the raw queue).
    const raw = stack.worker!.get<Queue>(getQueueToken(ORDERS_QUEUE));
    expect(await raw.getJob(orderStepJobId(movedOn.id, 1))).toBeUndefined();
    expect(await raw.getJob(orderStepJobId(lost.id, 1))).toBeDefined();
    expect(stack.logs.text).toContain('sweeper re-enqueued 1 order step(s)');
  });
});
