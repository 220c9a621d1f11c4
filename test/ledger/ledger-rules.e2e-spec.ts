import type { Pool } from 'pg';
import { withTransaction } from '@cardpull/db';
import { LedgerRepository, type LedgerLeg } from '@cardpull/orders';
import { createTestDatabase, testPool, type TestDatabase } from '@cardpull/testing';

const ACCOUNT = 'staging';
const leg = (account: LedgerLeg['account'], amount: number, currency = 'USD'): LedgerLeg => ({ partnerAccount: ACCOUNT, account, amount, currency });

/**
 * Issue 24, item 2: the ledger's two rules are the database's, not the service's. Postgres refuses to commit
 * a movement whose entries do not sum to zero (per currency), that has one side only or whose entries name
 * no ledger transaction, and refuses any change to what was written: UPDATE, DELETE and TRUNCATE, on entries and on transactions.
 */
describe('the ledger: balanced and append-only, enforced by Postgres', () => {
  let db: TestDatabase;
  let pool: Pool;
  let ledger: LedgerRepository;
  beforeAll(async () => {
    db = await createTestDatabase();
    pool = testPool(db.url, 2);
    ledger = new LedgerRepository(pool);
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  const count = async () => Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM ledger_entries')).rows[0]!.n);

  it('a balanced movement commits, and the balances read it', async () => {
    await ledger.post({ kind: 'top_up', actor: 'admin:alice', reason: 'wire 2026-11-28', legs: [leg('float', 50_000), leg('adjustments', -50_000)] });
    await ledger.post({ kind: 'accepted', orderId: '00000000-0000-7000-8000-000000000001', actor: 'api:shop', legs: [leg('reserved', 2_500), leg('float', -2_500)] });
    expect(await ledger.balances(ACCOUNT)).toEqual([
      { account: 'float', currency: 'USD', balance: 47_500 },
      { account: 'reserved', currency: 'USD', balance: 2_500 },
      { account: 'adjustments', currency: 'USD', balance: -50_000 },
    ]);
  });

  it('an unbalanced movement is refused at commit, and nothing of it stays', async () => {
    const before = await count();
    await expect(ledger.post({ kind: 'card_stored', actor: 'worker:1', legs: [leg('spent', 2_400), leg('reserved', -2_500)] })).rejects.toMatchObject({
      code: '23514',
      message: expect.stringMatching(/does not balance: its USD entries sum to -100/),
    });
    expect(await count()).toBe(before);
  });

  it('balance is per currency: +100 USD and -100 EUR do not balance', async () => {
    await expect(ledger.post({ kind: 'adjustment', actor: 'admin:alice', reason: 'fx', legs: [leg('float', 100, 'USD'), leg('adjustments', -100, 'EUR')] })).rejects.toMatchObject({ code: '23514' });
  });

  it('a movement with one side only is refused', async () => {
    await expect(ledger.post({ kind: 'adjustment', actor: 'admin:alice', reason: 'one leg', legs: [leg('float', 100)] })).rejects.toMatchObject({
      code: '23514',
      message: expect.stringMatching(/has 1 entries: a movement of money has two sides at least/),
    });
  });

  it('the check is at commit: legs written by several statements of one transaction may balance only together', async () => {
    const id = await withTransaction(pool, async (tx) => {
      const txId = await ledger.post({ kind: 'surplus', actor: 'worker:1', legs: [leg('surplus', 1_000), leg('float', -400)] }, tx);
      // Unbalanced here; the second statement completes it before the commit.
      await tx.query(`INSERT INTO ledger_entries (transaction_id, partner_account, account, amount, currency) VALUES ($1, $2, 'float', -600, 'USD')`, [txId, ACCOUNT]);
      return txId;
    });
    expect((await pool.query('SELECT sum(amount)::int AS s FROM ledger_entries WHERE transaction_id = $1', [id])).rows[0]).toEqual({ s: 0 });
  });

  it('an entry added later to a committed movement is checked in full: one that unbalances it is refused at commit', async () => {
    const txId = await ledger.post({ kind: 'adjustment', actor: 'admin:alice', reason: 'base', legs: [leg('float', 700), leg('adjustments', -700)] });
    const before = await count();
    await expect(
      pool.query(`INSERT INTO ledger_entries (transaction_id, partner_account, account, amount, currency) VALUES ($1, $2, 'float', 5, 'USD')`, [txId, ACCOUNT]),
    ).rejects.toMatchObject({ code: '23514', message: expect.stringMatching(/does not balance: its USD entries sum to 5/) });
    expect(await count()).toBe(before);
  });

  it('entries must name a ledger transaction that exists: balanced legs of a missing one are refused at commit', async () => {
    // The balance check keeps this rule (the foreign key it replaces locked the transaction's row per leg).
    const before = await count();
    const missing = Number((await pool.query<{ id: string }>('SELECT coalesce(max(id), 0) + 1000 AS id FROM ledger_transactions')).rows[0]!.id);
    await expect(
      withTransaction(pool, async (tx) => {
        await tx.query(
          `INSERT INTO ledger_entries (transaction_id, partner_account, account, amount, currency) VALUES ($1, $2, 'float', 300, 'USD'), ($1, $2, 'adjustments', -300, 'USD')`,
          [missing, ACCOUNT],
        );
      }),
    ).rejects.toMatchObject({ code: '23503', message: expect.stringMatching(new RegExp(`names ledger transaction ${missing}, which does not exist`)) });
    expect(await count()).toBe(before);
  });

  it.each([
    ['UPDATE an entry', 'UPDATE ledger_entries SET amount = amount + 1'],
    ['DELETE an entry', 'DELETE FROM ledger_entries'],
    ['TRUNCATE the entries', 'TRUNCATE ledger_entries CASCADE'],
    ['UPDATE a transaction', "UPDATE ledger_transactions SET actor = 'someone else'"],
    ['DELETE a transaction', 'DELETE FROM ledger_transactions'],
    ['TRUNCATE the transactions', 'TRUNCATE ledger_transactions CASCADE'],
  ])('%s: refused (append-only)', async (_what, sql) => {
    const before = await count();
    await expect(pool.query(sql)).rejects.toMatchObject({ code: '23001', message: expect.stringMatching(/the ledger is append-only/) });
    expect(await count()).toBe(before);
  });
});
