import type { FaultSpecInput } from '@cardpull/testing';
import { expectInvariants, waitFor } from '@cardpull/testing';
import { AdminActions } from '../../apps/api/src/admin/orders/admin-actions.service';
import { withDb } from '../recovery/support/recovery';
import { createOrder, useStack, waitForOrder } from '../support/stack';

/**
 * Hole 1 of the money-safety review, and the other readings of the spec's silent points. The spec does not
 * say in which order the partner checks errors: a partner may check stock (or the amount) BEFORE it looks at
 * a request ID it already knows. Then a business error answered to a re-send of an ID whose first send had
 * an unknown outcome says nothing of that ID: its first send may have taken the last unit and still yield a
 * card. cardpull waits on the SAME ID and never mints a new one while the first may still yield a card.
 * The simulator plays each reading (its `business_first`, `read_lag`, `rate_limited`, `accepted_202`
 * faults); every test ends with one card per order, stored, under the order's first request ID unless the
 * partner's word or an operator's (audited) killed it.
 */
describe('money safety under every reading of the partner', () => {
  const stack = useStack({ env: { PULL_REQUEST_SETTLE_MS: '1500', UNKNOWN_OUTCOME_WINDOW_MS: '30000' }, beforeClose: expectInvariants });
  afterEach(async () => {
    await stack.sim.control.clearFaults();
    await stack.sim.control.setStock('ACME-BOOKS-FIXED', 500);
  });
  const fault = (spec: FaultSpecInput) => stack.sim.control.addFault(spec);
  const ledger = () => stack.sim.control.ledger();
  /** Every card the partner issued for any of the order's request IDs. */
  const cardsOfOrder = async (order: { attempts: { request_id: string }[] }) => {
    const ids = new Set(order.attempts.map((a) => a.request_id));
    return (await ledger()).cards.filter((c) => ids.has(c.request_id));
  };
  const postsOf = async (requestId: string) => (await ledger()).requests.filter((r) => r.method === 'POST' && r.request_id === requestId);
  const terminal = (o: { status: string }) => ['completed', 'failed', 'needs_attention'].includes(o.status);

  /**
   * The order's first send takes the last unit (its answer is lost: a hang past our timeout); the stock is
   * raised only after `raiseAfterMs`, when a service that minted a new ID would get a second card for it.
   */
  async function lastUnitTakenByALostAnswer(mode: 'sync' | 'async', amount: number) {
    await stack.sim.control.setStock('ACME-BOOKS-FIXED', 1, amount);
    await fault({ endpoint: mode === 'sync' ? 'cards' : 'pull_requests', mode: 'hang', latency_ms: 3_000, gift_card_codes: ['ACME-BOOKS-FIXED'], times: 1 });
    await fault({ endpoint: mode === 'sync' ? 'cards' : 'pull_requests', mode: 'business_first', gift_card_codes: ['ACME-BOOKS-FIXED'] });
    const { id, requestId } = await createOrder(stack, { gift_card_code: 'ACME-BOOKS-FIXED', amount, mode });
    // Long enough for a re-send to meet out_of_stock and for the order to settle on whatever it decides.
    await waitForOrder(stack, id, terminal, 4_000).catch(() => undefined);
    await stack.sim.control.setStock('ACME-BOOKS-FIXED', 5, amount);
    const order = await waitForOrder(stack, id, terminal, 15_000);
    return { order, requestId };
  }

  describe('a business error on a re-send after an unknown outcome is not proof: the order waits on the SAME request ID', () => {
    it('sync: out_of_stock answered to the same-ID retry (stock checked before the request ID) -> the first ID’s card, one card', async () => {
      const { order, requestId } = await lastUnitTakenByALostAnswer('sync', 2500);
      const posts = (await postsOf(requestId)).map((p) => p.status);
      expect(posts).toContain(422); // the reading applied: a re-send was answered out_of_stock
      expect(order.status).toBe('completed');
      expect(order.attempts.map((a: { request_id: string }) => a.request_id)).toEqual([requestId]);
      const cards = await cardsOfOrder(order);
      expect(cards).toHaveLength(1);
      expect(order.card.id).toBe(cards[0]!.id);
    });

    it('async: create times out, the poll meets a lagging read (404), the re-create meets out_of_stock -> polling the same ID finds its card', async () => {
      await fault({ endpoint: 'pull_request_status', mode: 'read_lag', latency_ms: 2_000, gift_card_codes: ['ACME-BOOKS-FIXED'] });
      const { order, requestId } = await lastUnitTakenByALostAnswer('async', 5000);
      const calls = (await ledger()).requests.filter((r) => r.request_id === requestId).map((r) => `${r.method} ${r.status}`);
      expect(calls).toEqual(expect.arrayContaining(['GET 404', 'POST 422']));
      expect(order.status).toBe('completed');
      expect(order.attempts.map((a: { request_id: string }) => a.request_id)).toEqual([requestId]);
      const cards = await cardsOfOrder(order);
      expect(cards).toHaveLength(1);
      expect(order.card.id).toBe(cards[0]!.id);
    });

    it.each(['sync', 'async'] as const)('%s: invalid_amount answered to a re-send does not fail the order: the first ID’s card is fetched', async (mode) => {
      const code = 'NOVA-GAMES-FREE';
      await fault({ endpoint: mode === 'sync' ? 'cards' : 'pull_requests', mode: 'hang', latency_ms: 2_500, gift_card_codes: [code], times: 1 });
      if (mode === 'async') await fault({ endpoint: 'pull_request_status', mode: 'read_lag', latency_ms: 6_000, gift_card_codes: [code] });
      const { id, requestId } = await createOrder(stack, { gift_card_code: code, amount: mode === 'sync' ? 3300 : 3400, mode });
      // The partner answers the re-send invalid_amount (its catalog changed meanwhile, say): once.
      await fault({ endpoint: mode === 'sync' ? 'cards' : 'pull_requests', mode: 'error_before_issue', status: 422, error_code: 'invalid_amount', request_ids: [requestId], times: 1 } as FaultSpecInput);
      const order = await waitForOrder(stack, id, terminal, 30_000);
      expect((await postsOf(requestId)).map((p) => p.status)).toContain(422);
      expect(order.status).toBe('completed');
      expect(order.attempts.map((a: { request_id: string }) => a.request_id)).toEqual([requestId]);
      expect(await cardsOfOrder(order)).toHaveLength(1);
    });
  });

  describe('a new request ID only on the partner’s word, or an operator’s after asking the partner', () => {
    it('sync: the first send failed at the partner but its answer was lost; every re-send replays out_of_stock -> the same ID until an operator declares it dead; then a new ID', async () => {
      // The first send fails at the partner (no stock) and its answer is lost; every repeat replays that
      // stored answer, whatever the stock is now. Nothing the partner says about THIS ID proves it dead.
      await stack.sim.control.setStock('ACME-BOOKS-FIXED', 0, 1000);
      await fault({ endpoint: 'cards', mode: 'hang', latency_ms: 2_500, gift_card_codes: ['ACME-BOOKS-FIXED'], times: 1 });
      const { id, requestId } = await createOrder(stack, { gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000 });
      await waitFor('a re-send answered out_of_stock', async () => (await postsOf(requestId)).some((p) => p.status === 422) || null);
      await stack.sim.control.setStock('ACME-BOOKS-FIXED', 3, 1000);
      // The same ID is asked on and on; the order waits for a person once the window is over.
      await withDb(stack, (db) => db.query(`UPDATE attempts SET unknown_since = now() - interval '1 hour' WHERE request_id = $1`, [requestId]));
      const waiting = await waitForOrder(stack, id, (o) => o.status === 'needs_attention', 15_000);
      expect(waiting).toMatchObject({ error: { code: 'outcome_unknown' }, attempts: [expect.objectContaining({ request_id: requestId, state: 'unknown' })] });
      expect((await postsOf(requestId)).filter((p) => p.status === 422).length).toBeGreaterThanOrEqual(2);
      // The operator asks the partner, who says the first send failed: declare it dead, then re-drive.
      await stack.api!.get(AdminActions).declareDead(id, 'alice', 'partner ticket #7: request failed out_of_stock at 10:02');
      const declared = (await stack.call('GET', `/v1/orders/${id}`)).body.order;
      expect(declared).toMatchObject({ status: 'needs_attention', error: { code: 'declared_dead' }, attempts: [expect.objectContaining({ state: 'failed_definitive' })] });
      const redriven = await stack.api!.get(AdminActions).redrive(id, 'alice', 'pull again');
      expect(redriven.newRequestId).toEqual(expect.any(String));
      const order = await waitForOrder(stack, id, terminal, 15_000);
      expect(order.status).toBe('completed');
      expect(order.attempts).toEqual([
        expect.objectContaining({ request_id: requestId, state: 'failed_definitive', error: expect.objectContaining({ code: 'declared_dead' }) }),
        expect.objectContaining({ request_id: redriven.newRequestId, state: 'succeeded' }),
      ]);
      expect(await cardsOfOrder(order)).toHaveLength(1);
      // The audit trail says who declared it dead, when and why.
      const events = await withDb(stack, async (db) => (await db.query(`SELECT type, actor, detail->>'reason' AS reason FROM order_events WHERE order_id = $1 AND type IN ('declared_dead', 'redriven') ORDER BY id`, [id])).rows);
      expect(events).toEqual([
        { type: 'declared_dead', actor: 'admin:alice', reason: 'partner ticket #7: request failed out_of_stock at 10:02' },
        { type: 'redriven', actor: 'admin:alice', reason: 'pull again' },
      ]);
    });

    it('async: 404s spread over PULL_REQUEST_SETTLE_MS after a business error on the re-create -> created again with the SAME ID (never believed)', async () => {
      // The creation never reaches the partner (an error page before anything is done); the re-create is refused for stock.
      await fault({ endpoint: 'pull_requests', mode: 'error_before_issue', status: 503, gift_card_codes: ['FAST-FREE'], times: 1 });
      const { id, requestId } = await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: 2200, mode: 'async' });
      await fault({ endpoint: 'pull_requests', mode: 'error_before_issue', status: 422, error_code: 'out_of_stock', request_ids: [requestId], times: 1 } as FaultSpecInput);
      const order = await waitForOrder(stack, id, terminal, 15_000);
      expect(order.status).toBe('completed');
      expect(order.attempts).toEqual([expect.objectContaining({ request_id: requestId, state: 'succeeded' })]);
      const gets = (await ledger()).requests.filter((r) => r.method === 'GET' && r.request_id === requestId && r.status === 404).map((r) => Date.parse(r.at));
      const creates = (await postsOf(requestId)).map((p) => ({ at: Date.parse(p.at), status: p.status }));
      const refused = creates.find((c) => c.status === 422)!;
      const after = creates.find((c) => c.at > refused.at)!;
      // The creation after the refusal waited for 404s over the whole settle window.
      expect(after.at - Math.min(...gets.filter((g) => g > refused.at))).toBeGreaterThanOrEqual(stack.config.PULL_REQUEST_SETTLE_MS);
      expect(await cardsOfOrder(order)).toHaveLength(1);
    });
  });

  describe('"come back later" in any shape, and Retry-After', () => {
    it('429 with Retry-After (seconds, or an HTTP date): the same request ID is not sent again before it', async () => {
      for (const format of ['seconds', 'http_date'] as const) {
        await fault({ endpoint: 'cards', mode: 'rate_limited', retry_after_s: 2, retry_after_format: format, gift_card_codes: ['FAST-FREE'], times: 1 } as FaultSpecInput);
        const { id, requestId } = await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: format === 'seconds' ? 3100 : 3200 });
        const order = await waitForOrder(stack, id, terminal, 15_000);
        expect(order.status).toBe('completed');
        const posts = await postsOf(requestId);
        expect(posts.map((p) => p.status)).toEqual([429, 200]);
        // At least the Retry-After (the usual first retry here is SYNC_RETRY_FIRST_DELAY_MS, 400 ms); an HTTP date has 1 s precision.
        expect(Date.parse(posts[1]!.at) - Date.parse(posts[0]!.at)).toBeGreaterThanOrEqual(format === 'seconds' ? 2_000 : 1_000);
      }
    });

    it('a poll answered 429 with Retry-After waits for it too', async () => {
      await fault({ endpoint: 'pull_request_status', mode: 'rate_limited', retry_after_s: 2, gift_card_codes: ['FAST-FREE'], times: 1 } as FaultSpecInput);
      const { id, requestId } = await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: 3300, mode: 'async' });
      expect((await waitForOrder(stack, id, terminal, 15_000)).status).toBe('completed');
      const gets = (await ledger()).requests.filter((r) => r.method === 'GET' && r.request_id === requestId);
      const limited = gets.findIndex((g) => g.status === 429);
      expect(limited).toBeGreaterThanOrEqual(0);
      expect(Date.parse(gets[limited + 1]!.at) - Date.parse(gets[limited]!.at)).toBeGreaterThanOrEqual(2_000);
    });

    it('come back later as 202 {"status": "processing"}: an unknown outcome, the same request ID until the card', async () => {
      await fault({ endpoint: 'cards', mode: 'accepted_202', gift_card_codes: ['FAST-FREE'] } as FaultSpecInput);
      await fault({ endpoint: 'cards', mode: 'come_back_later', latency_ms: 2_000, retry_after_s: 0, gift_card_codes: ['FAST-FREE'], times: 1 } as FaultSpecInput);
      const { id, requestId } = await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: 3500 });
      const order = await waitForOrder(stack, id, terminal, 15_000);
      expect(order.status).toBe('completed');
      expect((await postsOf(requestId)).map((p) => p.status)).toContain(202);
      expect(order.attempts.map((a: { request_id: string }) => a.request_id)).toEqual([requestId]);
      expect(await cardsOfOrder(order)).toHaveLength(1);
    });
  });
});
