import { startPgBouncer, startRedisCluster, type TestPgBouncer, type TestRedisCluster } from '@cardpull/testing';
import type { BenchContext } from './support/context';
import { pgCounters, perCard } from './support/pg-counters';
import { describeCores } from './support/cpu';
import { createOrders } from './support/http-load';
import { trackCompletion } from './support/progress';
import { figure, median, type Figure } from './support/report';
import type { Env, Running } from './support/stack';

/**
 * Scale-out (issue 13): cards stored per second with 1, 2 and 3 worker processes against the instant
 * simulator, on a Redis Cluster instead of one Redis, and through PgBouncer (transaction pooling, named
 * prepared statements off) instead of straight to Postgres; plus the cost of the unnamed statements alone
 * (straight to Postgres with DATABASE_PREPARED_STATEMENTS=false). As the e2e bench: BENCH_E2E_ORDERS sync
 * orders created with no worker, then the workers timed between 10 % and 90 % of them completed;
 * BENCH_ROUNDS rounds, the variants in a different order each round, medians.
 *
 * On 2 cores the worker count cannot show scaling: 1 worker already uses most of what the worker, Postgres
 * and Redis share. The figures show what more processes cost or keep on one machine, and that the cluster
 * and the pooler cost little; the cores each group used are recorded beside them.
 */

interface Variant {
  name: string;
  workers: number;
  redis: 'single' | 'cluster';
  db: 'direct' | 'pgbouncer';
  prepared: boolean;
}

/**
 * In this order, and reversed every other round: the two variants with a target (Redis Cluster, PgBouncer)
 * run right before or after their baseline (1 worker) in every round. This host has slow phases of a
 * minute or so (one run: the same variant at 540 and 701 cards/s in two rounds); a baseline taken three
 * or four runs away (the order before 2026-11-29) could fall in another phase than the run it is compared with.
 */
const VARIANTS: Variant[] = [
  { name: '1 worker, Redis Cluster', workers: 1, redis: 'cluster', db: 'direct', prepared: true },
  { name: '1 worker', workers: 1, redis: 'single', db: 'direct', prepared: true },
  { name: '1 worker, PgBouncer', workers: 1, redis: 'single', db: 'pgbouncer', prepared: false },
  { name: '1 worker, unnamed statements', workers: 1, redis: 'single', db: 'direct', prepared: false },
  { name: '2 workers', workers: 2, redis: 'single', db: 'direct', prepared: true },
  { name: '3 workers', workers: 3, redis: 'single', db: 'direct', prepared: true },
];

interface Run {
  variant: string;
  round: number;
  steadyPerS: number;
  totalS: number;
  cores: Record<string, number>;
  /** Postgres commits (pg_stat_database.xact_commit, every connection of the bench's database) per card. */
  commitsPerCard: number;
}


/** Bytes on disk per completed order (tables, indexes and TOAST of the order tables), right after a run. */
async function bytesPerOrder(ctx: BenchContext, orders: number): Promise<Record<string, number>> {
  await ctx.stack.db.query('VACUUM ANALYZE orders, attempts, cards, order_events');
  const { rows } = await ctx.stack.db.query<{ t: string; b: string }>(
    "SELECT t, pg_total_relation_size(t::regclass) AS b FROM unnest(ARRAY['orders', 'attempts', 'cards', 'order_events']) AS t",
  );
  return Object.fromEntries(rows.map((r) => [r.t, Number(r.b) / orders]));
}

