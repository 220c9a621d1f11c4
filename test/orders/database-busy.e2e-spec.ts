import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { PG_POOL } from '@cardpull/db';
import { KEYS, idemKey, useStack } from '../support/stack';

/**
 * Found by the suite run beside a benchmark (issue 21): when every connection of the API's pool is busy
 * past the pool's wait (5 s), a request used to end as a 500 `internal_error` with a stack, which reads as
 * our bug and tells the caller nothing. No statement ran, so nothing was done: it is now a 503
 * `database_unavailable` with Retry-After, which a caller (and @cardpull/client) retries with the same
 * Idempotency-Key, and one warning line instead of a stack. The API here has one connection, held by the test.
 */
describe('a request that gets no database connection in time: 503 database_unavailable with Retry-After, nothing done', () => {
  const stack = useStack({ worker: false, env: { DATABASE_POOL_SIZE: '1' } });

  it('a read and a creation answer 503 while the only connection is held, and succeed once it is free (the creation with the same key, once)', async () => {
    const pool = stack.api!.get<Pool>(PG_POOL);
    const key = idemKey('busy');
    const body = { gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000, mode: 'async' };
    let held: PoolClient | null = await pool.connect();
    try {
      const [read, create] = await Promise.all([
        stack.call('GET', `/v1/orders/${randomUUID()}`),
        stack.call('POST', '/v1/orders', { key: KEYS.shop, body, headers: { 'idempotency-key': key } }),
      ]);
      for (const res of [read, create]) {
        expect([res.status, res.body.errors?.[0]?.code, res.headers['retry-after']]).toEqual([503, 'database_unavailable', '1']);
        expect(res.body.errors[0].message).toContain('nothing was done');
      }
      // One warning per answer, no "unhandled error" with a stack.
      expect(stack.logs.lines.filter((l) => l.includes('database unavailable: answered 503')).length).toBeGreaterThanOrEqual(2);
      expect(stack.logs.lines.filter((l) => l.includes('"unhandled error"') && l.includes('timeout exceeded'))).toEqual([]);
    } finally {
      held?.release();
      held = null;
    }
    const again = await stack.call('POST', '/v1/orders', { key: KEYS.shop, body, headers: { 'idempotency-key': key } });
    expect(again.status).toBe(202);
    const replay = await stack.call('POST', '/v1/orders', { key: KEYS.shop, body, headers: { 'idempotency-key': key } });
    expect([replay.status, replay.body.order?.id]).toEqual([200, again.body.order.id]);
  }, 30_000);
});
