import type { Logger } from '@nestjs/common';

/**
 * A task run on a timer in the process (the sweeper, the circuit probe, the reconciler): never two runs at
 * once, a failure logged and retried at the next tick, and `stop()` waits for a run under way, so the
 * database pool is not closed under it. A timer, not a repeatable job: these tasks must survive the loss
 * of Redis.
 */
export class Periodic<T> {
  private timer?: NodeJS.Timeout;
  private running?: Promise<T>;

  constructor(
    private readonly name: string,
    private readonly log: Logger,
    private readonly task: () => Promise<T>,
  ) {}

  start(intervalMs: number, { now = false } = {}): void {
    const tick = () => void this.run().catch((err: Error) => this.log.warn({ err: err.message }, `${this.name} failed; next one in a moment`));
    if (now) tick();
    this.timer = setInterval(tick, intervalMs);
    this.timer.unref();
  }

  /** One run; a call while one is under way shares it. */
  run(): Promise<T> {
    this.running ??= this.task().finally(() => (this.running = undefined));
    return this.running;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }
}
