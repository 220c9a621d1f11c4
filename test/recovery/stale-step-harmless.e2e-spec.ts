import { StepsRepository, type CurrentStep } from '@cardpull/orders';
import { decide, type Answer, type Sent } from '../../apps/worker/src/steps/decision';
import { DecisionApplier } from '../../apps/worker/src/steps/decision-applier.service';
import { insertOrder, useStack } from '../support/stack';
import { GIFT_CARD, waitForCompleted, withDb } from './support/recovery';

/**
 * Invariant 5's "re-running any step is harmless", at the last line of defence. A job that runs again (a
 * second copy, a retry, a job re-added by the sweeper) may have read its order before another copy moved it
 * on, and pass every check before it writes. Its write must then change nothing: each transition is a
 * conditional update guarded by the step it was computed from. Here the worker's own DecisionApplier is
 * handed what `decide` makes of every answer a partner call could have given, for the order as it was at its
 * first step, after the order completed: every transition is refused and the order stays as it was. A card
 * is the exception that proves invariant 3: a card the partner issued is never dropped, so a second card is
 * stored (as surplus), and the order is still left as it was.
 */
describe('Invariant 5: an outcome computed from a step the order has left changes nothing', () => {
  const stack = useStack({ worker: false });

  /** Everything a transition could touch, for one order. */
  const picture = (orderId: string) =>
    withDb(stack, async (db) => ({
      order: (await db.query('SELECT status, step_seq, next_step, next_step_at, error_code, completed_at, lease_owner, card_id FROM orders WHERE id = $1', [orderId])).rows,
      attempts: (await db.query('SELECT request_id, seq, state, partner_status, error_code, unknown_since, updated_at FROM attempts WHERE order_id = $1 ORDER BY seq', [orderId])).rows,
      cards: (await db.query('SELECT partner_card_id, role FROM cards WHERE order_id = $1 ORDER BY created_at', [orderId])).rows,
      callbacks: (await db.query('SELECT id FROM callback_events WHERE order_id = $1', [orderId])).rows.length,
      events: (await db.query('SELECT type FROM order_timeline WHERE order_id = $1 ORDER BY at, id NULLS LAST', [orderId])).rows.map((r) => r.type),
    }));

  it('a late unknown outcome, definitive failure, async error, waiting state or needs_attention is refused once the order completed; a second card is kept as surplus', async () => {
    const { id } = await insertOrder(stack, { giftCardCode: GIFT_CARD, amount: 5100, mode: 'async' });
    // The order as a job read it at its first step (step_seq 1, nothing sent yet).
    await stack.startWorker();
    const stale = (await stack.worker!.get(StepsRepository).current(id)) as CurrentStep;
    expect(stale.order.stepSeq).toBe(1);
    await waitForCompleted(stack, id);
    const before = await picture(id);
    expect(before.order[0].status).toBe('completed');

    const applier = stack.worker!.get(DecisionApplier);
    const { order, attempt } = stale;
    const late = (sent: Sent, answer: Answer) =>
      applier.apply(order, attempt, decide({ order, attempt, sent, answer, now: Date.now(), timings: stack.config, random: 0 }));
    const results = {
      unknown: await late('async_create', { kind: 'unknown', reason: 'timeout', message: 'late' }),
      definitive: await late('async_create', { kind: 'definitive', code: 'invalid_amount', message: 'late', httpStatus: 422 }),
      waiting: await late('async_create', { kind: 'definitive', code: 'out_of_stock', message: 'late', httpStatus: 422 }),
      asyncError: await late('async_poll', { kind: 'success', value: { id: 'p', status: 'error', request_id: attempt.requestId, created_at: '', updated_at: '', card: null }, httpStatus: 200 }),
      needsAttention: await late('async_create', { kind: 'interrupted', sentAt: new Date(Date.now() - 3_600_000) }),
    };
    expect(Object.fromEntries(Object.entries(results).map(([k, r]) => [k, r.kind === 'done' ? r.reason : r.kind]))).toEqual({
      unknown: 'the order moved on meanwhile',
      definitive: 'the order moved on meanwhile',
      waiting: 'the order moved on meanwhile',
      asyncError: 'the order moved on meanwhile',
      needsAttention: 'the order moved on meanwhile',
    });
    expect(await picture(id)).toEqual(before);

    // Invariant 3: a second card the partner issued for this order is stored, as surplus; the order is untouched.
    const secondCard = { id: `late-${id}`, code: 'LATECARDCODE0000', pin_code: null, expire_at: '2027-01-01T00:00:00.000+00:00', amount: 5100, gift_card_code: GIFT_CARD, pdf_url: 'u' };
    const stored = await late('async_poll', { kind: 'success', value: { id: 'p', status: 'success', request_id: attempt.requestId, created_at: '', updated_at: '', card: secondCard }, httpStatus: 200 });
    expect(stored).toMatchObject({ kind: 'done', cardRole: 'surplus' });
    const after = await picture(id);
    expect(after.order).toEqual(before.order);
    expect(after.cards).toEqual([...before.cards, { partner_card_id: `late-${id}`, role: 'surplus' }]);
    expect(after.events).toEqual([...before.events, 'surplus_card']);
    expect(after.callbacks).toBe(before.callbacks);
    // Received again (a re-run): stored once.
    expect(await late('async_poll', { kind: 'success', value: { id: 'p', status: 'success', request_id: attempt.requestId, created_at: '', updated_at: '', card: secondCard }, httpStatus: 200 })).toMatchObject({ cardRole: 'known' });
    expect((await picture(id)).cards).toHaveLength(2);
  });
});
