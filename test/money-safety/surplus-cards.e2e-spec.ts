import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { TransitionsRepository } from '@cardpull/orders';
import { Reconciler } from '../../apps/worker/src/recovery/reconciler.service';
import { testPool, waitFor } from '@cardpull/testing';
import { insertOrder, useStack } from '../support/stack';

/**
 * Hole 2 of the money-safety review: a second card for an order was thrown away (a log line, and an insert
 * that did nothing). Every card the partner issued is stored: a second card for an order is kept as
 * surplus, linked to the order and to its request ID, shown on the order; the order keeps its own card.
 */
describe('a second card for an order is stored as surplus, never dropped', () => {
  let pool: Pool;
  const stack = useStack({ env: { RECONCILE_INTERVAL_MS: '3600000' }, beforeClose: () => pool?.end() });
  beforeAll(() => {
    pool = testPool(stack.db.url, 4);
  });

  it('a request ID declared dead by inference that yields a card after the order completed: the reconciler stores it as surplus', async () => {
    await stack.stopWorker();
    const { id, requestId: firstId } = await insertOrder(stack, { giftCardCode: 'FAST-FREE', amount: 4600, mode: 'async' });
    const secondId = randomUUID();
    // As a wrong inference leaves it: the first ID declared dead (used, yet no pull request to read), a
    // second one minted and polled; meanwhile the partner went on with the first one after all.
    await pool.query(`UPDATE attempts SET state = 'failed_definitive', partner_status = 'exists', error_code = 'used_without_pull_request' WHERE request_id = $1`, [firstId]);
    await pool.query(`INSERT INTO attempts (request_id, order_id, seq, kind, state, created_at, updated_at) VALUES ($1, $2, 2, 'async', 'created', now(), now())`, [secondId, id]);
    await pool.query(`UPDATE orders SET status = 'in_progress', next_step = 'async_create', next_step_at = now(), step_seq = step_seq + 1 WHERE id = $1`, [id]);
    const created = await stack.sim.request({ method: 'POST', path: '/partners/v1/pull_requests', body: { pull_request: { amount: 4600, gift_card_code: 'FAST-FREE', request_id: firstId } } });
    expect(created.status).toBe(200);
    await stack.startWorker();
    await waitFor('the order to complete with the second ID’s card', async () => (await stack.call('GET', `/v1/orders/${id}`)).body.order.status === 'completed', 15_000);
    const issuedFirst = await waitFor('the first ID’s card', async () => (await stack.sim.control.ledger()).cards.find((c) => c.request_id === firstId), 10_000);

    const report = await stack.worker!.get(Reconciler).reconcileOnce();
    expect(report).toMatchObject({ resolved: 1, errors: 0 });
    const order = (await stack.call('GET', `/v1/orders/${id}`)).body.order;
    const secondCard = (await stack.sim.control.ledger()).cards.find((c) => c.request_id === secondId)!;
    expect(order).toMatchObject({ status: 'completed', card: { id: secondCard.id } });
    // Listed (nothing billed is hidden) but held for a refund or reuse: masked, even for the shop's cards:read key.
    expect(order.other_cards).toEqual([
      expect.objectContaining({ id: issuedFirst.id, code: `${'*'.repeat(issuedFirst.code.length - 4)}${issuedFirst.code.slice(-4)}`, role: 'surplus', request_id: firstId, mismatch: null, held: true }),
    ]);
    const { rows } = await pool.query(`SELECT type, request_id FROM order_events WHERE order_id = $1 AND type = 'surplus_card'`, [id]);
    expect(rows).toEqual([{ type: 'surplus_card', request_id: firstId }]);
  });

  it('two cards stored for one order at the same time: exactly one is the order’s, the other surplus (the order row is locked first)', async () => {
    await stack.stopWorker(); // only this test touches the order
    try {
      const { id, requestId } = await insertOrder(stack, { giftCardCode: 'NOVA-GAMES-FREE', amount: 4700, mode: 'async' });
      const transitions = stack.api!.get(TransitionsRepository);
      const card = () => ({ id: randomUUID(), requestId, partnerCardId: `p-${randomUUID()}`, keyId: 'k', codeEnc: Buffer.from('x'), pinEnc: null, expireAt: null, amount: 4700, giftCardCode: 'NOVA-GAMES-FREE', pdfEnc: null });
      const stored = await Promise.all(Array.from({ length: 4 }, () => transitions.storeCard(id, card(), null, { state: 'succeeded', partnerStatus: 'success' }, 'test')));
      expect(stored.map((s) => s?.role).sort()).toEqual(['order', 'surplus', 'surplus', 'surplus']);
      const { rows } = await pool.query(`SELECT o.status, o.card_id = c.id AS own, c.role FROM orders o JOIN cards c ON c.order_id = o.id WHERE o.id = $1 ORDER BY c.role`, [id]);
      expect(rows).toEqual([
        { status: 'completed', own: true, role: 'order' },
        { status: 'completed', own: false, role: 'surplus' },
        { status: 'completed', own: false, role: 'surplus' },
        { status: 'completed', own: false, role: 'surplus' },
      ]);
    } finally {
      await stack.startWorker();
    }
  });
});
