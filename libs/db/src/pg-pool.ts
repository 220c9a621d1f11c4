import { Pool } from 'pg';

export const PG_POOL = Symbol('PG_POOL');

/**
 * The process's one pool of Postgres connections (DATABASE_POOL_SIZE), shared by every repository. Data
 * access is raw SQL in repositories over this pool (docs/ARCHITECTURE.md, "Data access"); Prisma serves
 * the schema, the migrations and the generated enum types only.
 */
export function createPgPool(databaseUrl: string, max: number): Pool {
  const pool = new Pool({ connectionString: databaseUrl, max, connectionTimeoutMillis: 5_000, idleTimeoutMillis: 30_000 });
  // A connection that breaks (Postgres restarted) must never crash the process. pg-pool only listens on
  // idle clients; a client checked out between two queries (a transaction, the sweeper holding its lock)
  // would emit an unhandled 'error'. With a listener of its own, its next query fails instead, and the
  // pool drops it on release.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}
