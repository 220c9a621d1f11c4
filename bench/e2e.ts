import type { BenchContext } from './support/context';
import { describeCores } from './support/cpu';
import { createOrders } from './support/http-load';
import { trackCompletion, type Completion } from './support/progress';
import { figure, median, type Figure } from './support/report';

/**
 * End to end: cards stored per second. Sync orders are created first through the API with no worker (so
 * intake is not measured), then one worker process is started and timed until every order is completed,
 * against bench/bare/worker-bare.ts (one process, same concurrency) on the same orders and jobs. The
 * simulator answers at once (SIM_SYNC_DELAY_MS=0). The rate is taken between 10 % and 90 % of the orders
 * completed (the steady state: no process start-up, no tail); the time to all completed is kept too.
 */

interface Run {
  kind: 'worker' | 'bare';
  steadyPerS: number;
  totalS: number;
  cards: number;
  cores: Record<string, number>;
}

async function timeRun(ctx: BenchContext, kind: Run['kind'], orders: number): Promise<Run> {
  const { stack } = ctx;
  const t0 = Date.now();
  const stop =
    kind === 'worker'
      ? await (async () => {
          const w = await stack.startWorker('worker', { WORKER_CONCURRENCY: '32' }, false);
          return () => w.proc.stop(15_000);
        })()
      : (() => {
          const b = stack.spawnBare('worker-bare.ts', { CONCURRENCY: '32', POOL_SIZE: '10', PARTNER_BASE_URL: stack.sim!.url });
          return () => b.stop();
        })();
  let done: Completion;
  try {
    done = await trackCompletion(ctx, orders, { since: t0, label: kind });
  } finally {
    await stop();
  }
  const { rows } = await stack.db.query<{ n: string }>('SELECT count(*) AS n FROM cards');
  return { kind, ...done, cards: Number(rows[0]!.n) };
}

export async function e2eBench(ctx: BenchContext): Promise<Figure[]> {
  const { stack, settings: s, log } = ctx;
  await stack.reset();
  await stack.startSim({ SIM_SYNC_DELAY_MS: '0' });
  const api = await stack.startApi();
  log(`e2e: ${s.e2eOrders} sync orders per run, created with no worker; ${s.rounds} rounds, worker and bare alternating (concurrency 32, pool 10, one process each)`);
  const runs: Run[] = [];
  for (let round = 0; round < s.rounds; round++) {
    for (const kind of (round % 2 ? ['bare', 'worker'] : ['worker', 'bare']) as Run['kind'][]) {
      await stack.reset();
      await createOrders({ url: api.url, apiKey: stack.apiKey, count: s.e2eOrders, mode: 'sync', concurrency: 16, prefix: `e2e${round}${kind}` });
      const run = await timeRun(ctx, kind, s.e2eOrders);
      if (run.cards !== s.e2eOrders) throw new Error(`${kind}: ${run.cards} cards stored for ${s.e2eOrders} orders`);
      runs.push(run);
      log(`  ${kind.padEnd(6)} round ${round + 1}: ${run.steadyPerS.toFixed(0)} cards/s (10-90 %), all ${s.e2eOrders} in ${run.totalS.toFixed(1)} s from spawn; cores: ${describeCores(run.cores)}`);
    }
  }
  await api.proc.stop();
  await stack.reset();
  ctx.details.e2e = { orders: s.e2eOrders, concurrency: 32, runs };
  const worker = runs.filter((r) => r.kind === 'worker');
  const bare = runs.filter((r) => r.kind === 'bare');
  const value = median(worker.map((r) => r.steadyPerS));
  const base = median(bare.map((r) => r.steadyPerS));
  return [
    figure({
      bench: 'e2e',
      figure: 'cards stored/s (sync, sim 0 ms, 1 process, conc 32)',
      value,
      unit: '/s',
      baseline: base,
      baselineLabel: 'bare lease+call+store',
      target: 'ratio >= 0.6',
      pass: value / base >= 0.6,
      samples: worker.map((r) => r.steadyPerS),
      baselineSamples: bare.map((r) => r.steadyPerS),
    }),
    figure({
      bench: 'e2e',
      figure: `time to complete ${s.e2eOrders} orders from process spawn`,
      value: median(worker.map((r) => r.totalS)),
      unit: 's',
      baseline: median(bare.map((r) => r.totalS)),
      baselineLabel: 'bare',
      target: '-',
      pass: null,
    }),
  ];
}
