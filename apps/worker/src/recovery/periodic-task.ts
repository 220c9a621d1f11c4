import { Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';

/**
 * The one wiring of a task run on a timer in the worker (sweeper, reconciler, circuit probe, balance watch,
 * catalog refresh): started once the application has started, never two runs at once (a call while one is
 * under way shares it), a failure logged and retried at the next tick, and stopped before the database pool
 * closes (beforeApplicationShutdown waits for a run under way). A timer, not a repeatable job: these tasks
 * must survive the loss of Redis.
 */
export abstract class PeriodicTask<T> implements OnApplicationBootstrap, BeforeApplicationShutdown {
  protected readonly log = new Logger(this.constructor.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<T>;

  /** What the log says when a run fails. */
  protected abstract readonly taskName: string;
  /** Time between two runs (read at start). */
  protected abstract intervalMs(): number;
  /** Whether the first run starts with the application, or one interval later. */
  protected readonly runAtStart: boolean = false;
  protected abstract tick(): Promise<T>;

  onApplicationBootstrap(): void {
    const run = () => void this.runOnce().catch((err: Error) => this.log.warn({ err: err.message }, `${this.taskName} failed; next one in a moment`));
    if (this.runAtStart) run();
    this.timer = setInterval(run, this.intervalMs());
    this.timer.unref();
  }

  /** One run now; a call while one is under way shares it. */
  runOnce(): Promise<T> {
    this.running ??= this.tick().finally(() => (this.running = undefined));
    return this.running;
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }
}
