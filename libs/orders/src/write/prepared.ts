import { createHash } from 'node:crypto';
import type { QueryConfig } from 'pg';

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
