import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { snapshot } from './invariants';
import { createTestDatabase, type TestDatabase } from './test-db';

/**
 * snapshot() reads what invariant 2 needs of an attempt (unknown_since, error_code, partner_status and an
 * operator's declared_dead_at) from a real, migrated database; declared_dead_at whether or not the
 * migration that adds it has landed.
 */
describe('snapshot(): the attempt columns invariant 2 reads', () => {
  let db: TestDatabase;
  let pg: Client;
  const orderId = randomUUID();

  beforeAll(async () => {
    db = await createTestDatabase();
    pg = new Client({ connectionString: db.url });
    await pg.connect();
    await pg.query(
      `WITH o AS (INSERT INTO orders (id, client, idempotency_key, request_hash, status, mode, gift_card_code, amount, error_code, error_message)
                  VALUES ($1, 'shop', 'k1', 'h', 'needs_attention', 'async', 'FAST-FREE', 900, 'outcome_unknown', 'no answer'))
       INSERT INTO attempts (request_id, order_id, seq, kind, state, partner_status, error_code, call_count, unknown_since)
       VALUES ('r1', $1, 1, 'async', 'failed_definitive', 'exists', 'used_without_pull_request', 2, '2026-01-01T10:00:00Z')`,
      [orderId],
    );
  });
  afterAll(async () => {
    await pg?.end();
    await db?.drop();
  });

  it('reads them, declared_dead_at null while the column does not exist', async () => {
    const { rows } = await pg.query(`SELECT 1 FROM information_schema.columns WHERE table_name = 'attempts' AND column_name = 'declared_dead_at'`);
    if (rows.length) await pg.query('ALTER TABLE attempts DROP COLUMN declared_dead_at');
    expect((await snapshot(db.url)).attempts).toEqual([
      expect.objectContaining({
        request_id: 'r1',
        state: 'failed_definitive',
        unknown_since: new Date('2026-01-01T10:00:00Z'),
        error_code: 'used_without_pull_request',
        partner_status: 'exists',
        declared_dead_at: null,
      }),
    ]);
  });

  it("reads an operator's declared_dead_at once the column exists", async () => {
    await pg.query('ALTER TABLE attempts ADD COLUMN declared_dead_at timestamptz NULL');
    await pg.query(`UPDATE attempts SET declared_dead_at = '2026-01-01T11:00:00.123Z' WHERE request_id = 'r1'`);
    expect((await snapshot(db.url)).attempts[0]!.declared_dead_at).toEqual(new Date('2026-01-01T11:00:00.123Z'));
  });
});
