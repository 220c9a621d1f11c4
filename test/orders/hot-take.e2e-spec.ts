import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { createPgPool } from '@cardpull/db';
import { createTestDatabase, testPool, type TestDatabase } from '@cardpull/testing';
import { OrdersRepository, StepsRepository, requestHash } from '@cardpull/orders';

/**
 * Issue 22 (WAL per card): taking a step's lease is a HOT update of the order. It changes no column an index
 * reads (the status stays pending until the partner's first answer; updated_at is left alone), and the
 * table's fillfactor leaves room on the row's page, so Postgres writes one small heap record and no index
 * entry, where a status change wrote a new row version and an entry in five of the table's six indexes.
 * Measured by Postgres itself: the table's count of HOT updates against all its updates.
 */
describe('taking a lease is a HOT update of the order (no index entry)', () => {
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
    const { rows } = await admin.query<{ upd: string; hot: string }>("SELECT n_tup_upd AS upd, n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE relname = 'orders'");
    return { updates: Number(rows[0]!.upd), hot: Number(rows[0]!.hot) };
  };

  it.each([
    ['named statements', true],
    ['server-side functions (behind a transaction pooler)', false],
  ])('through %s: every take of a new order is a HOT update, and the order stays pending', async (_label, preparedStatements) => {
    // One connection: the statistics of the takes are that backend's, flushed on demand below.
    const pool = createPgPool(db.url, 1, { preparedStatements });
    try {
      const orders = new OrdersRepository(pool);
      const steps = new StepsRepository(pool);
      const body = { gift_card_code: 'FAST-FREE', amount: 500, mode: 'sync' as const };
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) {
        const created = await orders.create({ client: 'shop', idempotencyKey: `hot-${randomUUID()}`, requestHash: requestHash(body), mode: 'sync', giftCardCode: 'FAST-FREE', amount: 500, metadata: null, callbackUrl: null, callbackSecrets: false });
        if (created.kind !== 'created') throw new Error('expected a new order');
        ids.push(created.order.id);
      }
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
      const after = await waitForCounts(counts, (c) => c.updates >= before.updates + ids.length);

      expect({ updates: after.updates - before.updates, hot: after.hot - before.hot }).toEqual({ updates: ids.length, hot: ids.length });
      expect(taken).toEqual(ids.map(() => [true, 'pending', 'sent']));
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
