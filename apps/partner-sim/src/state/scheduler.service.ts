import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';

/**
 * Timers of the simulated pulls (background pull requests, slow or held answers). The event loop is never
 * blocked; every timer is tracked so closing the app (tests, SIGTERM) does not wait for a held answer.
 */
@Injectable()
export class SchedulerService implements OnModuleDestroy {
  private readonly logger = new Logger(SchedulerService.name);
  private readonly timers = new Set<NodeJS.Timeout>();

  after(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      try {
        fn();
      } catch (error) {
        // A failing timer must not take the process down; it is a bug in the simulator, so say so.
        this.logger.error(`scheduled work failed: ${(error as Error).stack ?? String(error)}`);
      }
    }, ms);
    this.timers.add(timer);
  }

  /** Resolves after `ms`; never resolves if the app closes first (the request is being torn down anyway). */
  sleep(ms: number): Promise<void> {
    return ms <= 0 ? Promise.resolve() : new Promise((resolve) => this.after(ms, resolve));
  }

  onModuleDestroy(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
