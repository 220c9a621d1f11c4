import { waitFor } from '@cardpull/testing';
import { useStack } from '../support/stack';
import { GIFT_CARD, cardsOf, describeOrders, ms, placeOrder, postsOf, summary, waitForCompleted, withDb } from './support/recovery';

const FIRST_DELAY_MS = 1_500;

/**
 * Redis does not always lose everything at once: an eviction, a failover or a clean-up deletes keys one by
 * one. Here the queue's `delayed` set is lost while a sync order's same-ID retry waits in it; the job's own
 * hash (`<prefix>:orders:<order id>-<step_seq>`) is left behind, in no list: the job will never run. The
 * sweeper sees no live job for the step and must put one back; a lost job only delays its order.
 */
describe('Invariant 4: a lost job only delays its order, even when Redis lost its entry and kept its hash', () => {
  const stack = useStack({ env: { SYNC_RETRY_FIRST_DELAY_MS: String(FIRST_DELAY_MS) } });

  it('the sweeper re-enqueues the step whose delayed entry was lost, and the order completes', async () => {
    // The first call hangs past the timeout: the same-ID retry waits FIRST_DELAY_MS in the delayed set.
    await stack.sim.control.addFault({ endpoint: 'cards', mode: 'hang', gift_card_codes: [GIFT_CARD], times: 1 });
    const order = await placeOrder(stack, 'sync');
    const requestId = order.attempts[0]!.request_id;
    const delayedKey = `${stack.redis.prefix}:orders:delayed`;
    const jobId = await waitFor('the retry to wait in the delayed set', async () => {
      const { rows } = await withDb(stack, (db) => db.query(`SELECT step_seq FROM orders WHERE id = $1 AND next_step = 'sync_call' AND step_seq > 1`, [order.id]));
      const id = rows[0] && `${order.id}-${rows[0].step_seq}`;
      return id && (await stack.redis.client.zscore(delayedKey, id)) !== null ? id : null;
    }, 10_000, 20);
    await stack.redis.client.del(delayedKey);
    const lostAt = Date.now();
    expect(await stack.redis.client.exists(`${stack.redis.prefix}:orders:${jobId}`)).toBe(1);

    // Due FIRST_DELAY_MS after the timeout; a sweep every SWEEP_INTERVAL_MS; generous room on top.
    const sweeps = () => stack.logs.lines.filter((l) => l.includes('sweeper re-enqueued') && Date.parse(JSON.parse(l).time) >= lostAt).length;
    const done = await waitForCompleted(stack, order.id, FIRST_DELAY_MS + 10 * stack.config.SWEEP_INTERVAL_MS).catch(async (error: Error) => {
      throw new Error(`${error.message}\n${await describeOrders(stack, [order.id])}\nsweeps since the loss that logged "re-enqueued": ${sweeps()}`);
    });
    const ledger = await stack.sim.control.ledger();
    summary('lost delayed job (hash left behind)', {
      completed_after_loss: ms(Date.now() - lostAt),
      posts: postsOf(ledger, requestId).length,
      cards: cardsOf(ledger, requestId).length,
    });
    expect(done.attempts.map((a) => a.request_id)).toEqual([requestId]);
    expect(cardsOf(ledger, requestId)).toHaveLength(1);
    expect(done.card?.id).toBe(cardsOf(ledger, requestId)[0]!.id);
  });
});
