import { Inject, Logger, Optional, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { TaskLeases } from '@cardpull/db';

/** A setting that holds a task's interval: SWEEP_INTERVAL_MS, RETENTION_INTERVAL_MS and the like. */
export type IntervalSetting = { [K in keyof ServiceConfig]-?: K extends `${string}_INTERVAL_MS` ? (ServiceConfig[K] extends number ? K : never) : never }[keyof ServiceConfig];

/**
 * A run on the timer goes ahead if the task's last run, in any process, started this share of an interval
 * ago or more: the processes' timers are not in step, and a tick a few ms early must not skip a round.
 */
const FLEET_SLACK = 0.9;
/** Without the fleet's leases (a task built by hand), a run is waited for this long at most. */
const UNLEASED_RUN_LIMIT_MS = 60_000;

/**
 * The one wiring of a task run on a timer in the worker (sweeper, reconciler, circuit probe, balance watch,
 * catalog refresh, poll ager): started once the application has started, never two runs at once (a call
 * while one is under way shares it), a failure logged and retried at the next tick, and stopped before the
 * database pool closes (beforeApplicationShutdown waits for a run under way). A timer, not a repeatable
 * job: these tasks must survive the loss of Redis.
 *
 * Once per interval across the fleet (unless the task says `fleetWide = false`): every run claims the task
 * in Postgres first (TaskLeases), and a run on the timer only if the task's last run, in any process,
 * started an interval ago; a run asked for by
 * hand (runOnce) only waits for no other process to be running it. A run not claimed answers null.
 */
export abstract class PeriodicTask<T> implements OnApplicationBootstrap, BeforeApplicationShutdown {
  protected readonly log = new Logger(this.constructor.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<T | null>;
  /** The fleet's claims (the worker provides them); without them (a task built by hand in a unit test) every run goes ahead. */
  @Optional() @Inject(TaskLeases) leases?: TaskLeases;
  /**
   * The settings, given to every task the same way as the leases (a property, so that a task's constructor
   * lists only what the task itself needs). Not there yet while the constructor runs.
   */
  @Inject(SERVICE_CONFIG) protected readonly config!: ServiceConfig;

  /** What the log says when a run fails. */
  protected abstract readonly taskName: string;
  /** Time between two runs (read at start): the setting that holds it, or a fixed number of ms. */
  protected abstract readonly every: IntervalSetting | number;
  /**
   * Whether a run is claimed fleet-wide in Postgres (once per interval across the workers). A task that is
   * safe and cheap to run in every process, and ticks often, says false: no Postgres statements per tick.
   */
  protected readonly fleetWide: boolean = true;
  /** Whether the first run starts with the application, or one interval later. */
  protected readonly runAtStart: boolean = false;
  protected abstract tick(): Promise<T>;
  /**
   * A read (no write) that says a run would find nothing to do, with what the run answers then; null: run.
   * An idle run skips its claim: a claim and its release are two commits, and a task that ticks every second
   * and is idle most of the time (the bulk actions) would otherwise commit twice a second for nothing. Work
   * that appears just after the read is found by the next tick.
   */
  protected idle(): Promise<{ answer: T } | null> {
    return Promise.resolve(null);
  }

  onApplicationBootstrap(): void {
    const run = (everyMs: number) => void this.run(everyMs).catch((err: Error) => this.log.warn({ err: err.message }, `${this.taskName} failed; next one in a moment`));
    // A process's start-up run does not wait for the interval (only for no other process to be running it):
    // a worker started after a crash sweeps at once, whoever swept last.
    if (this.runAtStart) run(0);
    this.timer = setInterval(() => run(this.intervalMs() * FLEET_SLACK), this.intervalMs());
    this.timer.unref();
  }

  /** One run now, unless another process is running it (null); a call while one is under way here shares it. */
  runOnce(): Promise<T | null> {
    return this.run(0);
  }

  private run(everyMs: number): Promise<T | null> {
    if (this.running) return this.running;
    const run = this.claimed(everyMs);
    this.running = run;
    // A run that never settles (a Redis command lost in a failover, a socket that never answers) must not
    // stop the task for good: once its lease is over (another process may run the task by then), this
    // process stops waiting for it and the next tick starts afresh.
    const limitMs = (this.fleetWide ? this.leases?.leaseMs : undefined) ?? UNLEASED_RUN_LIMIT_MS;
    const timer = setTimeout(() => {
      if (this.running !== run) return;
      this.running = undefined;
      this.log.warn({ task: this.taskName, limitMs }, `${this.taskName}: a run has not finished after ${limitMs} ms; the next tick starts a new one`);
    }, limitMs);
    timer.unref();
    void run
      .finally(() => {
        clearTimeout(timer);
        if (this.running === run) this.running = undefined;
      })
      .catch(() => undefined);
    return run;
  }

  private async claimed(everyMs: number): Promise<T | null> {
    const leases = this.fleetWide ? this.leases : undefined;
    if (!leases) return this.tick();
    const idle = await this.idle();
    if (idle) return idle.answer;
    if (!(await leases.claim(this.taskName, everyMs))) return null;
    try {
      return await this.tick();
    } finally {
      await leases.release(this.taskName).catch((err: Error) => this.log.warn({ err: err.message }, `${this.taskName}: could not release its lease; it expires by itself`));
    }
  }

  /** Time between two runs, from `every` (a task whose interval is computed overrides this). */
  protected intervalMs(): number {
    return typeof this.every === 'number' ? this.every : this.config[this.every];
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }
}
