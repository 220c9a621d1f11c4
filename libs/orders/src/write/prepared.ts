import { createHash } from 'node:crypto';
import { Query, type QueryConfig, type QueryResult, type QueryResultRow } from 'pg';
import type { Queryable } from '@cardpull/db';

const statementNames = new Map<string, string>();

/**
 * A hot statement as a named prepared statement: each pooled connection parses and plans it once, then
 * only binds and executes it. These CTEs cost Postgres more to plan than to run (EXPLAIN ANALYZE of the
 * lease: 0.43 ms planning, 0.29 ms execution; docs/BENCHMARKS.md). The name is derived from the text, so every distinct text
 * (a transition's shape) gets its own statement, and a name never stands for two texts.
 */
export function prepared(text: string, values: unknown[]): QueryConfig {
  let name = statementNames.get(text);
  if (!name) {
    name = `cp-${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    statementNames.set(text, name);
  }
  return { name, text, values };
}

/**
 * Runs a hot statement (prepared() or callOf()) on the pool or a transaction's client: what
 * `db.query(statement)` does, without pg's copy of the statement's config (Object.getOwnPropertyDescriptors
 * and defineProperties for every query: 15 µs per card in the worker's CPU profile, two statements).
 */
export function runStatement<R extends QueryResultRow>(db: Queryable, statement: QueryConfig): Promise<QueryResult<R>> {
  return new Promise((resolve, reject) => {
    const query = new Query<R>(statement.text, statement.values);
    (query as { name?: string }).name = statement.name;
    (db.query as (q: Query<R>, callback: (error: Error | undefined, result: QueryResult<R>) => void) => void).call(db, query, (error, result) => (error ? reject(error) : resolve(result)));
  });
}
