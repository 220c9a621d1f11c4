import { Client, Pool, type PoolClient, type QueryConfig } from 'pg';

export const PG_POOL = Symbol('PG_POOL');

/** What a statement can run on: the pool, or one client inside a transaction (withTransaction). */
export type Queryable = Pick<Pool | PoolClient, 'query'>;

/**
 * A client that sends every statement unnamed (parsed and planned at each execution): behind a transaction
 * pooler that does not keep protocol-level prepared statements (PgBouncer before 1.21 in transaction mode),
 * a statement prepared on one server connection is unknown on the next one the pooler hands out.
 */
class UnpreparedClient extends Client {
  // pg's query() has many overloads; this only removes a query config's name and passes the rest on.
  override query(...args: unknown[]): never {
    const [config, ...rest] = args;
    if (config && typeof config === 'object' && typeof (config as { submit?: unknown }).submit === 'function') {
      // A Query object (runStatement): it is what pg submits, so its name goes from it.
      (config as { name?: string }).name = undefined;
      return (super.query as (...a: unknown[]) => never)(config, ...rest);
    }
    if (config && typeof config === 'object' && 'name' in config) {
      const { name: _name, ...unnamed } = config as QueryConfig;
      return (super.query as (...a: unknown[]) => never)(unnamed, ...rest);
    }
    return (super.query as (...a: unknown[]) => never)(...args);
  }
}

const PREPARES = Symbol.for('cardpull.preparedStatements');

/** Whether `pool` names its hot statements (false: made with preparedStatements false, behind a transaction pooler). */
export function preparesStatements(pool: object): boolean {
  return (pool as Record<symbol, unknown>)[PREPARES] !== false;
}

export interface PgPoolOptions {
  /** DATABASE_PREPARED_STATEMENTS: false behind a transaction pooler that loses named prepared statements. */
  preparedStatements?: boolean;
  /** How long to wait for a connection (default 5 s). */
  connectionTimeoutMs?: number;
  /** A statement not answered in this long fails on our side (default: none). */
  queryTimeoutMs?: number;
}

/**
 * The process's one pool of Postgres connections (DATABASE_POOL_SIZE), shared by every repository. Data
 * access is raw SQL in repositories over this pool (docs/ARCHITECTURE.md, "Data access"); Prisma serves
 * the schema, the migrations and the generated enum types only. Nothing here holds session state between
 * transactions (no session advisory lock, no LISTEN, no SET), so the pool may point at a transaction
 * pooler; only the hot statements' names (libs/orders prepared.ts) need `preparedStatements: false` there.
 */
export function createPgPool(databaseUrl: string, max: number, options: PgPoolOptions = {}): Pool {
  const pool = new Pool({
    connectionString: databaseUrl,
    max,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 5_000,
    idleTimeoutMillis: 30_000,
    ...(options.queryTimeoutMs ? { query_timeout: options.queryTimeoutMs } : {}),
    ...(options.preparedStatements === false ? { Client: UnpreparedClient } : {}),
  });
  // A connection that breaks (Postgres restarted) must never crash the process. pg-pool only listens on
  // idle clients; a client checked out between two queries (a transaction, the sweeper holding its lock)
  // would emit an unhandled 'error'. With a listener of its own, its next query fails instead, and the
  // pool drops it on release.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  Object.defineProperty(pool, PREPARES, { value: options.preparedStatements !== false });
  return pool;
}
