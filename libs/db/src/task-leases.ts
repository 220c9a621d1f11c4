import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Pool } from 'pg';

/**
 * Claims on the runs of the worker's periodic tasks, in Postgres (`periodic_task_runs`), so each runs once
 * per interval across the fleet, not once per process. A process runs a task only if its claim succeeds:
 * no lease is held, and (for a run on the timer) the last run started at least `everyMs` ago. The lease is
 * the lock: released when the run ends; a process killed mid-run holds it until it expires (`leaseMs`),
 * then another process takes over. One plain statement per claim and per release, no session state, so it
 * works through a transaction pooler (PgBouncer), where session advisory locks do not.
 */
export class TaskLeases {
  constructor(
    private readonly pool: Pool,
    /** How long a run may take before another process may run the task again (PERIODIC_TASK_LEASE_MS). */
    readonly leaseMs: number,
    /** This process, as the table names it. */
    readonly holder = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`,
  ) {}

  /** Whether this process may run `task` now (and then must `release` it): `everyMs` 0 for a run asked for by hand. */
  async claim(task: string, everyMs: number): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `INSERT INTO periodic_task_runs AS r (task, holder, lease_until, started_at, runs)
       VALUES ($1, $2, now() + $3 * interval '1 millisecond', now(), 1)
       ON CONFLICT (task) DO UPDATE
         SET holder = EXCLUDED.holder, lease_until = EXCLUDED.lease_until, started_at = EXCLUDED.started_at, finished_at = NULL, runs = r.runs + 1
       WHERE r.lease_until <= now() AND r.started_at <= now() - $4 * interval '1 millisecond'`,
      [task, this.holder, this.leaseMs, Math.max(0, Math.round(everyMs))],
    );
    return rowCount === 1;
  }

  /** Ends this process's run of `task` (a lease taken over by another process meanwhile is left alone). */
  async release(task: string): Promise<void> {
    await this.pool.query('UPDATE periodic_task_runs SET lease_until = now(), finished_at = now() WHERE task = $1 AND holder = $2', [task, this.holder]);
  }
}
