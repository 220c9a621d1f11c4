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
  withDb,
} from './support/recovery';

const LEASE_MS = 1_500;
const TIMEOUT_MS = 8_000;
/** The partner takes three lease lengths to answer (within the call's deadline). */
const LATENCY_MS = 3 * LEASE_MS;

interface LeaseRow {
  lease_owner: string | null;
  lease_expires_at: Date | null;
  step_seq: number;
}

/**
 * Invariant 2 (one sender per request ID at a time) with a lease shorter than the call: the order's lease
 * (ORDER_LEASE_MS) is renewed while its call is in flight, so it never runs out under a live caller. Here
 * the partner takes three lease lengths to answer, and meanwhile a second copy of the step's job runs in
 * the same worker (every queue key deleted, the sweeper puts the job back): the copy must find the lease
 * held every time it looks, past the end of the first lease, and neither declare the live call interrupted
 * nor send the request ID again. (A killed holder's lease is not renewed: killed-lease-resumes.)
 */
describe('Invariant 2: a lease renewed while its call is in flight is not taken over while its holder lives', () => {
  const stack = useStack({ env: { PARTNER_TIMEOUT_MS: String(TIMEOUT_MS), ORDER_LEASE_MS: String(LEASE_MS) } });

  it('the call outlives its first lease, under the same owner, and a copy of its job waits instead of taking over', async () => {
    await stack.sim.control.addFault({ endpoint: 'cards', mode: 'latency', latency_ms: LATENCY_MS, gift_card_codes: [GIFT_CARD], times: 1 });
    const order = await placeOrder(stack, 'sync');
    const requestId = order.attempts[0]!.request_id;
    const lease = () => withDb(stack, async (db) => (await db.query<LeaseRow>('SELECT lease_owner, lease_expires_at, step_seq FROM orders WHERE id = $1', [order.id])).rows[0]!);
    await waitFor('the POST /cards to reach the partner', async () => postsOf(await stack.sim.control.ledger(), requestId)[0], 10_000, 10);
    const first = await waitFor('the lease of the call', async () => {
      const l = await lease();
      return l.lease_owner && l.lease_expires_at ? l : null;
    }, 5_000, 10);
    await flushAll(stack);
    await waitFor('the sweeper to re-enqueue the step', () => stack.logs.lines.some((l) => l.includes('sweeper re-enqueued')), 5_000, 20);

    // While the call runs: the lease as the copy of the job (and anyone else) sees it.
    const seen: LeaseRow[] = [];
    await waitFor('the call to end', async () => {
      const l = await lease();
      if (l.step_seq !== first.step_seq) return true;
      seen.push(l);
      return false;
    }, TIMEOUT_MS + 5_000, 50);
    const done = await waitForCompleted(stack, order.id, 10_000);

    const ledger = await stack.sim.control.ledger();
    const posts = postsOf(ledger, requestId);
    const db = await dbPicture(stack);
    const events = db.events.filter((e) => e.order_id === order.id);
    const reasons = events.filter((e) => e.type === 'outcome_unknown').map((e) => e.detail?.reason);
    const completedAt = await withDb(stack, async (d) => (await d.query<{ completed_at: Date }>('SELECT completed_at FROM orders WHERE id = $1', [order.id])).rows[0]!.completed_at);
    const expiries = seen.map((l) => l.lease_expires_at!.getTime());
    summary('renewed lease held', {
      lease: ms(LEASE_MS),
      partner_latency: ms(LATENCY_MS),
      lease_readings: seen.length,
      distinct_expiries: new Set(expiries).size,
      completed_after_first_lease_end: ms(completedAt.getTime() - first.lease_expires_at!.getTime()),
      posts: posts.length,
    });

    // The lease was renewed (its end moved on) and stayed with the caller that took it...
    expect(seen.length).toBeGreaterThan(0);
    expect(new Set(seen.map((l) => l.lease_owner))).toEqual(new Set([first.lease_owner]));
    expect(Math.max(...expiries)).toBeGreaterThan(first.lease_expires_at!.getTime());
    // ...past the end of the first lease: the order completed after it, by its caller's answer.
    expect(completedAt.getTime()).toBeGreaterThan(first.lease_expires_at!.getTime());
    expect(reasons).not.toContain('interrupted');
    expect(await explainOverlaps(stack, overlappingPosts(ledger, TIMEOUT_MS))).toEqual([]);
    expect(posts).toHaveLength(1);
    expect(cardsOf(ledger, requestId)).toHaveLength(1);
    expect(done.card?.id).toBe(cardsOf(ledger, requestId)[0]!.id);
  });
});
