import { StepOutcomes, StepsRepository, type CurrentStep } from '@cardpull/orders';
import { insertOrder, useStack } from '../support/stack';
import { GIFT_CARD, waitForCompleted, withDb } from './support/recovery';

/**
 * Invariant 5's "re-running any step is harmless", at the last line of defence. A job that runs again (a
 * second copy, a retry, a job re-added by the sweeper) may have read its order before another copy moved it
 * on, and pass every check before it writes. Its write must then change nothing: each transition is a
 * conditional update guarded by the step it was computed from (a card's, by the order not being completed).
 * Here the worker's own StepOutcomes are handed the order as it was at its first step, after the order
 * completed: every outcome a partner call could have produced is refused, and the database stays as it was.
 */
describe('Invariant 5: an outcome computed from a step the order has left changes nothing', () => {
  const stack = useStack({ worker: false });

  /** Everything a transition could touch, for one order. */
  const picture = (orderId: string) =>
    withDb(stack, async (db) => ({
      order: (await db.query('SELECT status, step_seq, next_step, next_step_at, error_code, completed_at, lease_owner FROM orders WHERE id = $1', [orderId])).rows,
      attempts: (await db.query('SELECT request_id, seq, state, partner_status, error_code, unknown_since, updated_at FROM attempts WHERE order_id = $1 ORDER BY seq', [orderId])).rows,
      cards: (await db.query('SELECT id, partner_card_id FROM cards WHERE order_id = $1', [orderId])).rows,
      events: (await db.query('SELECT id FROM order_events WHERE order_id = $1', [orderId])).rows.length,
      callbacks: (await db.query('SELECT id FROM callback_events WHERE order_id = $1', [orderId])).rows.length,
    }));

  it('a late unknown outcome, definitive failure, async error, waiting state or second card is refused once the order completed', async () => {
    const { id } = await insertOrder(stack, { giftCardCode: GIFT_CARD, amount: 5100, mode: 'async' });
    // The order as a job read it at its first step (step_seq 1, nothing sent yet).
    await stack.startWorker();
    const steps = stack.worker!.get(StepsRepository);
    const stale = (await steps.current(id)) as CurrentStep;
    expect(stale.order.stepSeq).toBe(1);
    await waitForCompleted(stack, id);
    const before = await picture(id);
    expect(before.order[0].status).toBe('completed');

    const outcomes = stack.worker!.get(StepOutcomes);
    const { order, attempt } = stale;
    const results = {
      unknown: await outcomes.unknown(order, attempt, { reason: 'timeout', message: 'late' }, 'async_poll'),
      definitive: await outcomes.definitive(order, attempt, 'invalid_amount', 'late'),
      waiting: await outcomes.definitive(order, attempt, 'out_of_stock', 'late'),
      asyncError: await outcomes.asyncError(order, attempt),
      needsAttention: await outcomes.needsAttention(order, attempt, { code: 'timeout', message: 'late' }, new Date()),
      secondCard: await outcomes.card(order, attempt, { id: `late-${id}`, code: 'LATECARDCODE0000', pin_code: null, amount: 5100, gift_card_code: GIFT_CARD } as never, 'success'),
    };
    expect(Object.fromEntries(Object.entries(results).map(([k, r]) => [k, r.kind]))).toEqual({
      unknown: 'done',
      definitive: 'done',
      waiting: 'done',
      asyncError: 'done',
      needsAttention: 'done',
      secondCard: 'done',
    });
    expect(await picture(id)).toEqual(before);
  });
});
