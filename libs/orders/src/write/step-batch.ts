import type { Pool } from 'pg';
import { intakesInFlight } from './intake.repository';

/**
 * At most this many takes (or card stores) in one statement: a worker's default WORKER_CONCURRENCY, so one
 * statement can hold every step the process runs at once.
 */
export const MAX_STEP_BATCH = 32;

/**
 * How many take statements (and as many card-store statements) may run at once on `pool`: half of what the
 * intake may use (the pool less the connections it leaves free, see intakesInFlight), at least one. The
 * steps that arrive while these run wait for one of them and then share the next statement (group commit,
 * TurnBatch): a statement's time is mostly its commit's wait for the WAL flush, which a statement of eight
 * steps waits once.
 */
export function stepStatementSlots(pool: Pick<Pool, 'options'>): number {
  return Math.max(1, Math.floor(intakesInFlight(pool) / 2));
}

/**
 * The batch in the order of its orders' ids. Two statements that lock rows of the same orders (a job run
 * twice, a take and a store of another process) then lock them in the same order, and never wait for each
 * other in a cycle.
 */
export function byOrderId<T extends { orderId: string }>(items: T[]): T[] {
  return items.sort((a, b) => (a.orderId < b.orderId ? -1 : a.orderId > b.orderId ? 1 : 0));
}
