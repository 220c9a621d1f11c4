import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { createPgPool } from '@cardpull/db';
import { createTestDatabase, testPool, type TestDatabase } from '@cardpull/testing';
import { IntakeRepository, StepsRepository, TransitionsRepository, requestHash, type StoredCard } from '@cardpull/orders';
import { mayYieldCardSql } from '../../libs/orders/src/model/attempt-facts';

/**
 * Issue 22 (WAL per card): storing the card of a request ID a step drives (sent -> succeeded) is a HOT update of
 * its attempt, as its take (created -> sent) is: the reconciler's index holds only the IDs in doubt, the
 * unattended ones (open while their order has no next step) and the ones declared dead, and such an ID is none
 * of them (migration 20261130150000_hot_card_store). Before, the index read `open`, which the store turns false:
 * a new row version and an entry in each of the table's other two indexes, per card.
 *
 * The card that completes its order is also that completion's timeline entry (cards.completed_from, read through
 * the view order_timeline): no order_events row and index entry repeat it (migration 20261130160000_completion_on_card).
 *
 * The index must still hold every ID the reconciler asks about: an open ID whose order stops being driven,
 * however it stops (another ID's card completes it, it needs attention, an operator ends it), is marked by
 * the database's own trigger.
 */
describe("storing a driven request ID's card: a HOT update of its attempt, no timeline row of its own; the reconciler's index still holds every ID it asks about", () => {
  let db: TestDatabase;
  let admin: Pool;
  beforeAll(async () => {
    db = await createTestDatabase();
    admin = testPool(db.url, 1);
  });
  afterAll(async () => {
    await admin?.end();
    await db?.drop();
  });

  const body = { gift_card_code: 'FAST-FREE', amount: 500, mode: 'sync' as const };
  const newOrder = async (pool: Pool) => {
    const created = await new IntakeRepository(pool).create({ client: 'shop', idempotencyKey: `hot-store-${randomUUID()}`, requestHash: requestHash(body), mode: 'sync', giftCardCode: 'FAST-FREE', amount: 500, metadata: null, callbackUrl: null, callbackSecrets: false });
    if (created.kind !== 'created') throw new Error('expected a new order');
    return { id: created.order.id, requestId: created.requestId };
  };
  const card = (requestId: string): StoredCard => ({
    id: randomUUID(),
    requestId,
    partnerCardId: `card-${randomUUID()}`,
    keyId: 'k1',
    codeEnc: Buffer.from('sealed'),
    pinEnc: null,
    expireAt: new Date('2030-01-01T00:00:00Z'),
    amount: 500,
    giftCardCode: 'FAST-FREE',
    pdfEnc: null,
  });
  const attemptCounts = async () => {
    await admin.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await admin.query<{ upd: string; hot: string }>("SELECT n_tup_upd AS upd, n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE relname = 'attempts'");
    return { updates: Number(rows[0]!.upd), hot: Number(rows[0]!.hot) };
  };

  it.each([
    ['named statements', true],
    ['server-side functions (behind a transaction pooler)', false],
  ])('through %s: every card stored for a sent request ID is a HOT update of its attempt, and the order completes', async (_label, preparedStatements) => {
    // One connection: its statistics are flushed on demand below. Room on every page (as hot-take.e2e-spec.ts
    // explains): what this proves is that the store changes no value an index reads.
    const pool = createPgPool(db.url, 1, { preparedStatements });
    await admin.query('ALTER TABLE attempts SET (fillfactor = 10)');
    try {
      const steps = new StepsRepository(pool);
      const transitions = new TransitionsRepository(pool);
      const orders = [];
      for (let i = 0; i < 20; i++) orders.push(await newOrder(pool));
      for (const o of orders) await steps.take(o.id, 1, 'w/1', 30_000);
      await pool.query('SELECT pg_stat_force_next_flush()');
      await pool.query('SELECT 1');
      const before = await waitFor(attemptCounts, () => true);

      const stored = [];
      for (const o of orders) stored.push((await transitions.storeCard(o.id, card(o.requestId), null, { state: 'succeeded' }, 'w/1'))?.status);
      await pool.query('SELECT pg_stat_force_next_flush()');
      await pool.query('SELECT 1');
      const after = await waitFor(attemptCounts, (c) => c.updates >= before.updates + orders.length);

      expect(stored).toEqual(orders.map(() => 'completed'));
      expect({ updates: after.updates - before.updates, hot: after.hot - before.hot }).toEqual({ updates: orders.length, hot: orders.length });
    } finally {
      await pool.end();
    }
  });

  it("a card that completes its order is the completion's timeline entry: no order_events row repeats it, order_timeline shows it with who stored it and the status it completed from", async () => {
    const pool = createPgPool(db.url, 1, {});
    try {
      const o = await newOrder(pool);
      await new StepsRepository(pool).take(o.id, 1, 'worker:9-a/b', 30_000);
      const stored = await new TransitionsRepository(pool).storeCard(o.id, card(o.requestId), null, { state: 'succeeded' }, 'worker:9-a');
      const rows = await admin.query('SELECT type FROM order_events WHERE order_id = $1 ORDER BY id', [o.id]);
      const timeline = await admin.query(
        'SELECT id IS NULL AS from_card, type, from_status, to_status, request_id = $2 AS same_id, actor FROM order_timeline WHERE order_id = $1 ORDER BY at, id NULLS LAST',
        [o.id, o.requestId],
      );
      expect(stored?.status).toBe('completed');
      expect(rows.rows).toEqual([{ type: 'created' }]);
      expect(timeline.rows).toEqual([
        { from_card: false, type: 'created', from_status: null, to_status: 'pending', same_id: true, actor: 'api:shop' },
        { from_card: true, type: 'completed', from_status: 'pending', to_status: 'completed', same_id: true, actor: 'worker:9-a' },
      ]);
    } finally {
      await pool.end();
    }
  });

  it.each([
    ['named statements', true],
    ['server-side functions (behind a transaction pooler)', false],
  ])("through %s: two stores of one partner card at once: the second waits for the first, then finds it ('known'), one card stored, no error", async (_label, preparedStatements) => {
    // The store reads whether the card is stored as of its start (no ON CONFLICT): the second, which started
    // before the first committed, meets the unique index, and storeCard runs it again.
    const first = createPgPool(db.url, 1, { preparedStatements });
    const second = createPgPool(db.url, 1, { preparedStatements });
    try {
      const o = await newOrder(first);
      await new StepsRepository(first).take(o.id, 1, 'w/1', 30_000);
      const c = card(o.requestId);
      await first.query('BEGIN');
      const one = await new TransitionsRepository(first).storeCard(o.id, c, null, { state: 'succeeded' }, 'w/1');
      const other = new TransitionsRepository(second).storeCard(o.id, { ...c, id: randomUUID() }, null, { state: 'succeeded' }, 'w/2');
      // The second is waiting for the order's lock (held by the first's open transaction).
      await waitFor(
        async () => (await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND locktype IN ('transactionid', 'tuple')")).rows[0]!.n,
        (n) => n > 0,
      );
      await first.query('COMMIT');
      const cards = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM cards WHERE partner_card_id = $1', [c.partnerCardId]);
      expect([one?.role, (await other)?.role, cards.rows[0]!.n]).toEqual(['order', 'known', 1]);
    } finally {
      await first.end();
      await second.end();
    }
  });

  it("every ID the reconciler asks about is in its index: an open ID whose order stops being driven is marked unattended, whichever way it stops; a driven one is not", async () => {
    const pool = createPgPool(db.url, 2, {});
    try {
      const steps = new StepsRepository(pool);
      const transitions = new TransitionsRepository(pool);
      // Driven: sent, its step goes on (an answer awaited). Not a candidate, not in the index.
      const driven = await newOrder(pool);
      await steps.take(driven.id, 1, 'w/1', 30_000);
      // Needs attention with its ID sent and no next step: the reconciler's.
      const attention = await newOrder(pool);
      await steps.take(attention.id, 1, 'w/1', 30_000);
      await transitions.transition({ orderId: attention.id, stepSeq: 1, actor: 'w/1', status: 'needs_attention', next: null, error: { code: 'x', message: 'x' } });
      // Of unknown outcome while its step goes on: in doubt (the money-in-doubt figures), driven still.
      const doubt = await newOrder(pool);
      await steps.take(doubt.id, 1, 'w/1', 30_000);
      await transitions.transition({ orderId: doubt.id, stepSeq: 1, actor: 'w/1', next: { step: 'sync_call', delayMs: 60_000 }, attempt: { requestId: doubt.requestId, state: 'unknown' } });
      // Completed by the card of its first ID (declared dead by an operator, then read) while its second ID was
      // sent: no step asks about the second any more, the reconciler must.
      const twice = await newOrder(pool);
      await steps.take(twice.id, 1, 'w/1', 30_000);
      const minted = await transitions.transition({
        orderId: twice.id,
        stepSeq: 1,
        actor: 'ops:alice',
        next: { step: 'sync_call', delayMs: 0 },
        attempt: { requestId: twice.requestId, state: 'failed_definitive', declaredDeadBy: 'ops:alice' },
        newAttempt: { kind: 'sync', replaces: twice.requestId },
      });
      const second = minted.newRequestId!;
      const retaken = await steps.take(twice.id, minted.stepSeq, 'w/2', 30_000);
      const late = await transitions.storeCard(twice.id, card(twice.requestId), null, { state: 'succeeded' }, 'reconciler');

      const { rows } = await admin.query<{ request_id: string; state: string; in_doubt: boolean; unattended: boolean }>(
        'SELECT request_id, state, in_doubt, unattended FROM attempts WHERE request_id = ANY($1)',
        [[driven.requestId, attention.requestId, doubt.requestId, second]],
      );
      const of = (id: string) => rows.find((r) => r.request_id === id);
      expect([retaken && retaken !== 'held' ? retaken.leased : retaken, late?.status]).toEqual([true, 'completed']);
      expect({ driven: of(driven.requestId), attention: of(attention.requestId), doubt: of(doubt.requestId), second: of(second) }).toEqual({
        driven: { request_id: driven.requestId, state: 'sent', in_doubt: false, unattended: false },
        attention: { request_id: attention.requestId, state: 'sent', in_doubt: false, unattended: true },
        doubt: { request_id: doubt.requestId, state: 'unknown', in_doubt: true, unattended: false },
        second: { request_id: second, state: 'sent', in_doubt: false, unattended: true },
      });

      // No path of the service opens a settled ID again; were one to (by hand here), the database marks it too.
      await admin.query("UPDATE attempts SET state = 'sent' WHERE request_id = $1", [twice.requestId]);
      const reopened = await admin.query<{ unattended: boolean }>('SELECT unattended FROM attempts WHERE request_id = $1', [twice.requestId]);
      expect(reopened.rows).toEqual([{ unattended: true }]);
      await admin.query("UPDATE attempts SET state = 'succeeded' WHERE request_id = $1", [twice.requestId]);

      // The reconciler's page (through the index) and the same question asked of the whole table agree.
      const recheckMs = 3_600_000;
      const paged = (await steps.reconcileCandidates('', 1000, recheckMs)).map((c) => c.requestId).sort();
      const everyRow = await admin.query<{ request_id: string }>(
        `SELECT a.request_id FROM attempts a JOIN orders o ON o.id = a.order_id
          WHERE a.state <> 'created' AND ${mayYieldCardSql('a', '$1')} AND (a.state = 'failed_definitive' OR o.next_step IS NULL)
          ORDER BY a.request_id`,
        [recheckMs],
      );
      expect(paged).toEqual(everyRow.rows.map((r) => r.request_id).sort());
      expect(paged).toEqual(expect.arrayContaining([attention.requestId, second]));
      expect(paged).not.toContain(driven.requestId);
    } finally {
      await pool.end();
    }
  });
});

/** Postgres's table statistics once `ready` holds (a backend flushes its counts when it goes idle). */
async function waitFor<T>(read: () => Promise<T>, ready: (c: T) => boolean): Promise<T> {
  const until = Date.now() + 10_000;
  for (;;) {
    const c = await read();
    if (ready(c) || Date.now() > until) return c;
    await new Promise((r) => setTimeout(r, 50));
  }
}
