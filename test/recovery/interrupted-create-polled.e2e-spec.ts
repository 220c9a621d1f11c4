import { waitFor } from '@cardpull/testing';
import { insertOrder, useStack } from '../support/stack';
import { GIFT_CARD, cardsOf, dbPicture, ms, postsOf, summary, waitForCardIssued, waitForCompleted, withDb } from './support/recovery';

const FIRST_POLL_MS = 4_000;

/**
 * A worker died during an async creation: the attempt is still `sent` (the call went out, its answer was
 * never recorded) and the dead worker's lease has expired. The worker that takes the step over records an
 * unknown outcome ("interrupted", same request ID: invariant 2) and, since the creation was sent a whole
 * lease ago, polls that request ID AT ONCE instead of waiting ASYNC_POLL_FIRST_DELAY_MS more
 * (StepRunner.interrupted). What the poll finds decides: the partner has the pull request (its card is
 * stored, no second creation), or it never got it (404: created again, with the same request ID).
 *
 * The dead worker is played by the database: the state a SIGKILLed worker leaves (sigkill-after-issue
 * does it with real processes) is written directly, so the takeover's timing is exact. The first poll
 * delay and the poll interval are long (4 s) and the sweeper runs only at start-up, so a poll that waited
 * for its delay, or a step left without its job, shows as seconds.
 */
describe('an interrupted async creation is polled at takeover, with its same request ID', () => {
  const stack = useStack({
    worker: false,
    env: {
      ASYNC_POLL_FIRST_DELAY_MS: String(FIRST_POLL_MS),
      ASYNC_POLL_INTERVAL_MIN_MS: String(FIRST_POLL_MS),
      ASYNC_POLL_INTERVAL_MAX_MS: String(FIRST_POLL_MS + 1_000),
      SWEEP_INTERVAL_MS: '60000',
    },
  });
  afterEach(() => stack.stopWorker());

  /** What a worker SIGKILLed mid-creation leaves: the attempt sent 5 s ago, the order leased by it, the lease run out. */
  const leftByDeadWorker = (orderId: string, requestId: string) =>
    withDb(stack, async (db) => {
      await db.query(
        `UPDATE attempts SET state = 'sent', call_count = 1, first_sent_at = now() - interval '5 seconds', last_sent_at = now() - interval '5 seconds'
         WHERE request_id = $1`,
        [requestId],
      );
      await db.query(
        `UPDATE orders SET status = 'in_progress', lease_owner = 'worker:999999-deadbeef/deadbeef', lease_expires_at = now() - interval '1 second'
         WHERE id = $1`,
        [orderId],
      );
    });

  /** When the taking-over worker recorded the interruption (Postgres time). */
  const interruptedAt = async (orderId: string): Promise<number> => {
    const { rows } = await withDb(stack, (db) =>
      db.query<{ at: Date; reason: string }>(`SELECT at, detail->>'reason' AS reason FROM order_events WHERE order_id = $1 AND type = 'outcome_unknown'`, [orderId]),
    );
    expect(rows.map((r) => r.reason)).toEqual(['interrupted']);
    return rows[0]!.at.getTime();
  };
  const completedAt = async (orderId: string): Promise<number> =>
    (await withDb(stack, (db) => db.query<{ completed_at: Date }>('SELECT completed_at FROM orders WHERE id = $1', [orderId]))).rows[0]!.completed_at.getTime();

  it('the partner has the pull request: the first poll comes at once and stores its card; no second creation', async () => {
    const { id, requestId } = await insertOrder(stack, { giftCardCode: GIFT_CARD, amount: 4100, mode: 'async' });
    // The dead worker's creation did reach the partner, which has issued the card by now.
    const created = await stack.sim.request({
      method: 'POST',
      path: '/partners/v1/pull_requests',
      body: { pull_request: { amount: 4100, gift_card_code: GIFT_CARD, request_id: requestId } },
    });
    expect(created.status).toBe(200);
    const issued = await waitForCardIssued(stack, requestId);
    await leftByDeadWorker(id, requestId);

    await stack.startWorker();
    const done = await waitForCompleted(stack, id, 15_000);
    const at = await interruptedAt(id);
    const ledger = await stack.sim.control.ledger();
    const polls = ledger.requests.filter((r) => r.method === 'GET' && r.request_id === requestId);
    const completedAfter = (await completedAt(id)) - at;
    summary('interrupted async creation, pull request at the partner', {
      first_poll_after_takeover: ms(Date.parse(polls[0]!.at) - at),
      completed_after_takeover: ms(completedAfter),
      first_poll_delay: ms(FIRST_POLL_MS),
    });

    // Polled at once (not ASYNC_POLL_FIRST_DELAY_MS later), and completed by that poll.
    expect(polls.length).toBeGreaterThanOrEqual(1);
    expect(Date.parse(polls[0]!.at) - at).toBeLessThan(FIRST_POLL_MS / 2);
    expect(completedAfter).toBeLessThan(FIRST_POLL_MS / 2);
    // Same request ID, the card the partner issued for it, and the creation was not sent again.
    expect(done.attempts.map((a) => [a.request_id, a.call_count])).toEqual([[requestId, 1]]);
    expect(done.card).toMatchObject({ id: issued.id, code: issued.code });
    expect(postsOf(ledger, requestId)).toHaveLength(1);
    expect(cardsOf(ledger, requestId)).toHaveLength(1);
  });

  it('the creation never reached the partner: the first poll (404) comes at once, and the same request ID is created again', async () => {
    const { id, requestId } = await insertOrder(stack, { giftCardCode: GIFT_CARD, amount: 4200, mode: 'async' });
    await leftByDeadWorker(id, requestId);

    await stack.startWorker();
    const recreated = await waitFor('the creation to be sent again', async () => postsOf(await stack.sim.control.ledger(), requestId)[0], 15_000, 20);
    const at = await interruptedAt(id);
    const ledger = await stack.sim.control.ledger();
    const firstPoll = ledger.requests.find((r) => r.method === 'GET' && r.request_id === requestId)!;
    summary('interrupted async creation, never reached the partner', {
      first_poll_after_takeover: ms(Date.parse(firstPoll.at) - at),
      created_again_after_takeover: ms(Date.parse(recreated.at) - at),
      first_poll_delay: ms(FIRST_POLL_MS),
    });

    // Polled at once: 404 for an ID the partner never acknowledged, so created again at once, same ID.
    expect(firstPoll.status).toBe(404);
    expect(Date.parse(firstPoll.at) - at).toBeLessThan(FIRST_POLL_MS / 2);
    expect(Date.parse(recreated.at)).toBeGreaterThan(Date.parse(firstPoll.at));
    expect(Date.parse(recreated.at) - at).toBeLessThan(FIRST_POLL_MS / 2);
    expect(recreated.status).toBe(200);

    const done = await waitForCompleted(stack, id, 15_000);
    const after = await stack.sim.control.ledger();
    expect(done.attempts.map((a) => [a.request_id, a.call_count])).toEqual([[requestId, 2]]);
    expect(postsOf(after, requestId)).toHaveLength(1);
    expect(cardsOf(after, requestId)).toHaveLength(1);
    expect(done.card?.id).toBe(cardsOf(after, requestId)[0]!.id);
    expect((await dbPicture(stack)).events.filter((e) => e.order_id === id).map((e) => e.type)).toEqual(
      expect.arrayContaining(['outcome_unknown', 'create_again', 'pull_request_created', 'completed']),
    );
  });
});
