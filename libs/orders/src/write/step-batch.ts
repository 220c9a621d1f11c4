import type { Pool } from 'pg';

/**
 * At most this many takes (or card stores) in one statement: a worker's default WORKER_CONCURRENCY, so one
 * statement can hold every step the process runs at once.
 */
export const MAX_STEP_BATCH = 32;

/** The connections of the pool that the takes and the card stores leave to everything else (transitions, notes, reads). */
const CONNECTIONS_LEFT_FREE = 2;

/**
 * How many take statements (and as many card-store statements) may run at once on `pool`: half of what the
 * pool has left once CONNECTIONS_LEFT_FREE are set aside, at least one. The steps that arrive while these run
 * wait for one of them and then share the next statement (group commit, TurnBatch): a statement's time is
 * mostly its commit's wait for the WAL flush, which a statement of eight steps waits once.
 */
export function stepStatementSlots(pool: Pick<Pool, 'options'>): number {
  return Math.max(1, Math.floor(((pool.options.max ?? 10) - CONNECTIONS_LEFT_FREE) / 2));
}

/** A caller waiting for its part of a batched statement. */
export interface Waiter<T> {
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

/**
 * The batch in the order of its orders' ids. Two statements that lock rows of the same orders (a job run
 * twice, a take and a store of another process) then lock them in the same order, and never wait for each
 * other in a cycle.
 */
export function byOrderId<T extends { orderId: string }>(items: T[]): T[] {
  return items.sort((a, b) => (a.orderId < b.orderId ? -1 : a.orderId > b.orderId ? 1 : 0));
}

/** Answers `waiter` with what `answer` gives, or with what it throws: no waiter is left hanging. */
export function settle<T>(waiter: Waiter<T>, answer: () => T): void {
  try {
    waiter.resolve(answer());
  } catch (error) {
    waiter.reject(error);
  }
}
