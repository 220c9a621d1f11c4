import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { AdminActions } from '../../apps/api/src/admin/orders/admin-actions.service';
import { Reconciler } from '../../apps/worker/src/recovery/reconciler.service';
import { waitFor, expectInvariants } from '@cardpull/testing';
import { createOrder, useStack, waitForOrder } from '../support/stack';

/**
 * "Mark failed" is the operator's declaration that the order's request ID is dead: a sync ID is never sent
 * again (test/money-safety/partner-word), but an async one is still read for a card for the re-check window
 * (a GET cannot issue one): a card that arrives later is stored and the order completes (completed_after_failed
 * on its timeline). And the reconciler must page through every such ID (checking one does not keep it at
 * the head of the line), each in its own error boundary (one bad order does not stop the pass).
 */
describe('the reconciler keeps asking about every request ID that may still yield a card', () => {
  // A pull that outlives the unknown-outcome window, so the order reaches needs_attention while the partner still works on it.
  const stack = useStack({ env: { UNKNOWN_OUTCOME_WINDOW_MS: '1500', RECONCILE_INTERVAL_MS: '3600000' }, beforeClose: expectInvariants });
  const reconciler = () => stack.worker!.get(Reconciler);

  it('an order marked failed by an operator still gets the card its request ID yields later: completed_after_failed', async () => {
    await stack.sim.control.addFault({ endpoint: 'pull_requests', mode: 'latency', latency_ms: 4_000, gift_card_codes: ['NOVA-GAMES-FREE'], times: 1 });
    const { id, requestId } = await createOrder(stack, { gift_card_code: 'NOVA-GAMES-FREE', amount: 2300, mode: 'async' });
    expect((await waitForOrder(stack, id)).status).toBe('needs_attention');
    await stack.api!.get(AdminActions).markFailed(id, 'alice', 'customer refunded');
    expect((await stack.call('GET', `/v1/orders/${id}`)).body.order.status).toBe('failed');

    const issued = await waitFor('the partner to issue the card', async () => (await stack.sim.control.ledger()).cards.find((c) => c.request_id === requestId), 10_000);
    const report = await reconciler().reconcileOnce();
    expect(report).toMatchObject({ resolved: 1, errors: 0 });
    const order = (await stack.call('GET', `/v1/orders/${id}`)).body.order;
    expect(order).toMatchObject({ status: 'completed', error: null, card: { id: issued.id, code: issued.code } });
    expect(order.attempts.map((a: { request_id: string }) => a.request_id)).toEqual([requestId]);
    const pg = new Client({ connectionString: stack.db.url });
    await pg.connect();
    try {
      const { rows } = await pg.query('SELECT type, from_status, to_status, actor FROM order_timeline WHERE order_id = $1 ORDER BY at, id NULLS LAST', [id]);
      expect(rows.map((r) => r.type)).toEqual(expect.arrayContaining(['needs_attention', 'marked_failed', 'completed_after_failed']));
      expect(rows.at(-1)).toMatchObject({ type: 'completed_after_failed', from_status: 'failed', to_status: 'completed' });
    } finally {
      await pg.end();
    }
  });

  it('one pass checks every such ID (200 unanswerable first, then one whose check throws, then 5 with a card): the 5 complete', async () => {
    const pg = new Client({ connectionString: stack.db.url });
    await pg.connect();
    try {
      // Orders in needs_attention with an async request ID whose outcome is unknown, written as the worker
      // leaves them; the oldest first (the order in which a reconciler that does not page would take them).
      const insert = async (requestId: string, age: number) => {
        const orderId = randomUUID();
        await pg.query(
          `WITH o AS (INSERT INTO orders (id, client, idempotency_key, request_hash, status, mode, gift_card_code, amount, step_seq,
                                          error_code, error_message, created_at, updated_at)
                      VALUES ($1, 'shop', $2, 'h', 'needs_attention', 'async', 'FAST-FREE', 900, 3, 'unknown_outcome', 'no answer',
                              now() - make_interval(secs => $3), now() - make_interval(secs => $3)))
           INSERT INTO attempts (request_id, order_id, seq, kind, state, partner_status, call_count, first_sent_at, unknown_since, created_at, updated_at)
           VALUES ($4, $1, 1, 'async', 'unknown', 'waiting', 1, now() - make_interval(secs => $3), now() - make_interval(secs => $3), now() - make_interval(secs => $3), now())`,
          [orderId, `paging-${requestId}`, age, requestId],
        );
        return orderId;
      };
      const unanswerable = Array.from({ length: 200 }, () => `a-${randomUUID()}`);
      for (const [i, requestId] of unanswerable.entries()) await insert(requestId, 1_000 - i);
      await stack.sim.control.addFault({ endpoint: 'pull_request_status', mode: 'error_before_issue', status: 503, request_ids: unanswerable });
      const bad = await insert(`0-${randomUUID()}`, 2_000);
      await pg.query(`CREATE FUNCTION test_refuse_bad() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'test: order refused'; END $$`);
      // Whatever the check writes (a lease on the order, a note on the attempt) is refused for this one order.
      await pg.query(`CREATE TRIGGER test_refuse_bad BEFORE UPDATE ON orders FOR EACH ROW WHEN (OLD.id = '${bad}') EXECUTE FUNCTION test_refuse_bad()`);
      await pg.query(`CREATE TRIGGER test_refuse_bad_attempt BEFORE UPDATE ON attempts FOR EACH ROW WHEN (OLD.order_id = '${bad}') EXECUTE FUNCTION test_refuse_bad()`);
      // Five whose pull requests the partner has (created before, as if our creation's answer had been lost): each has its card.
      const answerable = Array.from({ length: 5 }, () => `z-${randomUUID()}`);
      const good: string[] = [];
      for (const requestId of answerable) {
        good.push(await insert(requestId, 10)); // committed before the partner sees it (invariant 1)
        const created = await stack.sim.request({ method: 'POST', path: '/partners/v1/pull_requests', body: { pull_request: { amount: 900, gift_card_code: 'FAST-FREE', request_id: requestId } } });
        expect(created.status).toBe(200);
      }
      await waitFor('the partner to issue the 5 cards', async () => (await stack.sim.control.ledger()).cards.filter((c) => answerable.includes(c.request_id)).length === 5, 10_000);

      const report = await reconciler().reconcileOnce();
      expect(report).toMatchObject({ errors: 1, resolved: 5, unchanged: 200 });
      for (const id of good) expect((await stack.call('GET', `/v1/orders/${id}`)).body.order.status).toBe('completed');
      expect((await pg.query(`SELECT count(*)::int AS n FROM orders WHERE status = 'needs_attention' AND idempotency_key LIKE 'paging-a-%'`)).rows[0].n).toBe(200);
      await pg.query('DROP TRIGGER test_refuse_bad ON orders');
      await pg.query('DROP TRIGGER test_refuse_bad_attempt ON attempts');
      await stack.sim.control.clearFaults();
    } finally {
      await pg.query('DROP TRIGGER IF EXISTS test_refuse_bad ON orders').catch(() => undefined);
      await pg.query('DROP TRIGGER IF EXISTS test_refuse_bad_attempt ON attempts').catch(() => undefined);
      await pg.end();
    }
  });
});
