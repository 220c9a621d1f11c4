import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { waitFor, expectInvariants } from '@cardpull/testing';
import { createOrder, insertOrder, useStack, waitForOrder } from '../support/stack';

/**
 * Invariant 3: a received card is stored in the same transaction that marks its order completed, and a card
 * can be stored only once. To tell "one transaction" from "two in a row", Postgres is made to refuse one
 * half (a test-only trigger on this suite's own database, as a crash or a failover between two statements
 * would): refusing the completion must keep the card out (no card on an order that is not completed), and
 * refusing the card must keep the order from completing (no completed order whose card is lost: once
 * completed, nothing would store it any more). Once Postgres accepts again, the order completes with the card
 * the partner issued the first time, under the same request ID.
 */
describe('invariant 3: a card is stored with its order’s completion, or not at all, and only once', () => {
  let pg: Client;
  // A wide unknown-outcome window: the refused completions must not end the order in needs_attention.
  const stack = useStack({
    env: { UNKNOWN_OUTCOME_WINDOW_MS: '60000' },
    beforeClose: async (s) => {
      await pg?.end();
      await expectInvariants(s);
    },
  });
  beforeAll(async () => {
    pg = new Client({ connectionString: stack.db.url });
    await pg.connect();
  });

  const cardsOfOrder = async (orderId: string) => (await pg.query('SELECT partner_card_id, request_id FROM cards WHERE order_id = $1', [orderId])).rows;
  /** The worker's "order step failed; retrying" lines for this order (our own failures: BullMQ retries the job). */
  const stepFailures = (orderId: string) => stack.logs.json().filter((l) => l.orderId === orderId && /order step failed/.test(String(l.msg)));

  it.each([
    ['the completion', `BEFORE UPDATE OF status ON orders FOR EACH ROW WHEN (NEW.status = 'completed')`, 'orders'],
    ['the card', 'BEFORE INSERT ON cards FOR EACH ROW', 'cards'],
  ])('while Postgres refuses %s, neither the card nor the completion is stored; then the first call’s card is stored once', async (what, when, table) => {
    await pg.query(`
      CREATE OR REPLACE FUNCTION test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'test: % refused', TG_TABLE_NAME; END $$;
      CREATE TRIGGER test_refuse ${when} EXECUTE FUNCTION test_refuse();`);
    let refusing = true;
    try {
      const { id, requestId } = await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: what === 'the card' ? 3101 : 3100 });
      // The partner issues the card; the step that would store it fails, is taken over (interrupted, same
      // request ID), asks again, gets the same card (a replay), fails again.
      await waitFor('two refused completions, each after a call with the request ID', async () => {
        const ledger = await stack.sim.control.ledger();
        const posts = ledger.requests.filter((r) => r.method === 'POST' && r.request_id === requestId);
        return posts.length >= 2 && stepFailures(id).length >= 2 && ledger.cards.some((c) => c.request_id === requestId);
      }, 20_000);
      expect(stepFailures(id).map((l) => (l.err as { message?: string }).message)).toEqual(expect.arrayContaining([expect.stringContaining(`${table} refused`)]));
      // Nothing of the completion is visible: no card stored, the order not completed, no other request ID.
      expect(await cardsOfOrder(id)).toEqual([]);
      const during = (await stack.call('GET', `/v1/orders/${id}`)).body.order;
      expect(during.status).not.toBe('completed');
      expect(during.card).toBeNull();
      expect(during.attempts.map((a: any) => a.request_id)).toEqual([requestId]);

      await pg.query(`DROP TRIGGER test_refuse ON ${table}`);
      refusing = false;
      const done = await waitForOrder(stack, id);
      const issued = (await stack.sim.control.ledger()).cards.filter((c) => c.request_id === requestId);
      expect(issued).toHaveLength(1);
      expect(done.status).toBe('completed');
      expect(done.card).toMatchObject({ id: issued[0]!.id, code: issued[0]!.code });
      expect(done.attempts.map((a: any) => a.request_id)).toEqual([requestId]);
      expect(await cardsOfOrder(id)).toEqual([{ partner_card_id: issued[0]!.id, request_id: requestId }]);
    } finally {
      if (refusing) await pg.query(`DROP TRIGGER IF EXISTS test_refuse ON ${table}`);
    }
  });

  it('the schema keeps every card the partner issued once (unique partner card id), gives an order one card of its own, and refuses a completed order without it', async () => {
    const completed = await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: 3200 });
    // An order that ends without a card (the partner refuses the amount): somewhere a second card could go.
    const failed = await insertOrder(stack, { giftCardCode: 'ACME-BOOKS-FIXED', amount: 1234 });
    await waitForOrder(stack, completed.id);
    expect((await waitForOrder(stack, failed.id)).status).toBe('failed');
    const [stored] = await cardsOfOrder(completed.id);
    const insertCard = (o: { orderId: string; requestId: string; partnerCardId: string; role?: string }) =>
      pg.query(
        `INSERT INTO cards (id, order_id, request_id, partner_card_id, key_id, code_enc, amount, gift_card_code, role)
         VALUES ($1, $2, $3, $4, 'k', '\\x00', 100, 'FAST-FREE', $5) RETURNING id`,
        [randomUUID(), o.orderId, o.requestId, o.partnerCardId, o.role ?? 'surplus'],
      );
    /** The constraint a statement broke, or 'stored'; always rolled back. */
    const attempt = async (statement: () => Promise<unknown>) => {
      await pg.query('BEGIN');
      try {
        await statement();
        return 'stored';
      } catch (error) {
        const e = error as { code?: string; constraint?: string };
        return e.code === '23505' ? `unique ${e.constraint}` : e.code === '23514' ? `check ${e.constraint}` : `error ${e.code}`;
      } finally {
        await pg.query('ROLLBACK');
      }
    };
    const newAttempt = (orderId: string) =>
      pg.query(`INSERT INTO attempts (request_id, order_id, seq, kind, state, created_at, updated_at) VALUES ($1, $2, 2, 'sync', 'succeeded', now(), now()) RETURNING request_id`, [randomUUID(), orderId]);
    expect({
      // A card the partner billed is never refused: a second card for an order, under another request ID or the same one.
      secondCardForTheOrder: await attempt(async () => insertCard({ orderId: completed.id, requestId: (await newAttempt(completed.id)).rows[0].request_id, partnerCardId: `other-${randomUUID()}` })),
      secondCardForTheSameRequestId: await attempt(() => insertCard({ orderId: completed.id, requestId: completed.requestId, partnerCardId: `other-${randomUUID()}` })),
      samePartnerCardElsewhere: await attempt(() => insertCard({ orderId: failed.id, requestId: failed.requestId, partnerCardId: stored.partner_card_id })),
      oneCardForTwoOrders: await attempt(async () => {
        await pg.query(`UPDATE orders SET status = 'completed', card_id = (SELECT card_id FROM orders WHERE id = $2) WHERE id = $1`, [failed.id, completed.id]);
      }),
      completedWithoutItsCard: await attempt(() => pg.query(`UPDATE orders SET status = 'completed' WHERE id = $1`, [failed.id])),
      aCardOnAnOrderNotCompleted: await attempt(async () => {
        const { rows } = await insertCard({ orderId: failed.id, requestId: failed.requestId, partnerCardId: `other-${randomUUID()}`, role: 'order' });
        await pg.query(`UPDATE orders SET card_id = $2 WHERE id = $1`, [failed.id, rows[0].id]);
      }),
      // The control: completing with a fresh card goes through (so the refusals are the constraints).
      freshCard: await attempt(async () => {
        const { rows } = await insertCard({ orderId: failed.id, requestId: failed.requestId, partnerCardId: `other-${randomUUID()}`, role: 'order' });
        await pg.query(`UPDATE orders SET status = 'completed', card_id = $2 WHERE id = $1`, [failed.id, rows[0].id]);
      }),
    }).toEqual({
      secondCardForTheOrder: 'stored',
      secondCardForTheSameRequestId: 'stored',
      samePartnerCardElsewhere: expect.stringMatching(/^unique .*partner_card_id/),
      oneCardForTwoOrders: expect.stringMatching(/^unique orders_card_id/),
      completedWithoutItsCard: 'check orders_card_iff_completed',
      aCardOnAnOrderNotCompleted: 'check orders_card_iff_completed',
      freshCard: 'stored',
    });
  });
});
