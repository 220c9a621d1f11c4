import { useStack } from '../support/stack';
import { GIFT_CARD, cardsOf, dbPicture, ms, placeOrder, postsOf, summary, waitForCompleted } from './support/recovery';

const TIMEOUT_MS = 1_000;
const FIRST_DELAY_MS = 1_500;
/** Our client starts its deadline a few ms before the request reaches the partner. */
const TOLERANCE_MS = 100;

/**
 * The partner takes the sync pull, issues the card and never answers in time (a `hang` fault holds the
 * answer for two minutes). Our client gives up at PARTNER_TIMEOUT_MS: an unknown outcome. The only
 * acceptable next move is the same request ID again, SYNC_RETRY_FIRST_DELAY_MS later (the spec's "about
 * one minute", shortened here), which the partner answers with the card it issued to the first call.
 * No kill: the worker runs in this process.
 */
describe('Invariant 2: after a partner hang longer than the timeout, the same request ID is retried after SYNC_RETRY_FIRST_DELAY_MS', () => {
  const stack = useStack({ env: { PARTNER_TIMEOUT_MS: String(TIMEOUT_MS), SYNC_RETRY_FIRST_DELAY_MS: String(FIRST_DELAY_MS) } });

  it('retries with the same X-RequestId no earlier than call + timeout + first delay, and stores the card of the first call', async () => {
    await stack.sim.control.addFault({ endpoint: 'cards', mode: 'hang', gift_card_codes: [GIFT_CARD], times: 1 });
    const order = await placeOrder(stack, 'sync');
    const requestId = order.attempts[0]!.request_id;
    const done = await waitForCompleted(stack, order.id, 15_000);

    const ledger = await stack.sim.control.ledger();
    const posts = postsOf(ledger, requestId);
    expect(posts.map((p) => p.fault ?? null)).toEqual(['hang', null]);
    const [first, second] = posts as [(typeof posts)[0], (typeof posts)[0]];
    // The first call was abandoned by our client at its deadline: the connection closed then, not when the
    // partner would have answered (two minutes later).
    const abandonedAfter = Date.parse(first.finished_at!) - Date.parse(first.at);
    expect(abandonedAfter).toBeGreaterThanOrEqual(TIMEOUT_MS - TOLERANCE_MS);
    expect(abandonedAfter).toBeLessThan(TIMEOUT_MS + 1_000);
    // The retry waited the configured first delay after the timeout; and it is that delay, not a later
    // sweep or a lost job, that brought it (upper bound with room for a busy machine).
    const gap = Date.parse(second.at) - Date.parse(first.at);
    expect(gap).toBeGreaterThanOrEqual(TIMEOUT_MS + FIRST_DELAY_MS - TOLERANCE_MS);
    expect(gap).toBeLessThan(TIMEOUT_MS + FIRST_DELAY_MS + 2_000);

    // One card, issued to the first call; it is the one stored.
    const issued = cardsOf(ledger, requestId);
    expect(issued).toHaveLength(1);
    expect(Date.parse(issued[0]!.issued_at)).toBeLessThan(Date.parse(first.finished_at!));
    expect(done.card).toMatchObject({ id: issued[0]!.id, code: issued[0]!.code });
    // No other request ID was ever used for this order, at the partner or in our database.
    expect(done.attempts.map((a) => [a.request_id, a.call_count])).toEqual([[requestId, 2]]);
    expect(new Set(ledger.requests.filter((r) => r.method === 'POST').map((r) => r.request_id))).toEqual(new Set([requestId]));
    const db = await dbPicture(stack);
    expect(db.cards).toEqual([{ order_id: order.id, request_id: requestId, partner_card_id: issued[0]!.id }]);
    expect(db.events.filter((e) => e.type === 'outcome_unknown').map((e) => e.detail?.reason)).toEqual(['timeout']);

    summary('hang > timeout, same-ID retry', {
      timeout: ms(TIMEOUT_MS),
      first_delay: ms(FIRST_DELAY_MS),
      client_gave_up_after: ms(abandonedAfter),
      retry_after_first_call: ms(gap),
      minimum: ms(TIMEOUT_MS + FIRST_DELAY_MS),
      posts: posts.length,
      cards: issued.length,
    });
  });
});
