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

/**
 * Runs `fn` while this process holds the session advisory lock `key` on one pooled connection, so that one
 * process of the fleet at a time runs it (the sweeper, the reconciler); null, without running it, when
 * another holds the lock. A killed process's connection closes and Postgres releases its lock.
 */
export async function withAdvisoryLock<T>(pool: Pool, key: number, fn: () => Promise<T>): Promise<T | null> {
  const client = await pool.connect();
  try {
    const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [key]);
    if (!rows[0]?.ok) return null;
    try {
      return await fn();
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [key]);
    }
  } finally {
    client.release();
  }
}
