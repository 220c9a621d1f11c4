import { createPgPool } from '@cardpull/db';
import { startPgBouncer, type TestPgBouncer } from '@cardpull/testing';
import { useStack } from '../support/stack';
import { placeOrder, waitForAllEnded, withDb } from '../recovery/support/recovery';

/**
 * Issue 13, item 2: cardpull behind a real PgBouncer (Debian's 1.18) in transaction pooling mode. 1.18
 * does not keep protocol-level named prepared statements across transactions (1.21 is the first that
 * does), so DATABASE_PREPARED_STATEMENTS=false sends the hot statements unnamed; the periodic tasks claim
 * their runs with plain statements (periodic_task_runs), not session advisory locks, which a transaction
 * pooler cannot keep.
 */
describe('behind PgBouncer in transaction pooling mode', () => {
  let bouncer: TestPgBouncer;
  beforeAll(async () => {
    bouncer = await startPgBouncer({ poolSize: 10 });
  });
  const stack = useStack({ dbUrl: (url) => bouncer.url(url), env: { DATABASE_PREPARED_STATEMENTS: 'false' } });
  afterAll(() => bouncer?.stop());

  it('the pooler loses named prepared statements between transactions: why the setting exists', async () => {
    const errorsWith = async (preparedStatements: boolean) => {
      const pool = createPgPool(stack.env.DATABASE_URL!, 8, { preparedStatements });
      const errors: string[] = [];
      await Promise.all(
        Array.from({ length: 100 }, async (_, i) => {
          await pool.query({ name: 'cp-probe', text: 'SELECT $1::int AS n', values: [i] }).catch((e: Error) => errors.push(e.message));
        }),
      );
      await pool.end();
      return errors;
    };
    expect((await errorsWith(true)).some((m) => /prepared statement "cp-probe" (does not exist|already exists)/.test(m))).toBe(true);
    expect(await errorsWith(false)).toEqual([]);
  });

  it('sync and async orders complete end to end through the pooler, and the periodic tasks run through it', async () => {
    const placed = await Promise.all(Array.from({ length: 30 }, (_, i) => placeOrder(stack, i % 2 ? 'async' : 'sync')));
    const ended = await waitForAllEnded(stack, placed.map((o) => o.id), 60_000);
    expect(ended.filter((o) => o.status !== 'completed').map((o) => [o.id, o.status])).toEqual([]);
    // The sweeper's runs are claimed in Postgres, through the pooler.
    const { rows } = await withDb(stack, (db) => db.query<{ runs: string }>("SELECT runs FROM periodic_task_runs WHERE task = 'sweep'"));
    expect(Number(rows[0]?.runs ?? 0)).toBeGreaterThan(0);
    // And the traffic did go through it: the pooler counts the transactions it passed to this database.
    const mine = (await bouncer.stats()).find((s) => s.database === stack.db.name);
    expect(Number(mine?.total_xact_count ?? 0)).toBeGreaterThan(100);
  });
});
