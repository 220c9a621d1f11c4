import { randomUUID } from 'node:crypto';
import { StepsRepository } from '@cardpull/orders';
import { DecisionApplier } from '../../apps/worker/src/steps/decision-applier.service';
import { Retention } from '../../apps/worker/src/maintenance/retention.service';
import { withDb } from '../recovery/support/recovery';
import { createOrder, useStack, waitForOrder } from '../support/stack';

/**
 * Hole 4 of the review: retention and the asking. Retention never archives an order with a request ID that
 * is still asked about (live, or declared dead but still polled for a card within the re-check window), and
 * a card that arrives for an order archived anyway is stored, never dropped: the order comes back from the
 * archive with it.
 */
describe('retention never takes an order whose request ID may still yield a card, and a late card brings it back', () => {
  const stack = useStack({ env: { RETENTION_DAYS: '30', RETENTION_SECRETS_DAYS: '0', RETENTION_INTERVAL_MS: '3600000', RECONCILE_INTERVAL_MS: '3600000' } });
  const age = (ids: string[]) =>
    withDb(stack, (db) =>
      db.query(
        `UPDATE orders SET created_at = now() - interval '40 days', updated_at = now() - interval '40 days', completed_at = coalesce(completed_at, now()) - interval '40 days' WHERE id = ANY($1::uuid[])`,
        [ids],
      ),
    );
  const live = (id: string) => withDb(stack, async (db) => (await db.query('SELECT 1 FROM orders WHERE id = $1', [id])).rowCount === 1);

  it('an order with an earlier request ID still re-checked for a card is not archived', async () => {
    const { id } = await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: 1100, mode: 'async' });
    await waitForOrder(stack, id, (o) => o.status === 'completed');
    // The order went on with a second ID while the first is still asked about (re-checked for a card this week).
    await withDb(stack, async (db) => {
      await db.query(`UPDATE attempts SET seq = 2 WHERE order_id = $1`, [id]);
      await db.query(
        `INSERT INTO attempts (request_id, order_id, seq, kind, state, partner_status, error_code, error_message, call_count, first_sent_at, unknown_since, created_at, updated_at)
         VALUES ($1, $2, 1, 'async', 'failed_definitive', 'exists', 'used_without_pull_request', 'inferred', 3, now() - interval '40 days', now() - interval '40 days', now() - interval '40 days', now())`,
        [`recheck-${randomUUID()}`, id],
      );
    });
    await age([id]);
    await stack.worker!.get(Retention).runNow();
    expect(await live(id)).toBe(true);
  });

  it('a card that arrives for an archived order is stored: the order comes back from the archive with it', async () => {
    const { id, requestId } = await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: 1200, mode: 'sync' });
    await waitForOrder(stack, id, (o) => o.status === 'completed');
    // What a worker read before retention ran: the order and its attempt.
    const before = (await stack.worker!.get(StepsRepository).current(id))!;
    await age([id]);
    expect(await stack.worker!.get(Retention).runNow()).toMatchObject({ archived: 1 });
    expect(await live(id)).toBe(false);

    // Its answer comes back now: a second card for the same request ID (the partner's duplicate).
    const partnerCardId = randomUUID();
    const card = { id: partnerCardId, code: 'LATE-CODE-1234', expire_at: '2027-06-01T00:00:00.000+00:00', pin_code: '9876', amount: 1200, gift_card_code: 'FAST-FREE', pdf_url: 'https://x.example.com/c.pdf' };
    const result = await stack.worker!.get(DecisionApplier).apply(before.order, before.attempt, { kind: 'store_card', rule: 'card', card, mismatch: null, attempt: { state: 'succeeded', partnerStatus: 'issued' } });
    expect(result).toMatchObject({ kind: 'done', cardRole: 'surplus' });
    expect(await live(id)).toBe(true);
    await withDb(stack, async (db) => {
      const cards = await db.query<{ partner_card_id: string; role: string }>('SELECT partner_card_id, role::text AS role FROM cards WHERE order_id = $1 ORDER BY created_at', [id]);
      expect(cards.rows.map((c) => c.role)).toEqual(['order', 'surplus']);
      expect(cards.rows[1]!.partner_card_id).toBe(partnerCardId);
      expect((await db.query('SELECT 1 FROM orders_archive WHERE id = $1', [id])).rowCount).toBe(0);
      const events = await db.query<{ type: string }>('SELECT type FROM order_timeline WHERE order_id = $1 ORDER BY at, id NULLS LAST', [id]);
      expect(events.rows.map((e) => e.type)).toEqual(expect.arrayContaining(['created', 'completed', 'restored_from_archive', 'surplus_card']));
      expect((await db.query('SELECT 1 FROM attempts WHERE request_id = $1', [requestId])).rowCount).toBe(1);
    });
  });
});
