import type { QueryConfig } from 'pg';
import { prepared } from './prepared';

/**
 * The hot statements as server-side functions (PL/pgSQL), created by a migration
 * (prisma/migrations/*_hot_statement_functions): a PL/pgSQL function plans each statement of its body once
 * per database connection and keeps the plan, as a named prepared statement does. Behind a transaction
 * pooler that loses named prepared statements (PgBouncer before 1.21, DATABASE_PREPARED_STATEMENTS=false)
 * the statements were sent unnamed and Postgres planned every one of them; called through its function, a
 * statement is planned once per server connection of the pooler, and the call itself (a function scan) costs
 * little to plan. docs/BENCHMARKS.md (scale-out) has the figures.
 *
 * Each function's body is its statement's text as the repositories have it (the same constant), with the
 * parameters as the function's ($1, $2, ...). The migration is generated from these definitions
 * (`migrationSql()`), and a test compares what the database holds with them, so the two cannot drift apart:
 * a change to one of these statements needs a new migration (CREATE OR REPLACE) written with the command in
 * that test.
 */
export interface ServerFunction {
  name: string;
  /** The parameters' SQL types, in order ($1, $2, ...). */
  args: string[];
  /** The result's columns and SQL types, in the order the statement selects them. */
  returns: [string, string][];
  /** The statement, with $1.. as the function's parameters. */
  body: string;
}

/** The columns ORDER_COLUMNS selects, with their SQL types. */
export const ORDER_RESULT: [string, string][] = [
  ['id', 'uuid'],
  ['client', 'text'],
  ['idempotencyKey', 'text'],
  ['requestHash', 'text'],
  ['status', '"OrderStatus"'],
  ['mode', '"PullMode"'],
  ['giftCardCode', 'text'],
  ['amount', 'integer'],
  ['metadata', 'jsonb'],
  ['errorCode', 'text'],
  ['errorMessage', 'text'],
  ['nextStep', '"OrderStep"'],
  ['nextStepAt', 'timestamptz'],
  ['stepSeq', 'integer'],
  ['leaseOwner', 'text'],
  ['leaseExpiresAt', 'timestamptz'],
  ['waitDeadline', 'timestamptz'],
  ['callbackUrl', 'text'],
  ['callbackSecrets', 'boolean'],
  ['createdAt', 'timestamptz'],
  ['updatedAt', 'timestamptz'],
  ['completedAt', 'timestamptz'],
  ['cardId', 'uuid'],
  ['traceParent', 'text'],
];

/** The function's CREATE statement. `#variable_conflict use_column`: a name that is a column and a result column is the column. */
export function createFunctionSql(f: ServerFunction): string {
  const returns = f.returns.map(([name, type]) => `"${name}" ${type}`).join(', ');
  return `CREATE OR REPLACE FUNCTION ${f.name}(${f.args.join(', ')})
RETURNS TABLE (${returns})
LANGUAGE plpgsql VOLATILE AS $fn$
#variable_conflict use_column
BEGIN
RETURN QUERY ${f.body};
END
$fn$;`;
}

/** The body as pg_proc.prosrc holds it (what createFunctionSql puts between the $fn$ quotes). */
export function functionSource(f: ServerFunction): string {
  return `
#variable_conflict use_column
BEGIN
RETURN QUERY ${f.body};
END
`;
}

/** The statement calling `f` with these values: named (prepared once per connection) unless the pool strips names. */
export function callOf(f: ServerFunction, values: unknown[]): QueryConfig {
  const params = f.args.map((_, i) => `$${i + 1}`).join(', ');
  return prepared(`SELECT * FROM ${f.name}(${params})`, values);
}
