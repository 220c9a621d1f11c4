import type { FaultSpecInput } from '@cardpull/testing';
import { expectInvariants, waitFor } from '@cardpull/testing';
import { AdminActions } from '../../apps/api/src/admin/orders/admin-actions.service';
import { Reconciler } from '../../apps/worker/src/recovery/reconciler.service';
import { overlappingPosts, withDb } from '../recovery/support/recovery';
import { StepsRepository, TransitionsRepository } from '@cardpull/orders';
import { createOrder, insertOrder, useStack, waitForOrder } from '../support/stack';

/**
 * Invariant 2, as tightened: a new request ID only on the partner's own word about the old one (a definitive
 * answer to its FIRST send, or async status `error`), or an operator's audited declaration. Nothing else
 * proves an ID dead: not a business error answered to a re-send, not a balance or inventory read, not 404s
 * after a 422 "already used", not a timer. And one ID has one sender at a time; every path that stops asking
 * (mark failed) goes through the same rule. Each case below reproduces a hole a review proved in the rule
 * that inferred death (each failed on the code before this rule).
 */
describe('only the partner’s own word kills a request ID', () => {
  const stack = useStack({
    env: { PULL_REQUEST_SETTLE_MS: '1500', UNKNOWN_OUTCOME_WINDOW_MS: '30000', PARTNER_TIMEOUT_MS: '1000', RECONCILE_INTERVAL_MS: '3600000' },
    beforeClose: expectInvariants,
  });
  afterEach(async () => {
    await stack.sim.control.clearFaults();
    await stack.sim.control.setStock('ACME-BOOKS-FIXED', 500);
    await stack.sim.control.setStock('NOVA-GAMES-FREE', 'unlimited');
  });
  const fault = (spec: FaultSpecInput) => stack.sim.control.addFault(spec);
  const ledger = () => stack.sim.control.ledger();
  const cardsOfOrder = async (order: { attempts: { request_id: string }[] }) => {
    const ids = new Set(order.attempts.map((a) => a.request_id));
    return (await ledger()).cards.filter((c) => ids.has(c.request_id));
  };
  const terminal = (o: { status: string }) => ['completed', 'failed', 'needs_attention'].includes(o.status);

  describe('hole 1: a business error on a re-send, with a read that shows the condition cleared, is not the ID’s death', () => {
    it.each([
      ['out_of_stock', 'the inventory reads "unlimited"'],
      ['not_enough_funds', 'the balance reads plenty'],
    ] as const)('sync: the first send issued a card (answer lost); re-sends answer %s while %s -> the same ID’s card, one card', async (code, _read) => {
      // The first send is issued and its answer lost; the partner checks stock/funds before it looks at the
      // request ID, so the next two re-sends are refused although the ID holds a card; meanwhile its
      // inventory is unlimited and its balance plenty (a read cannot know about this ID).
      await fault({ endpoint: 'cards', mode: 'hang', latency_ms: 2_500, gift_card_codes: ['NOVA-GAMES-FREE'], times: 1 });
      const { id, requestId } = await createOrder(stack, { gift_card_code: 'NOVA-GAMES-FREE', amount: code === 'out_of_stock' ? 2100 : 2200, mode: 'sync' });
      await fault({ endpoint: 'cards', mode: 'error_before_issue', status: 422, error_code: code, request_ids: [requestId], times: 2 } as FaultSpecInput);
      const order = await waitForOrder(stack, id, (o) => o.status === 'completed' || o.attempts.length > 1, 20_000);
      const posts = (await ledger()).requests.filter((r) => r.method === 'POST' && r.request_id === requestId).map((r) => r.status);
      expect(posts.filter((s) => s === 422)).toHaveLength(2); // the reading applied
      expect(order.attempts.map((a: { request_id: string }) => a.request_id)).toEqual([requestId]);
      expect(order.status).toBe('completed');
      expect(await cardsOfOrder(order)).toHaveLength(1);
    });
  });

  describe('hole 2: 404s from a read copy that lags longer than the settle window never retire an async ID', () => {
    it('after a 422 "already used": the same ID is polled until its pull request shows, one card', async () => {
      // The creation reaches the partner but its answer is lost; the read copy lags 6 s (the settle window is 1.5 s).
      await fault({ endpoint: 'pull_requests', mode: 'hang', latency_ms: 2_500, gift_card_codes: ['NOVA-GAMES-FREE'], times: 1 });
      await fault({ endpoint: 'pull_request_status', mode: 'read_lag', latency_ms: 6_000, gift_card_codes: ['NOVA-GAMES-FREE'] });
      const { id, requestId } = await createOrder(stack, { gift_card_code: 'NOVA-GAMES-FREE', amount: 2300, mode: 'async' });
      const order = await waitForOrder(stack, id, (o) => o.status === 'completed' || o.attempts.length > 1, 25_000);
      const calls = (await ledger()).requests.filter((r) => r.request_id === requestId).map((r) => `${r.method} ${r.status}`);
      expect(calls).toEqual(expect.arrayContaining(['GET 404', 'POST 422']));
      expect(order.attempts.map((a: { request_id: string }) => a.request_id)).toEqual([requestId]);
      expect(order.status).toBe('completed');
      expect(await cardsOfOrder(order)).toHaveLength(1);
    });

    it('after out_of_stock answered to the re-create (stock checked before the ID): the same ID, one card once restocked', async () => {
      await stack.sim.control.setStock('ACME-BOOKS-FIXED', 1, 5000);
      await fault({ endpoint: 'pull_requests', mode: 'hang', latency_ms: 2_500, gift_card_codes: ['ACME-BOOKS-FIXED'], times: 1 });
      await fault({ endpoint: 'pull_requests', mode: 'business_first', gift_card_codes: ['ACME-BOOKS-FIXED'] });
      await fault({ endpoint: 'pull_request_status', mode: 'read_lag', latency_ms: 7_000, gift_card_codes: ['ACME-BOOKS-FIXED'] });
      const { id, requestId } = await createOrder(stack, { gift_card_code: 'ACME-BOOKS-FIXED', amount: 5000, mode: 'async' });
      // Long enough for 404s to span the settle window after the re-create's out_of_stock.
      await waitForOrder(stack, id, (o) => o.attempts.length > 1, 5_000).catch(() => undefined);
      await stack.sim.control.setStock('ACME-BOOKS-FIXED', 5, 5000);
      const order = await waitForOrder(stack, id, (o) => o.status === 'completed', 25_000);
      expect(order.attempts.map((a: { request_id: string }) => a.request_id)).toEqual([requestId]);
      expect(await cardsOfOrder(order)).toHaveLength(1);
    });
  });

  describe('hole 6: an answer about another request ID proves nothing about ours', () => {
    it('a pull request shown with ANOTHER request_id and status error: no new ID, the order needs attention, then ours yields its card', async () => {
      // An order of ours whose first pull request ended in status error: the partner will show it when asked about another ID.
      await fault({ endpoint: 'pull_requests', mode: 'async_error', gift_card_codes: ['NOVA-GAMES-FREE'], times: 1 });
      const other = await createOrder(stack, { gift_card_code: 'NOVA-GAMES-FREE', amount: 2600, mode: 'async' });
      await waitForOrder(stack, other.id, (o) => o.status === 'completed');
      await fault({ endpoint: 'pull_request_status', mode: 'other_request_id', shown: 'another', shown_request_id: other.requestId, gift_card_codes: ['FAST-FREE'], times: 2 } as FaultSpecInput);
      const { id, requestId } = await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: 2700, mode: 'async' });
      const order = await waitForOrder(stack, id, (o) => o.status === 'completed', 15_000);
      expect(order.attempts.map((a: { request_id: string }) => a.request_id)).toEqual([requestId]);
      expect(await cardsOfOrder(order)).toHaveLength(1);
      const events = await withDb(stack, async (db) => (await db.query(`SELECT type, detail->>'reason' AS reason FROM order_timeline WHERE order_id = $1 ORDER BY at, id NULLS LAST`, [id])).rows);
      expect(events).toEqual(expect.arrayContaining([{ type: 'needs_attention', reason: 'request_id_mismatch' }]));
    });

    it('a card in a pull request shown with another request_id is stored as a mismatch (masked, held), never as the order’s card', async () => {
      await fault({ endpoint: 'pull_request_status', mode: 'other_request_id', gift_card_codes: ['FAST-FREE'] } as FaultSpecInput);
      const { id, requestId } = await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: 2800, mode: 'async' });
      const order = await waitForOrder(stack, id, (o) => o.other_cards.length > 0 || o.status === 'completed', 15_000);
      expect(order).toMatchObject({ status: 'needs_attention', card: null, error: { code: 'card_mismatch' } });
      expect(order.other_cards).toEqual([expect.objectContaining({ role: 'mismatch', held: true, request_id: requestId, mismatch: expect.stringContaining(`instead of ${requestId}`) })]);
      expect(order.attempts).toEqual([expect.objectContaining({ request_id: requestId, state: 'unknown' })]);
      expect(await cardsOfOrder(order)).toHaveLength(1);
    });
  });

  describe('invariant 2 by construction: the statement that mints a new request ID never replaces an open one', () => {
    it('refused while the old ID is open; applied when the same statement records its death (here an operator’s)', async () => {
      await stack.stopWorker();
      let ids: { id: string; requestId: string };
      try {
        ids = await insertOrder(stack, { giftCardCode: 'FAST-FREE', amount: 2900 });
        const transitions = stack.api!.get(TransitionsRepository);
        const { order } = (await stack.api!.get(StepsRepository).current(ids.id))!;
        const base = { orderId: ids.id, stepSeq: order.stepSeq, actor: 'test', next: { step: 'sync_call' as const, delayMs: 0 }, newAttempt: { kind: 'sync' as const, replaces: ids.requestId } };
        expect(await transitions.transition(base)).toMatchObject({ applied: false });
        const killed = await transitions.transition({ ...base, attempt: { requestId: ids.requestId, state: 'failed_definitive', declaredDeadBy: 'test' } });
        expect(killed).toMatchObject({ applied: true, newRequestId: expect.any(String) });
      } finally {
        await stack.startWorker();
      }
      const done = await waitForOrder(stack, ids.id, (o) => o.status === 'completed');
      expect(done.attempts.map((a: { request_id: string; state: string }) => [a.request_id === ids.requestId, a.state])).toEqual([[true, 'failed_definitive'], [false, 'succeeded']]);
    });
  });

  describe('hole 5: mark failed is the operator’s declaration: its sync ID is never sent again', () => {
    it('after mark failed, nothing re-sends the request ID, and the order stays failed with the operator’s reason', async () => {
      const { id, requestId } = await unansweredSyncOrder(stack, 2500, true);
      await stack.api!.get(AdminActions).markFailed(id, 'alice', 'partner ticket #42: never processed');
      const markedAt = Date.now();
      await stack.worker!.get(Reconciler).reconcileOnce();
      await new Promise((r) => setTimeout(r, 1_500));
      const later = (await ledger()).requests.filter((r) => r.request_id === requestId && Date.parse(r.at) > markedAt);
      expect(later).toEqual([]);
      const order = (await stack.call('GET', `/v1/orders/${id}`)).body.order;
      expect(order).toMatchObject({ status: 'failed', error: { code: 'marked_failed' } });
      expect(order.attempts).toEqual([expect.objectContaining({ request_id: requestId, state: 'failed_definitive' })]);
      expect(await cardsOfOrder(order)).toHaveLength(0);
    });
  });
});

