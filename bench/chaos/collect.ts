import type Redis from 'ioredis';
import { Client } from 'pg';

/** Reads of the run's database and Redis: progress counts, the final figures, text dumps for the secret scan. */

async function withDb<T>(url: string, fn: (db: Client) => Promise<T>, timeoutMs = 3_000): Promise<T> {
  const db = new Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: 30_000 });
  db.on('error', () => undefined);
  await db.connect();
  try {
    return await fn(db);
  } finally {
    await db.end().catch(() => undefined);
  }
}

/** Orders per status, or null while the database does not answer (its restart). */
export async function statusCounts(url: string): Promise<Record<string, number> | null> {
  try {
    return await withDb(url, async (db) => {
      const { rows } = await db.query<{ status: string; n: string }>('SELECT status::text AS status, count(*) AS n FROM orders GROUP BY 1 ORDER BY 1');
      return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
    }, 1_500);
  } catch {
    return null;
  }
}

export const TERMINAL_STATUSES = ['completed', 'failed', 'needs_attention'];

/**
 * SQL: order `o` waits on a request ID of unknown outcome (an open attempt that had an unknown outcome) and
 * its step still asks the partner about it: the rule's "when in doubt, wait on the same ID" (no new ID without
 * the partner's word or an operator's), not a stuck order. Past UNKNOWN_OUTCOME_WINDOW_MS it needs attention.
 */
export const IN_DOUBT_SQL = `(o.next_step IS NOT NULL AND EXISTS (SELECT 1 FROM attempts a WHERE a.order_id = o.id AND a.state IN ('sent', 'unknown') AND a.unknown_since IS NOT NULL))`;

/** How many cards are stored (to compare with the partner's ledger). Null when Postgres did not answer. */
export async function storedCards(url: string): Promise<number | null> {
  try {
    return await withDb(url, async (db) => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM cards')).rows[0]!.n, 1_500);
  } catch {
    return null;
  }
}

/** Orders neither terminal nor in doubt (see IN_DOUBT_SQL): what the quiet wait waits for. Null when Postgres did not answer. */
export async function unsettledOrders(url: string): Promise<number | null> {
  try {
    return await withDb(url, async (db) => {
      const { rows } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM orders o WHERE o.status NOT IN ('completed', 'failed', 'needs_attention') AND NOT ${IN_DOUBT_SQL}`,
      );
      return rows[0]!.n;
    }, 1_500);
  } catch {
    return null;
  }
}

export interface DbFigures {
  byStatus: Record<string, { sync: number; async: number; total: number }>;
  failedByCode: Record<string, number>;
  attempts: number;
  ordersWithSeveralAttempts: number;
}

export function dbFigures(url: string): Promise<DbFigures> {
  return withDb(url, async (db) => {
    const byStatus: DbFigures['byStatus'] = {};
    const { rows } = await db.query<{ status: string; mode: 'sync' | 'async'; n: string }>(
      'SELECT status::text AS status, mode::text AS mode, count(*) AS n FROM orders GROUP BY 1, 2 ORDER BY 1, 2',
    );
    for (const r of rows) {
      const entry = (byStatus[r.status] ??= { sync: 0, async: 0, total: 0 });
      entry[r.mode] += Number(r.n);
      entry.total += Number(r.n);
    }
    const failed = await db.query<{ code: string | null; n: string }>(
      "SELECT error_code AS code, count(*) AS n FROM orders WHERE status = 'failed' GROUP BY 1 ORDER BY 2 DESC",
    );
    const attempts = await db.query<{ attempts: string; several: string }>(
      'SELECT count(*) AS attempts, (SELECT count(*) FROM (SELECT order_id FROM attempts GROUP BY 1 HAVING count(*) > 1) x) AS several FROM attempts',
    );
    return {
      byStatus,
      failedByCode: Object.fromEntries(failed.rows.map((r) => [r.code ?? '(none)', Number(r.n)])),
      attempts: Number(attempts.rows[0]!.attempts),
      ordersWithSeveralAttempts: Number(attempts.rows[0]!.several),
    };
  });
}

/** Every row of every table of the database as text (bytea as hex): what a dump would show. */
export function databaseText(url: string): Promise<string> {
  return withDb(url, async (db) => {
    const { rows: tables } = await db.query<{ t: string }>("SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1");
    const parts: string[] = [];
    for (const { t } of tables) {
      const { rows } = await db.query<{ row: string }>(`SELECT x::text AS row FROM "${t.replace(/"/g, '""')}" x`);
      parts.push(`-- ${t}`, ...rows.map((r) => r.row));
    }
    return parts.join('\n');
  });
}

/** Every key and value Redis holds (strings, hashes, lists, sets, sorted sets, streams) as text. */
export async function redisText(redis: Redis, maxKeys = 200_000): Promise<{ text: string; keys: number }> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0' && keys.length < maxKeys);
  const parts: string[] = [];
  for (let i = 0; i < keys.length; i += 500) {
    const chunk = keys.slice(i, i + 500);
    const types = (await redis.pipeline(chunk.map((k) => ['type', k])).exec()) ?? [];
    const reads = chunk.map((k, j) => {
      const type = String(types[j]?.[1]);
      if (type === 'string') return ['get', k];
      if (type === 'hash') return ['hgetall', k];
      if (type === 'list') return ['lrange', k, '0', '-1'];
      if (type === 'set') return ['smembers', k];
      if (type === 'zset') return ['zrange', k, '0', '-1'];
      if (type === 'stream') return ['xrange', k, '-', '+'];
      return ['exists', k];
    });
    const values = (await redis.pipeline(reads).exec()) ?? [];
    // Raw values, not JSON-encoded again: a PIN inside a job's JSON must keep its plain quotes.
    chunk.forEach((k, j) => parts.push(k, ...flatten(values[j]?.[1])));
  }
  return { text: parts.join('\n'), keys: keys.length };
}

function flatten(v: unknown): string[] {
  if (v === null || v === undefined) return [];
  if (Array.isArray(v)) return v.flatMap(flatten);
  if (typeof v === 'object') return Object.entries(v as Record<string, unknown>).flatMap(([k, x]) => [k, ...flatten(x)]);
  return [String(v)];
}
