import type { Pool, PoolClient } from 'pg';

/**
 * Runs `fn` in one Postgres transaction on a pooled connection: COMMIT when it resolves, ROLLBACK when it
 * throws. Used by the repositories' hot paths, where one raw-SQL round trip per statement beats an ORM
 * interactive transaction.
 */
export async function withTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
