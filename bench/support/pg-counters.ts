import type { BenchContext } from './context';

/** Postgres's counters of the bench's own cluster, read before and after a phase. */
export interface PgCounters {
  /** pg_stat_database.xact_commit of the bench's database (every connection; read-only transactions too). */
  commits: number;
  /**
   * WAL position and the same in bytes: the whole cluster, which serves only the bench. `lsn` is the flushed
   * one, which pg_walinspect accepts as a range's end (a position not yet flushed: "cannot accept future end LSN").
   */
  lsn: string;
  walBytes: number;
}

/**
 * The counters now. Postgres publishes a backend's commit count within about a second (at the latest when
 * the backend is idle for PGSTAT_MIN_INTERVAL), so this waits that long first.
 */
export async function pgCounters(ctx: BenchContext): Promise<PgCounters> {
  await new Promise((r) => setTimeout(r, 1_100));
  const { rows } = await ctx.stack.db.query<{ commits: string; lsn: string; wal: string }>(
    `SELECT xact_commit AS commits, pg_current_wal_flush_lsn()::text AS lsn, pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint AS wal
       FROM pg_stat_database WHERE datname = current_database()`,
  );
  return { commits: Number(rows[0]!.commits), lsn: rows[0]!.lsn, walBytes: Number(rows[0]!.wal) };
}

export interface PerCard {
  /**
   * Transactions that wrote (a commit record in the WAL, so a flush waited for) per card, when pg_walinspect
   * can be loaded; else every commit counted by Postgres minus the bench's own queries.
   */
  commitsPerCard: number;
  /** Where commitsPerCard comes from. */
  commitsFrom: 'wal' | 'xact_commit';
  walPerCard: number;
}

let walInspect: boolean | undefined;

/**
 * Commits and WAL bytes per card between two readings. Commits are the WAL's commit records in that range
 * (pg_walinspect, Postgres 15's contrib): read-only transactions (the bench's progress polls, a periodic
 * task's read) write none. Without the extension, pg_stat_database's count less `benchQueries` (the
 * bench's own polls) and the reading of `before` itself.
 */
export async function perCard(ctx: BenchContext, before: PgCounters, cards: number, benchQueries = 0): Promise<PerCard> {
  const after = await pgCounters(ctx);
  const walPerCard = (after.walBytes - before.walBytes) / cards;
  if (walInspect === undefined) {
    walInspect = await ctx.stack.db.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect').then(
      () => true,
      () => false,
    );
  }
  if (walInspect) {
    const { rows } = await ctx.stack.db.query<{ n: string }>(
      `SELECT count AS n FROM pg_get_wal_stats($1::pg_lsn, $2::pg_lsn, true) WHERE "resource_manager/record_type" = 'Transaction/COMMIT'`,
      [before.lsn, after.lsn],
    );
    return { commitsPerCard: Number(rows[0]?.n ?? 0) / cards, commitsFrom: 'wal', walPerCard };
  }
  return { commitsPerCard: (after.commits - before.commits - 1 - benchQueries) / cards, commitsFrom: 'xact_commit', walPerCard };
}