export async function scaleOutBench(ctx: BenchContext): Promise<Figure[]> {
  const { stack, settings: s, log } = ctx;
  const orders = s.e2eOrders;
  await stack.reset();
  await stack.startSim({ SIM_SYNC_DELAY_MS: '0' });
  let cluster: TestRedisCluster | null = null;
  let bouncer: TestPgBouncer | null = null;
  const apis: Running[] = [];
  const runs: Run[] = [];
  let storage: Record<string, number> = {};
  try {
    cluster = await startRedisCluster();
    bouncer = await startPgBouncer({ serverUrl: stack.pg.url, poolSize: 20 });
    const clusterEnv: Env = { REDIS_CLUSTER_NODES: cluster.nodesSetting };
    const apiSingle = await stack.startApi();
    const apiCluster = await stack.startApi(clusterEnv);
    apis.push(apiSingle, apiCluster);
    log(`scale-out: ${orders} sync orders per run, created with no worker; ${s.rounds} rounds of ${VARIANTS.length} variants (concurrency 32 per worker, pool 10)`);
    for (let round = 0; round < s.rounds; round++) {
      const order = round % 2 ? [...VARIANTS].reverse() : VARIANTS;
      for (const v of order) {
        await stack.reset();
        cluster.flushAll();
        await createOrders({ url: (v.redis === 'cluster' ? apiCluster : apiSingle).url, apiKey: stack.apiKey, count: orders, mode: 'sync', concurrency: 16, prefix: `so${round}${v.workers}${v.redis}${v.db}` });
        const env: Env = {
          WORKER_CONCURRENCY: '32',
          ...(v.redis === 'cluster' ? clusterEnv : {}),
          ...(v.db === 'pgbouncer' ? { DATABASE_URL: bouncer.url(stack.pg.url) } : {}),
          DATABASE_PREPARED_STATEMENTS: String(v.prepared),
        };
        const before = await pgCounters(ctx);
        const since = Date.now();
        const workers = await Promise.all(Array.from({ length: v.workers }, (_, i) => stack.startWorker(`worker-so-${v.workers}-${i + 1}`, env, false)));
        try {
          const done = await trackCompletion(ctx, orders, { since, label: v.name });
          await Promise.all(workers.map((w) => w.proc.stop(15_000)));
          const { commitsPerCard } = await perCard(ctx, before, orders, done.polls);
          runs.push({ variant: v.name, round, ...done, commitsPerCard });
          if (v.name === '1 worker' && round === 0) storage = await bytesPerOrder(ctx, orders);
          log(`  ${v.name.padEnd(30)} round ${round + 1}: ${done.steadyPerS.toFixed(0)} cards/s (10-90 %), all in ${done.totalS.toFixed(1)} s from spawn; ${commitsPerCard.toFixed(2)} commits per card; cores: ${describeCores(done.cores)}`);
        } finally {
          await Promise.all(workers.map((w) => w.proc.stop(15_000)));
        }
      }
    }
  } finally {
    await Promise.all(apis.map((a) => a.proc.stop()));
    await bouncer?.stop();
    await cluster?.stop();
    await stack.reset();
  }
  const of = (name: string) => runs.filter((r) => r.variant === name);
  const med = (name: string) => median(of(name).map((r) => r.steadyPerS));
  const cores = (name: string) => {
    const all = of(name).map((r) => r.cores);
    const keys = [...new Set(all.flatMap((c) => Object.keys(c)))];
    return Object.fromEntries(keys.map((k) => [k, median(all.map((c) => c[k] ?? 0))]));
  };
  log(`  storage per completed sync order: ${Object.entries(storage).map(([t, b]) => `${t} ${Math.round(b)} B`).join(', ')}; ${Math.round(Object.values(storage).reduce((a, b) => a + b, 0))} B in all`);
  ctx.details.scaleOut = { orders, rounds: s.rounds, variants: VARIANTS, runs, storageBytesPerOrder: storage, coresMedian: Object.fromEntries(VARIANTS.map((v) => [v.name, cores(v.name)])) };
  const one = med('1 worker');
  const samples = (name: string) => of(name).map((r) => r.steadyPerS);
  const against = (name: string, target: string, pass: ((ratio: number) => boolean) | null, baselineLabel = '1 worker, one Redis, straight to Postgres') =>
    figure({
      bench: 'scale-out',
      figure: `cards stored/s, ${name} (sync, sim 0 ms)`,
      value: med(name),
      unit: '/s',
      baseline: one,
      baselineLabel,
      target,
      pass: pass ? pass(med(name) / one) : null,
      samples: samples(name),
      baselineSamples: samples('1 worker'),
      note: `cores: ${describeCores(cores(name))}`,
    });
  const commitsPerCard = median(of('1 worker').map((r) => r.commitsPerCard));
  return [
    figure({ bench: 'scale-out', figure: 'Postgres commits per card, 1 worker (sync)', value: commitsPerCard, unit: '', baseline: null, baselineLabel: '-', target: '-', pass: null }),
    figure({ bench: 'scale-out', figure: 'cards stored/s, 1 worker (sync, sim 0 ms)', value: one, unit: '/s', baseline: null, baselineLabel: '-', target: '-', pass: null, samples: samples('1 worker'), note: `cores: ${describeCores(cores('1 worker'))}` }),
    against('2 workers', '- (2 cores)', null),
    against('3 workers', '- (2 cores)', null),
    against('1 worker, Redis Cluster', 'ratio >= 0.8', (r) => r >= 0.8),
    // Issue 22: behind PgBouncer at 0.9 of straight to Postgres or better.
    against('1 worker, PgBouncer', 'ratio >= 0.9', (r) => r >= 0.9),
    against('1 worker, unnamed statements', '-', null),
  ];
}
