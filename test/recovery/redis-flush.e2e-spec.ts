import { waitFor, checkInvariants, snapshot } from '@cardpull/testing';
import { useStack } from '../support/stack';
import { cardProblems, dbPicture, flushAll, liveJobCount, ms, placeOrder, summary, waitForAllEnded, withDb, type Mode, type OrderView } from './support/recovery';

const N = 30;

/**
 * Redis holds only triggers and timers. Deleting every key of our prefix at once (flushAll: what the
 * service sees of a FLUSHALL; the shared test Redis is never really flushed) while orders are in every stage (sync calls in
 * flight, same-ID retries and async polls waiting in delayed jobs, orders not picked up yet) must only
 * delay them: the sweeper re-derives every pending step from Postgres. API and worker run in this process.
 */
describe('Invariant 4: Redis is disposable: with every queue key deleted mid-run, all orders still complete, one card each', () => {
  const stack = useStack();

  it(`${N} mixed sync/async orders against a slow partner survive a flush of every key`, async () => {
    const control = stack.sim.control;
    // A third of the sync pulls outlast the 1 s client timeout (same-ID retry waiting in a delayed job);
    // the others are slow; async pulls take 1.7 s in the background (polls waiting in delayed jobs).
    await control.addFault({ endpoint: 'cards', mode: 'latency', latency_ms: 1_300, share: 0.3 });
    await control.addFault({ endpoint: 'cards', mode: 'latency', latency_ms: 500 });
    await control.addFault({ endpoint: 'pull_requests', mode: 'latency', latency_ms: 1_500 });

    const modes: Mode[] = Array.from({ length: N }, (_, i) => (i % 2 ? 'async' : 'sync'));
    const firstHalf: OrderView[] = [];
    for (const mode of modes.slice(0, N / 2)) firstHalf.push(await placeOrder(stack, mode));
    // Mid-way: some orders done, others in flight or waiting.
    const countCompleted = () =>
      withDb(stack, async (db) => Number((await db.query(`SELECT count(*) FROM orders WHERE status = 'completed'`)).rows[0].count));
    await waitFor('a few orders to complete', async () => (await countCompleted()) >= 3, 15_000, 20);

    const pendingAtFlush = N / 2 - (await countCompleted());
    const liveJobsAtFlush = await liveJobCount(stack);
    const flushedKeys = await flushAll(stack);
    const flushedAt = Date.now();
    // Orders keep coming in after the flush.
    const secondHalf: OrderView[] = [];
    for (const mode of modes.slice(N / 2)) secondHalf.push(await placeOrder(stack, mode));

    const orders = await waitForAllEnded(stack, [...firstHalf, ...secondHalf].map((o) => o.id), 30_000);
    const recoveredIn = Date.now() - flushedAt;
    const ledger = await control.ledger();
    const db = await dbPicture(stack);
    const sweeps = stack.logs.lines.filter((l) => l.includes('sweeper re-enqueued')).length;

    summary('FLUSHALL with orders pending', {
      orders: N,
      pending_at_flush: pendingAtFlush,
      jobs_lost: liveJobsAtFlush,
      keys_deleted: flushedKeys,
      all_completed_after_flush: ms(recoveredIn),
      sweeps_that_re_enqueued: sweeps,
      partner_cards: ledger.cards.length,
      stored_cards: db.cards.length,
      same_id_retries: ledger.requests.filter((r) => r.method === 'POST').length - N,
    });

    expect(pendingAtFlush).toBeGreaterThan(0);
    expect(liveJobsAtFlush).toBeGreaterThan(0);
    expect(orders.filter((o) => o.status !== 'completed').map((o) => `${o.id} ${o.status} ${JSON.stringify(o.error)}`)).toEqual([]);
    expect(cardProblems(orders, ledger, db)).toEqual([]);
    expect(checkInvariants(await snapshot(stack.db.url), ledger)).toEqual([]);
    expect(ledger.cards).toHaveLength(N);
    expect(db.cards).toHaveLength(N);
    // No order needed a second request ID: every outcome was a card, and unknown ones kept their ID.
    expect(db.attempts).toHaveLength(N);
  });
});