/** A sync order whose request ID had no answer (503s) for longer than the window: needs_attention, its ID live. */
async function unansweredSyncOrder(stack: ReturnType<typeof useStack>, amount: number, backdateWindow: boolean) {
  const ledger = () => stack.sim.control.ledger();
  await stack.sim.control.addFault({ endpoint: 'cards', mode: 'error_before_issue', status: 503, gift_card_codes: ['FAST-FREE'] });
  const { id, requestId } = await createOrder(stack, { gift_card_code: 'FAST-FREE', amount, mode: 'sync' });
  if (backdateWindow) await withDb(stack, (db) => db.query(`UPDATE attempts SET unknown_since = now() - interval '1 hour' WHERE request_id = $1`, [requestId]));
  await waitFor('a send answered 503', async () => (await ledger()).requests.some((r) => r.request_id === requestId && r.status === 503) || null);
  const order = await waitForOrder(stack, id, (o) => o.status === 'needs_attention', 15_000);
  await stack.sim.control.clearFaults();
  return { id, requestId, order };
}

/** Hole 3 needs calls that outlast the operator's click: a longer timeout, and a short window to reach needs_attention. */
describe('one sender per request ID', () => {
  const stack = useStack({ env: { UNKNOWN_OUTCOME_WINDOW_MS: '1500', PARTNER_TIMEOUT_MS: '5000', RECONCILE_INTERVAL_MS: '3600000' }, beforeClose: expectInvariants });
  const ledger = () => stack.sim.control.ledger();

  describe('hole 3: an operator’s action never clears the lease of a call in flight', () => {
    it('a re-drive while the ID is being asked is refused with a clear message, and no two sends of the ID overlap', async () => {
      const { id, requestId } = await unansweredSyncOrder(stack, 2400, false);
      // The next ask of the ID is slow (3 s, under the 5 s timeout): it is in flight when the operator acts.
      await stack.sim.control.addFault({ endpoint: 'cards', mode: 'latency', latency_ms: 3_000, request_ids: [requestId], times: 1 });
      void stack.worker!.get(Reconciler).reconcileOnce().catch(() => undefined);
      await waitFor('a send of the ID in flight', async () => (await ledger()).requests.some((r) => r.request_id === requestId && r.finished_at === null) || null, 15_000);
      await expect(stack.api!.get(AdminActions).redrive(id, 'alice', 'the partner says it is still working on it')).rejects.toMatchObject({ status: 409 });
      const order = await waitForOrder(stack, id, (o) => o.status === 'completed', 20_000);
      expect(order.attempts.map((a: { request_id: string }) => a.request_id)).toEqual([requestId]);
      expect(overlappingPosts(await ledger(), stack.config.PARTNER_TIMEOUT_MS)).toEqual([]);
    });
  });
});
