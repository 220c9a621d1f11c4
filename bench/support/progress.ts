import type { BenchContext } from './context';
import { sleep } from './context';
import { CpuMeter, type CpuSample } from './cpu';

export interface Completion {
  /** Cards stored per second between 10 % and 90 % of the orders completed (the steady state). */
  steadyPerS: number;
  /** Seconds from `since` to the last order completed. */
  totalS: number;
  /** CPU cores per process group between 10 % and 90 %. */
  cores: Record<string, number>;
  /** Queries this tracker made (each its own transaction): subtracted from the commits counted around a run. */
  polls: number;
  /**
   * The same window in two halves, 10-50 % and 50-90 % of the orders (cards/s, cores): a freshly started
   * process still warming up (its JIT, its caches) is slower in the first.
   */
  halves: { perS: number; cores: Record<string, number> }[];
}

/**
 * Polls the bench's Postgres until `orders` orders are completed (failing after `timeoutMs`), taking the
 * steady rate between 10 % and 90 % of them and the CPU of each process group over the same window.
 */
export async function trackCompletion(ctx: BenchContext, orders: number, opts: { since: number; label: string; timeoutMs?: number }): Promise<Completion> {
  const marks: { at: number; done: number }[] = [];
  let cpu10: CpuSample | null = null;
  let cpu50: CpuSample | null = null;
  let cpu90: CpuSample | null = null;
  const deadline = Date.now() + (opts.timeoutMs ?? 180_000);
  for (;;) {
    const { rows } = await ctx.stack.db.query<{ n: string }>("SELECT count(*) AS n FROM orders WHERE status = 'completed'");
    const done = Number(rows[0]!.n);
    marks.push({ at: Date.now(), done });
    if (!cpu10 && done >= orders * 0.1) cpu10 = ctx.cpu.sample();
    if (!cpu50 && done >= orders * 0.5) cpu50 = ctx.cpu.sample();
    if (!cpu90 && done >= orders * 0.9) cpu90 = ctx.cpu.sample();
    if (done >= orders) break;
    if (Date.now() > deadline) throw new Error(`${opts.label}: only ${done} of ${orders} orders completed after ${((Date.now() - opts.since) / 1000).toFixed(0)} s`);
    await sleep(50);
  }
  const first = marks.find((m) => m.done >= orders * 0.1)!;
  const middle = marks.find((m) => m.done >= orders * 0.5)!;
  const last = marks.find((m) => m.done >= orders * 0.9)!;
  const perS = (a: { at: number; done: number }, b: { at: number; done: number }) => (b.done - a.done) / Math.max(0.001, (b.at - a.at) / 1000);
  // Two marks of one poll (a run that crossed both in 50 ms) have no time between them: no cores to tell.
  const coresBetween = (a: CpuSample | null, b: CpuSample | null) => (a && b && b.at > a.at ? CpuMeter.cores(a, b) : {});
  return {
    steadyPerS: perS(first, last),
    halves: [
      { perS: perS(first, middle), cores: coresBetween(cpu10, cpu50) },
      { perS: perS(middle, last), cores: coresBetween(cpu50, cpu90) },
    ],
    totalS: (marks.at(-1)!.at - opts.since) / 1000,
    cores: coresBetween(cpu10, cpu90),
    polls: marks.length,
  };
}
