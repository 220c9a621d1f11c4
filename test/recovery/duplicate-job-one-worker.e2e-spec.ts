import { waitFor } from '@cardpull/testing';
import { useStack } from '../support/stack';
import {
  GIFT_CARD,
  cardsOf,
  dbPicture,
  explainOverlaps,
  flushAll,
  ms,
  overlappingPosts,
  placeOrder,
  postsOf,
  summary,
  waitForCompleted,
} from './support/recovery';

const TIMEOUT_MS = 3_000;
const LATENCY_MS = 2_000;

/**
 * Invariant 5 says any job may run twice, also at the same time. The lease is what keeps the copies from
 * both calling the partner. Here the two copies run in ONE worker process (the only one): the partner is
 * slow (2 s, within this suite's 3 s timeout), and while the first copy's POST /cards is in flight every
 * queue key is deleted, so the sweeper puts the step's job back and the same process picks it up. The
 * second copy must wait for the lease, not take it over: nobody died, the call is still running.
 */
describe('Invariant 5: a step whose job runs twice at once in one worker process still sends its request ID once at a time', () => {
  const stack = useStack({ env: { PARTNER_TIMEOUT_MS: String(TIMEOUT_MS) } });

  it('the second copy of the job does not declare the live call interrupted nor send the request ID while it runs', async () => {
    await stack.sim.control.addFault({ endpoint: 'cards', mode: 'latency', latency_ms: LATENCY_MS, gift_card_codes: [GIFT_CARD], times: 1 });
    const order = await placeOrder(stack, 'sync');
    const requestId = order.attempts[0]!.request_id;
    const first = await waitFor('the POST /cards to reach the partner', async () => postsOf(await stack.sim.control.ledger(), requestId)[0], 10_000, 10);
    await flushAll(stack);
    const flushedAt = Date.now();
    // The sweeper (every SWEEP_INTERVAL_MS) re-adds the step's job while the first call is still running.
    await waitFor('the sweeper to re-enqueue the step', () => stack.logs.lines.some((l) => l.includes('sweeper re-enqueued')), 5_000, 20);
    const done = await waitForCompleted(stack, order.id, 15_000);

    const ledger = await stack.sim.control.ledger();
    const posts = postsOf(ledger, requestId);
    const overlaps = overlappingPosts(ledger, TIMEOUT_MS);
    const db = await dbPicture(stack);
    const reasons = db.events.filter((e) => e.type === 'outcome_unknown').map((e) => e.detail?.reason);
    summary('duplicate job in one worker', {
      flush_after_post: ms(flushedAt - Date.parse(first.at)),
      posts: posts.length,
      posts_during_first_call: overlaps.length,
      unknown_outcomes: reasons.join('/') || 'none',
      cards: cardsOf(ledger, requestId).length,
    });

    // Cards are safe either way (the partner replays the request ID)...
    expect(cardsOf(ledger, requestId)).toHaveLength(1);
    expect(done.card?.id).toBe(cardsOf(ledger, requestId)[0]!.id);
    // ...but the rule is about the calls: one at a time, and no call counted as interrupted while it ran.
    expect(await explainOverlaps(stack, overlaps)).toEqual([]);
    expect(reasons).not.toContain('interrupted');
    expect(posts).toHaveLength(1);
  });
});
