import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { createPgPool } from '@cardpull/db';
import { createTestDatabase, testPool, type TestDatabase } from '@cardpull/testing';
import { IntakeRepository, StepsRepository, TransitionsRepository, requestHash } from '@cardpull/orders';

/**
 * Issue 22 (WAL per card): taking a step's lease is a HOT update of the order. It changes no column an index
 * reads (the status stays pending until the partner's first answer; updated_at is left alone), and the
 * table's fillfactor leaves room on the row's page, so Postgres writes one small heap record and no index
 * entry, where a status change wrote a new row version and an entry in five of the table's six indexes.
 * Measured by Postgres itself: the table's count of HOT updates against all its updates.
 */
describe('taking a lease: a HOT update of the order (no index entry); the first answer moves the order on, with its timeline entry', () => {
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

  const counts = async () => {
    await admin.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await admin.query<{ relname: string; upd: string; hot: string }>(
      "SELECT relname, n_tup_upd AS upd, n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE relname IN ('orders', 'attempts')",
    );
    const of = (t: string) => rows.find((r) => r.relname === t)!;
    return { updates: Number(of('orders').upd), hot: Number(of('orders').hot), attemptUpdates: Number(of('attempts').upd), attemptHot: Number(of('attempts').hot) };
  };

  /** A new sync order (pending, its attempt created), through the intake's own statement. */
  const newSyncOrder = async (orders: IntakeRepository, key: string): Promise<{ id: string; requestId: string }> => {
    const body = { gift_card_code: 'FAST-FREE', amount: 500, mode: 'sync' as const };
    const created = await orders.create({ client: 'shop', idempotencyKey: `${key}-${randomUUID()}`, requestHash: requestHash(body), mode: 'sync', giftCardCode: 'FAST-FREE', amount: 500, metadata: null, callbackUrl: null, callbackSecrets: false });
    if (created.kind !== 'created') throw new Error('expected a new order');
    return { id: created.order.id, requestId: created.requestId };
  };

  it.each([
    ['named statements', true],
    ['server-side functions (behind a transaction pooler)', false],
  ])('through %s: every take of a new order is a HOT update of the order and of its attempt (created -> sent), and the order stays pending', async (_label, preparedStatements) => {
    // One connection: the statistics of the takes are that backend's, flushed on demand below.
    const pool = createPgPool(db.url, 1, { preparedStatements });
    // HOT also needs room on the row's page. The migration's fillfactor leaves room for a take and a
    // completion, but whether a full page is pruned in time depends on what else runs (a loaded machine's
    // autovacuum holds back what pruning may remove: 14 of 20 HOT in one CI run). What this test proves is
    // the statement's part, that the take changes no indexed column: so every page here has room to spare.
    // The attempt's take (created -> sent) is HOT too: the reconciler's index reads no value the take changes
    // (not the state: migrations 20261130120000_lighter_card_write and 20261130150000_hot_card_store).
    await admin.query('ALTER TABLE orders SET (fillfactor = 10)');
    await admin.query('ALTER TABLE attempts SET (fillfactor = 10)');
    try {
      const orders = new IntakeRepository(pool);
      const steps = new StepsRepository(pool);
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) ids.push((await newSyncOrder(orders, 'hot')).id);
      await pool.query('SELECT pg_stat_force_next_flush()');
      await pool.query('SELECT 1');
      const before = await waitForCounts(counts, () => true);

      const taken: unknown[] = [];
      for (const id of ids) {
        const t = await steps.take(id, 1, 'w/1', 30_000);
        taken.push(t && t !== 'held' ? [t.leased, t.order.status, t.attempt.state] : t);
      }
      await pool.query('SELECT pg_stat_force_next_flush()');
      await pool.query('SELECT 1');
      const after = await waitForCounts(counts, (c) => c.updates >= before.updates + ids.length && c.attemptUpdates >= before.attemptUpdates + ids.length);

      expect({ updates: after.updates - before.updates, hot: after.hot - before.hot }).toEqual({ updates: ids.length, hot: ids.length });
      expect({ updates: after.attemptUpdates - before.attemptUpdates, hot: after.attemptHot - before.attemptHot }).toEqual({ updates: ids.length, hot: ids.length });
      expect(taken).toEqual(ids.map(() => [true, 'pending', 'sent']));
    } finally {
      await pool.end();
    }
  });

  it('a take whose check says no (a partner pause set while it waited for its connection) changes nothing and answers held, whether the check answers at once or later; a yes takes the lease', async () => {
    const pool = createPgPool(db.url, 1, { preparedStatements: true });
    try {
      const orders = new IntakeRepository(pool);
      const steps = new StepsRepository(pool);
      const { id } = await newSyncOrder(orders, 'ready');
      const row = async () => (await admin.query('SELECT o.lease_owner, a.state, a.call_count FROM orders o JOIN attempts a ON a.order_id = o.id WHERE o.id = $1', [id])).rows[0];
      const untouched = { lease_owner: null, state: 'created', call_count: 0 };
      // No, at once and after a round trip: the statement is not sent, the call is not recorded as sent.
      expect(await steps.take(id, 1, 'w/no-now', 30_000, () => false)).toBe('held');
      expect(await row()).toEqual(untouched);
      expect(await steps.take(id, 1, 'w/no-later', 30_000, () => Promise.resolve(false))).toBe('held');
      expect(await row()).toEqual(untouched);
      // Yes after a round trip takes the lease; a yes at once (the last take) runs its statement as well.
      const taken = await steps.take(id, 1, 'w/yes-later', 30_000, () => Promise.resolve(true));
      expect(taken !== 'held' && taken && [taken.leased, taken.attempt.state]).toEqual([true, 'sent']);
      expect(await row()).toEqual({ lease_owner: 'w/yes-later', state: 'sent', call_count: 1 });
      // Its connection went back to the pool each time (one connection): a take after them still runs, and
      // finds the lease held by the run before it.
      const after = await steps.take(id, 1, 'w/yes-now', 30_000, () => true);
      expect(after !== 'held' && after && [after.leased, after.order.leaseOwner]).toEqual([false, 'w/yes-later']);
    } finally {
      await pool.end();
    }
  });

  it.each([
    ['named statements', true],
    ['server-side functions (behind a transaction pooler)', false],
  ])("through %s: a taken order's first answer moves it pending -> in_progress with its timeline entry, even from a transition that names neither", async (_label, preparedStatements) => {
    const pool = createPgPool(db.url, 2, { preparedStatements });
    try {
      const orders = new IntakeRepository(pool);
      const steps = new StepsRepository(pool);
      const transitions = new TransitionsRepository(pool);
      const { id, requestId } = await newSyncOrder(orders, 'first');
      await steps.take(id, 1, 'worker:1-a/b', 30_000);
      // The partner's answer settled nothing (an unknown outcome, say); the transition names no status and no entry.
      const first = await transitions.transition({ orderId: id, stepSeq: 1, actor: 'worker:1-a', next: { step: 'sync_call', delayMs: 60_000 }, attempt: { requestId, state: 'unknown' } });
      // Another like it: the status does not move, so no entry.
      const again = await transitions.transition({ orderId: id, stepSeq: first.stepSeq, actor: 'worker:1-a', next: { step: 'sync_call', delayMs: 60_000 } });
      const { rows } = await admin.query('SELECT type, from_status, to_status, request_id = $2 AS same_id, actor FROM order_events WHERE order_id = $1 ORDER BY id', [id, requestId]);
      expect([first.status, again.status]).toEqual(['in_progress', 'in_progress']);
      expect(rows).toEqual([
        { type: 'created', from_status: null, to_status: 'pending', same_id: true, actor: 'api:shop' },
        { type: 'in_progress', from_status: 'pending', to_status: 'in_progress', same_id: true, actor: 'worker:1-a' },
      ]);
    } finally {
      await pool.end();
    }
  });
});

/** Postgres's table statistics once `ready` holds (a backend flushes its counts when it goes idle). */
async function waitForCounts<T>(read: () => Promise<T>, ready: (c: T) => boolean): Promise<T> {
  const until = Date.now() + 10_000;
  for (;;) {
    const c = await read();
    if (ready(c) || Date.now() > until) return c;
    await new Promise((r) => setTimeout(r, 50));
  }
}
