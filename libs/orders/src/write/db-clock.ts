/**
 * The database's clock, read once with a row and carried forward with this process's monotonic clock.
 * Every deadline that more than one process reads (unknown-outcome window, settle window, waiting
 * deadline, leases, next steps) is measured by it, so a worker whose wall clock is off by an hour still
 * decides on time: only the elapsed time since the read comes from this process, and that is immune to
 * wall-clock skew and jumps.
 */
export class DbClock {
  private readonly readAt = performance.now();

  constructor(private readonly at: Date) {}

  /** Now, by the database's clock, in ms since the epoch. */
  now(): number {
    return this.at.getTime() + (performance.now() - this.readAt);
  }

  /** How long until `when` (a time written by the database), never negative. */
  until(when: Date): number {
    return Math.max(0, when.getTime() - this.now());
  }
}
