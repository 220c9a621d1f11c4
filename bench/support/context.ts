import { CpuMeter, type CpuSample } from './cpu';
import type { Figure, Log } from './report';
import type { BenchStack } from './stack';

/** Settings of `npm run bench` (environment, see docs/BENCHMARKS.md). */
export interface BenchSettings {
  /** BENCH_ROUNDS: repetitions of each timed run (medians are reported). */
  rounds: number;
  /**
   * BENCH_PACED_ROUNDS: the intake's paced rounds, each side (5, or BENCH_ROUNDS when that is set: each
   * round's p99 is set by its few slowest requests, and one stall of the machine moved a round's p99 by 5-10 times).
   */
  pacedRounds: number;
  /**
   * BENCH_E2E_ROUNDS: the e2e bench's rounds, each side (5, or BENCH_ROUNDS when that is set: one process
   * each, and the same script's rounds ranged over 20-40 % within one run: 475-750 cards/s for the bare one).
   */
  e2eRounds: number;
  /** BENCH_INTAKE_SECONDS: length of one intake run. */
  intakeSeconds: number;
  /** BENCH_CONNECTIONS: concurrent connections of the intake load (and of its baseline). */
  connections: number;
  /**
   * BENCH_E2E_ORDERS: sync orders per end-to-end run. 5,000: the rate is read between 10 % and 90 % of them,
   * about 3 s here; with 2,000 that window was 1.3 s, much of it the fresh process's JIT warm-up (larger for
   * the worker's code than for the bare script's), not the per-card cost the figure is about.
   */
  e2eOrders: number;
  /** BENCH_PENDING: async orders kept pending for the scale and FLUSHALL runs. */
  pending: number;
  /** BENCH_LIMITS_ORDERS: sync orders, then as many async ones, per run of the limits bench's limited partner. */
  limitsOrders: number;
  /** BENCH_LIMITS_RATE: the partner's limit (calls per second) in the limits bench, given to cardpull as well. */
  limitsRate: number;
  /** BENCH_LIMITS_PENDING: async orders pending (polled) in the limits bench's starvation run. */
  limitsPending: number;
  /** BENCH_LIMITS_NEW: new sync orders sent into that backlog. */
  limitsNew: number;
  /** BENCH_FAIR_BULK and BENCH_FAIR_SECOND: the fairness run's bulk import, and the second client's orders after it. */
  fairBulk: number;
  fairSecond: number;
  /** BENCH_LIMITS_PARTS: which runs of the limits bench (limited, storm, starvation, fairness, learned; default all). */
  limitsParts: string[];
  /** BENCH_LEARNED_RATES: the partner limits (creations/s) the learned part plays, none given to cardpull. */
  learnedRates: number[];
  /** BENCH_LEARNED_SECONDS: each learned run's orders, in seconds of the partner's limit (at least 100 orders). */
  learnedSeconds: number;
  /** BENCH_SKIP_BUILD: use dist/ as it is. */
  skipBuild: boolean;
  /** BENCH_ADMIN_PAGES: during the intake bench's API rounds, an operator keeps the overview, the charts and a filter open, reloading every 2 s. */
  adminPages: boolean;
}

export function settingsFromEnv(env = process.env): BenchSettings {
  const int = (name: string, def: number, min: number) => {
    const raw = env[name]?.trim();
    if (!raw) return def;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) throw new Error(`${name}=${raw}: must be an integer >= ${min}`);
    return n;
  };
  const parts = (name: string, all: string[]) => {
    const raw = env[name]?.trim();
    if (!raw) return all;
    const chosen = raw.split(',').map((p) => p.trim()).filter(Boolean);
    const unknown = chosen.filter((p) => !all.includes(p));
    if (unknown.length || !chosen.length) throw new Error(`${name}=${raw}: a comma-separated list of ${all.join(', ')}`);
    return chosen;
  };
  return {
    rounds: int('BENCH_ROUNDS', 3, 1),
    pacedRounds: int('BENCH_PACED_ROUNDS', int('BENCH_ROUNDS', 5, 1), 1),
    e2eRounds: int('BENCH_E2E_ROUNDS', int('BENCH_ROUNDS', 5, 1), 1),
    intakeSeconds: int('BENCH_INTAKE_SECONDS', 8, 2),
    connections: int('BENCH_CONNECTIONS', 32, 1),
    e2eOrders: int('BENCH_E2E_ORDERS', 5000, 100),
    pending: int('BENCH_PENDING', 10_000, 100),
    limitsOrders: int('BENCH_LIMITS_ORDERS', 2000, 50),
    limitsRate: int('BENCH_LIMITS_RATE', 50, 5),
    // The 10,000 take about 80 s to set up here (created and polled with no limits): 5,000 by default.
    limitsPending: int('BENCH_LIMITS_PENDING', 5_000, 100),
    limitsNew: int('BENCH_LIMITS_NEW', 500, 20),
    fairBulk: int('BENCH_FAIR_BULK', 5_000, 100),
    fairSecond: int('BENCH_FAIR_SECOND', 50, 5),
    limitsParts: parts('BENCH_LIMITS_PARTS', ['limited', 'storm', 'starvation', 'fairness', 'learned']),
    learnedRates: (env.BENCH_LEARNED_RATES ?? '5,50,200').split(',').map((r) => {
      const n = Number(r.trim());
      if (!Number.isFinite(n) || n < 1) throw new Error(`BENCH_LEARNED_RATES=${env.BENCH_LEARNED_RATES}: a comma-separated list of rates >= 1`);
      return n;
    }),
    learnedSeconds: int('BENCH_LEARNED_SECONDS', 20, 5),
    skipBuild: ['1', 'true', 'yes'].includes((env.BENCH_SKIP_BUILD ?? '').toLowerCase()),
    adminPages: ['1', 'true', 'yes'].includes((env.BENCH_ADMIN_PAGES ?? '').toLowerCase()),
  };
}

export interface BenchContext {
  stack: BenchStack;
  settings: BenchSettings;
  log: Log;
  cpu: CpuMeter;
  /** Per-bench extra measurements, written to the JSON report. */
  details: Record<string, unknown>;
}

export type Bench = (ctx: BenchContext) => Promise<Figure[]>;

/** Runs `fn` and answers its result with the cores each process group used meanwhile. */
export async function withCpu<T>(cpu: CpuMeter, fn: (mark: () => void) => Promise<T>): Promise<{ result: T; cores: Record<string, number> }> {
  let start: CpuSample = cpu.sample();
  const result = await fn(() => (start = cpu.sample()));
  return { result, cores: CpuMeter.cores(start, cpu.sample()) };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `check` every `everyMs` until it answers true; false after `timeoutMs`. */
export async function until(check: () => Promise<boolean>, timeoutMs: number, everyMs = 250): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await sleep(everyMs);
  }
}
