import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { JOBS, ORDERS_QUEUE, orderStepJobId } from '@cardpull/queue';
import { expectInvariants } from '@cardpull/testing';
import { insertOrder, useStack, waitForOrder } from '../support/stack';

/**
 * Hole 3 of the money-safety review: the step a job runs is read from the order's row in Postgres, never
 * from the job. The job dashboard can add and edit jobs; a job named `sync_call` for an async order (or any
 * wrong name) must not send that order's request ID to POST /cards: its step is async_create, so it is
 * created as a pull request, as the order says.
 */
describe('the step is decided by the order’s row, not by the job’s name', () => {
  const stack = useStack({ beforeClose: expectInvariants });

  it.each(['sync_call', 'resume_check', 'anything'])('a job named %s for an async order still creates its pull request; POST /cards never sees its request ID', async (name) => {
    await stack.stopWorker();
    let id: string;
    let requestId: string;
    try {
      ({ id, requestId } = await insertOrder(stack, { giftCardCode: 'FAST-FREE', amount: 4100 + name.length, mode: 'async' }));
      // As an operator (or a bug) could through the dashboard: the order's job, under its fixed id, with the wrong name.
      const queue = stack.api!.get<Queue>(getQueueToken(ORDERS_QUEUE));
      await queue.add(name as never, { orderId: id, stepSeq: 1 }, { ...JOBS.sync_call.options, jobId: orderStepJobId(id, 1) });
    } finally {
      await stack.startWorker();
    }
    const order = await waitForOrder(stack, id);
    expect(order.status).toBe('completed');
    expect(order.attempts).toEqual([expect.objectContaining({ request_id: requestId, kind: 'async', state: 'succeeded', partner_status: 'success' })]);
    const calls = (await stack.sim.control.ledger()).requests.filter((r) => r.request_id === requestId).map((r) => `${r.method} ${r.path}`);
    expect(calls).not.toContain('POST /partners/v1/cards');
    expect(calls[0]).toBe('POST /partners/v1/pull_requests');
    const cards = (await stack.sim.control.ledger()).cards.filter((c) => c.request_id === requestId);
    expect(cards.map((c) => c.via)).toEqual(['async']);
  });
});
