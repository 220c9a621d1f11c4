import { Client } from 'pg';
import { expectInvariants, secretsIn } from '@cardpull/testing';
import { createOrder, insertOrder, useStack, waitForOrder } from '../support/stack';

/** ARCHITECTURE.md "Partner calls and their classification", each row through the whole service (sync pulls). */
describe('classification of sync pull answers', () => {
  // A first-retry delay well apart from the interval, so the two are told apart even on a loaded machine;
  // a window that leaves a hang (3 s at the partner, then "come back later" until it ends) room to finish.
  const stack = useStack({
    env: { UNKNOWN_OUTCOME_WINDOW_MS: '6000', SYNC_RETRY_FIRST_DELAY_MS: '1200' },
    simEnv: { SIM_MODE: 'staging' },
    beforeClose: async (s) => {
      await expectInvariants(s);
      expect(secretsIn(s.logs.text, await s.sim.control.ledger())).toEqual([]);
    },
  });
  afterEach(() => stack.sim.control.clearFaults());

  const requestsFor = async (requestId: string) => (await stack.sim.control.ledger()).requests.filter((r) => r.request_id === requestId && r.method === 'POST');

  describe('200 with card -> stored and order completed in one transaction (invariant 3)', () => {
    it('completes with the card, encrypted at rest, stored by the statement that completed the order', async () => {
      const { id, requestId } = await createOrder(stack, { gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000 });
      const order = await waitForOrder(stack, id);
      expect(order).toMatchObject({ status: 'completed', error: null });
      const issued = (await stack.sim.control.ledger()).cards.filter((c) => c.request_id === requestId);
      expect(issued).toHaveLength(1);
      expect(order.card).toMatchObject({ id: issued[0]!.id, code: issued[0]!.code, pin_code: issued[0]!.pin_code, amount: 1000 });
      const pg = new Client({ connectionString: stack.db.url });
      await pg.connect();
      const { rows } = await pg.query(
        'SELECT c.created_at = o.completed_at AS same_tx, c.code_enc, c.key_id FROM cards c JOIN orders o ON o.id = c.order_id WHERE o.id = $1',
        [id],
      );
      await pg.end();
      expect(rows[0].same_tx).toBe(true); // now() is the transaction's start time: same value, same transaction
      expect(rows[0].key_id).toBe(stack.config.CARD_ENCRYPTION_KEYS[0]!.id);
      expect(Buffer.from(rows[0].code_enc).includes(Buffer.from(issued[0]!.code))).toBe(false);
    });
  });

  describe.each([
    ['gift_card_not_found', { giftCardCode: 'GONE-FROM-PARTNER', amount: 1000 }],
    ['invalid_amount', { giftCardCode: 'ACME-BOOKS-FIXED', amount: 1234 }],
  ])('%s -> order failed with the partner’s code and message', (code, input) => {
    it('fails the order, with no retry and no new request ID', async () => {
      const { id, requestId } = await insertOrder(stack, input);
      const order = await waitForOrder(stack, id);
      expect(order.status).toBe('failed');
      expect(order.error).toEqual({ code, message: expect.stringMatching(code === 'invalid_amount' ? /1000, 2500, 5000, 10000/ : /GONE-FROM-PARTNER/) });
      expect(order.attempts).toEqual([expect.objectContaining({ request_id: requestId, state: 'failed_definitive', partner_status: code })]);
      expect(await requestsFor(requestId)).toHaveLength(1);
    });
  });

  describe('timeout, 5xx, 429, unknown code, come back later -> unknown: retry the SAME request ID (invariant 2)', () => {
    it.each([
      ['a 5xx after issuing', { mode: 'error_after_issue', status: 502 }],
      ['a 5xx before issuing', { mode: 'error_before_issue', status: 503 }],
      ['a 429', { mode: 'error_before_issue', status: 429 }],
      ['an unknown status', { mode: 'error_before_issue', status: 418 }],
      ['a connection reset', { mode: 'reset' }],
      ['come back later', { mode: 'come_back_later', latency_ms: 300 }],
      ['a hang past the timeout', { mode: 'hang', latency_ms: 3000 }],
    ])('%s', async (_name, fault) => {
      await stack.sim.control.addFault({ endpoint: 'cards', gift_card_codes: ['NOVA-GAMES-FREE'], times: 1, ...fault } as never);
      const { id, requestId } = await createOrder(stack, { gift_card_code: 'NOVA-GAMES-FREE', amount: 1500 });
      const order = await waitForOrder(stack, id);
      expect(order.status).toBe('completed');
      expect(order.attempts.map((a: any) => a.request_id)).toEqual([requestId]);
      const calls = await requestsFor(requestId);
      expect(calls.length).toBeGreaterThanOrEqual(2);
      const issued = (await stack.sim.control.ledger()).cards.filter((c) => c.request_id === requestId);
      expect(issued).toHaveLength(1);
      expect(order.card.id).toBe(issued[0]!.id);
    });

    it('a timeout waits SYNC_RETRY_FIRST_DELAY_MS before the same-ID re-send, a 503 then SYNC_RETRY_INTERVAL_MS (retry-timings.e2e-spec.ts: every answer)', async () => {
      // The first send hangs past the timeout (the card is issued meanwhile), the re-send is refused 503, the third gets the card.
      await stack.sim.control.addFault({ endpoint: 'cards', mode: 'hang', latency_ms: 3000, gift_card_codes: ['NOVA-GAMES-FREE'], times: 1 });
      await stack.sim.control.addFault({ endpoint: 'cards', mode: 'error_before_issue', status: 503, gift_card_codes: ['NOVA-GAMES-FREE'], times: 1 });
      const { id, requestId } = await createOrder(stack, { gift_card_code: 'NOVA-GAMES-FREE', amount: 1600 });
      await waitForOrder(stack, id);
      const at = (await requestsFor(requestId)).map((r) => Date.parse(r.at));
      expect(at).toHaveLength(3);
      expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(stack.config.SYNC_RETRY_FIRST_DELAY_MS - 50);
      expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(stack.config.SYNC_RETRY_INTERVAL_MS - 50);
      expect(at[2]! - at[1]!).toBeLessThan(stack.config.SYNC_RETRY_FIRST_DELAY_MS);
    });
  });

  describe('unknown outcome past UNKNOWN_OUTCOME_WINDOW_MS -> needs_attention, never a new request ID', () => {
    it('a brand whose pulls never work in staging ends in needs_attention with the reason', async () => {
      const { id, requestId } = await createOrder(stack, { gift_card_code: 'STG-BROKEN', amount: 1000 });
      const order = await waitForOrder(stack, id, undefined, 15_000);
      expect(order.status).toBe('needs_attention');
      expect(order.error.code).toBe('outcome_unknown');
      expect(order.error.message).toContain(requestId);
      expect(order.attempts.map((a: any) => a.request_id)).toEqual([requestId]);
      const ids = new Set((await stack.sim.control.ledger()).requests.filter((r) => r.path === '/partners/v1/cards' && r.method === 'POST').map((r) => r.request_id));
      expect([...ids].filter((x) => x === requestId)).toHaveLength(1);
      expect((await requestsFor(requestId)).length).toBeGreaterThanOrEqual(2);
    });
  });
});
