import type { CallbackQueue } from '../callbacks/callback-queue.service';
import type { OrderQueue } from '../queue/order-queue.service';
import type { ScheduledStep } from '../model/order.types';
import { AfterCommit } from './after-commit';

/** The queues as AfterCommit sees them, recording what they were asked (pure logic: which queue gets what). */
function queues(scheduled = true) {
  const asked = { steps: [] as ScheduledStep[], callbacks: [] as { id: string }[][] };
  const steps = { schedule: async (step: ScheduledStep) => (asked.steps.push(step), scheduled) } as unknown as OrderQueue;
  const callbacks = { enqueue: async (events: { id: string }[]) => void asked.callbacks.push(events) } as unknown as CallbackQueue;
  return { afterCommit: new AfterCommit(steps, callbacks), asked };
}

const next: ScheduledStep = { orderId: 'o-1', stepSeq: 2, step: 'async_poll', delayMs: 2_000 };

describe('AfterCommit: what a committed transition leaves goes to the queues, and nothing else does (invariant 4)', () => {
  it('schedules the next step and enqueues the callbacks, and answers whether the step reached Redis', async () => {
    const { afterCommit, asked } = queues(false);
    await expect(afterCommit.run({ next, callbacks: ['cb-1', 'cb-2'] })).resolves.toBe(false);
    expect(asked).toEqual({ steps: [next], callbacks: [[{ id: 'cb-1' }, { id: 'cb-2' }]] });
  });

  it('a next step alone, or callbacks alone, each still reach their queue', async () => {
    const a = queues();
    await expect(a.afterCommit.run({ next, callbacks: [] })).resolves.toBe(true);
    expect(a.asked).toEqual({ steps: [next], callbacks: [] });
    const b = queues();
    await expect(b.afterCommit.run({ next: null, callbacks: ['cb-3'] })).resolves.toBe(true);
    expect(b.asked).toEqual({ steps: [], callbacks: [[{ id: 'cb-3' }]] });
  });

  it('a transition that left nothing touches no queue and answers true at once (a stored card, no callback URL)', async () => {
    const { afterCommit, asked } = queues(false);
    await expect(afterCommit.run({ next: null, callbacks: [] })).resolves.toBe(true);
    await expect(afterCommit.run({})).resolves.toBe(true);
    expect(asked).toEqual({ steps: [], callbacks: [] });
  });
});
