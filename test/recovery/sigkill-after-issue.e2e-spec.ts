import { spawnWorker, stopAllProcesses } from '../support/processes';
import { useStack } from '../support/stack';
import {
  GIFT_CARD,
  cardsOf,
  dbPicture,
  ms,
  pidOfActor,
  placeOrder,
  postsOf,
  summary,
  waitForCardIssued,
  waitForCompleted,
} from './support/recovery';

/**
 * The worst moment to die: the partner has issued the card (a `hang` fault issues it, then holds the
 * answer), our worker process is SIGKILLed before it could store it. A new worker process must find the
 * attempt still marked `sent` (an interrupted call: unknown outcome), ask the partner again with the SAME
 * request ID and store the card the partner issued the first time, in the transaction that completes the
 * order. The API runs in this process; the workers are the built worker, as real processes.
 */
describe('Invariants 2 and 3: a worker killed after the partner issued the card, before storing it, loses no card and mints no new request ID', () => {
  const stack = useStack({ worker: false, beforeClose: stopAllProcesses });
  // Each case's workers end with it: a worker left over from a failed case would take the next one's order.
  afterEach(stopAllProcesses);

  it.each([
    ['sync', 'cards'],
    ['async', 'pull_requests'],
  ] as const)('%s order: after SIGKILL a new worker stores the card issued to the first call, for the same request ID', async (mode, endpoint) => {
    const order = await placeOrder(stack, mode);
    const requestId = order.attempts[0]!.request_id;
    // Only this order's first POST: the card is issued (sync at once, async 200 ms later) and the answer held.
    await stack.sim.control.addFault({ endpoint, mode: 'hang', gift_card_codes: [GIFT_CARD], request_ids: [requestId], times: 1 });

    const first = spawnWorker(stack.env, { label: `first worker (${mode})` });
    const issued = await waitForCardIssued(stack, requestId, 20_000);
    first.kill('SIGKILL');
    const killedAt = Date.now();
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });

    const second = spawnWorker(stack.env, { label: `second worker (${mode})` });
    const done = await waitForCompleted(stack, order.id, 20_000);
    const recoveryMs = Date.now() - killedAt;

    // The order's only attempt is the request ID it was created with.
    expect(done.attempts.map((a) => a.request_id)).toEqual([requestId]);
    // Exactly one card for it at the partner, and the stored card is that card (the shop reads it in clear).
    const ledger = await stack.sim.control.ledger();
    expect(cardsOf(ledger, requestId)).toHaveLength(1);
    expect(done.card).toMatchObject({ id: issued.id, code: issued.code, pin_code: issued.pin_code, amount: issued.amount });
    const db = await dbPicture(stack);
    expect(db.cards.filter((c) => c.order_id === order.id)).toEqual([{ order_id: order.id, request_id: requestId, partner_card_id: issued.id }]);

    // The first worker died mid-call (the second one recorded the interruption), not after its own timeout.
    // The second one's own sends may time out after it (PARTNER_TIMEOUT_MS is 1 s here: a loaded machine):
    // more of the same request ID's unknown outcomes, recorded by it, never by the first.
    const events = db.events.filter((e) => e.order_id === order.id);
    const unknown = events.filter((e) => e.type === 'outcome_unknown');
    expect(unknown.map((e) => [e.detail?.reason, pidOfActor(e.actor)])[0]).toEqual(['interrupted', second.pid]);
    expect(unknown.filter((e) => pidOfActor(e.actor) !== second.pid)).toEqual([]);
    // The interrupted call is named by the lease owner that made it: the first worker.
    expect(pidOfActor(/\((worker:[^)]+)\)/.exec(String(unknown[0]!.detail?.message))?.[1] ?? '')).toBe(first.pid);
    expect(pidOfActor(events.find((e) => e.type === 'completed')!.actor)).toBe(second.pid);

    const posts = postsOf(ledger, requestId);
    const polls = ledger.requests.filter((r) => r.method === 'GET' && r.request_id === requestId);
    if (mode === 'sync') {
      // Asked again with the same X-RequestId: the partner replayed the first call's card.
      expect(posts.length).toBeGreaterThanOrEqual(2);
      expect(done.attempts[0]!.call_count).toBeGreaterThanOrEqual(2);
    } else {
      // The pull request existed: the new worker polled the same request ID instead of creating it again.
      expect(posts).toHaveLength(1);
      expect(polls.length).toBeGreaterThanOrEqual(1);
    }
    // call_count counts the POSTs that carried the request ID (polls are reads, not counted).
    expect(done.attempts[0]!.call_count).toBe(posts.length);

    summary(`SIGKILL after issue (${mode})`, {
      kill_after_post: ms(killedAt - Date.parse(posts[0]!.at)),
      kill_after_issue: ms(killedAt - Date.parse(issued.issued_at)),
      recovery: ms(recoveryMs),
      posts: posts.length,
      polls: polls.length,
      call_count: done.attempts[0]!.call_count,
      cards_for_request_id: cardsOf(ledger, requestId).length,
    });
    await second.stop();
  });
});
