import { spawnWorker } from '../support/processes';
import { createOrder, useStack, waitForOrder } from '../support/stack';
import { expectInvariants } from '@cardpull/testing';

/**
 * Hole 6 of the money-safety review: deadlines that several processes read (the unknown-outcome window,
 * the settle window, the waiting deadline, leases, next steps) are measured by the database's clock. A
 * worker whose wall clock is minutes ahead must neither send an order to needs_attention early nor write a
 * next step minutes late: here it is the only worker, and an unknown outcome (a 503) must still be retried
 * with the same request ID after SYNC_RETRY_INTERVAL_MS, within the 20 s window, and complete.
 */
describe('deadlines use the database’s clock: a worker whose clock is minutes off decides on time', () => {
  const stack = useStack({ worker: false, beforeClose: expectInvariants });

  // Four minutes: far beyond every window of this suite (20 s). The partner's Timestamp check does not
  // matter here: the worker signs with the partner's clock, read from its Date headers (partner-time specs).
  it.each([
    ['four minutes ahead', 240_000],
    ['four minutes behind', -240_000],
  ])('with its clock %s, an unknown outcome is retried on time with the same request ID, not parked in needs_attention', async (_name, skew) => {
    const worker = spawnWorker(stack.env, { clockSkewMs: skew, label: `worker (clock ${skew > 0 ? '+' : ''}${skew} ms)` });
    try {
      await worker.ready();
      const code = skew > 0 ? 'NOVA-GAMES-FREE' : 'FAST-FREE';
      await stack.sim.control.addFault({ endpoint: 'cards', mode: 'error_before_issue', status: 503, gift_card_codes: [code], times: 1 });
      const { id, requestId } = await createOrder(stack, { gift_card_code: code, amount: 1700 });
      const order = await waitForOrder(stack, id, undefined, 15_000);
      expect({ status: order.status, error: order.error }).toEqual({ status: 'completed', error: null });
      expect(order.attempts.map((a: { request_id: string }) => a.request_id)).toEqual([requestId]);
      const ledger = await stack.sim.control.ledger();
      const posts = ledger.requests.filter((r) => r.method === 'POST' && r.request_id === requestId);
      // The 503, then the card. On a loaded machine the card's answer may come after the call's deadline (an
      // unknown outcome): the same request ID is then sent again and answers the same card, never a second.
      expect(posts.map((p) => p.status)).toEqual([503, ...posts.slice(1).map(() => 200)]);
      expect(posts.length).toBeGreaterThanOrEqual(2);
      expect(ledger.cards.filter((c) => c.request_id === requestId)).toHaveLength(1);
      // The retry came after SYNC_RETRY_INTERVAL_MS (a 503's wait) by the database's clock: not an hour late, not at once.
      const gap = Date.parse(posts[1]!.at) - Date.parse(posts[0]!.at);
      expect(gap).toBeGreaterThanOrEqual(stack.config.SYNC_RETRY_INTERVAL_MS - 50);
      expect(gap).toBeLessThan(10_000);
    } finally {
      await worker.stop();
    }
  });
});
