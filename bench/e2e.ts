import type { BenchContext } from './support/context';
import { describeCores } from './support/cpu';
import { createOrders } from './support/http-load';
import { trackCompletion, type Completion } from './support/progress';
import { pgCounters, perCard } from './support/pg-counters';
import { figure, median, type Figure } from './support/report';

/**
 * End to end: cards stored per second. Sync orders are created first through the API with no worker (so
 * intake is not measured), then one worker process is started and timed until every order is completed,
 * against bench/bare/worker-bare.ts (one process, same concurrency) on the same orders and jobs. The
 * simulator answers at once (SIM_SYNC_DELAY_MS=0). The rate is taken between 10 % and 90 % of the orders
 * completed (the steady state: no process start-up, no tail); the time to all completed is kept too.
 *
 * Postgres's commits and WAL bytes are read around each phase: intake (the API's, the same for both) and
 * the worker's (or the bare script's) run, from spawn to the last card; per card, with everything the
 * process does in that time (its periodic tasks included). Each round starts with a CHECKPOINT, so that no
 * timed checkpoint (and its full-page images) falls inside a run.
 */

interface Run {
  kind: 'worker' | 'bare';
  steadyPerS: number;
  totalS: number;
  cards: number;
  cores: Record<string, number>;
  /** The window's two halves (10-50 %, 50-90 %), as trackCompletion reads them. */
  halves: Completion['halves'];
  /** Postgres commits and WAL bytes per card while the worker (or bare) ran, and while the API took the orders. */
  commitsPerCard: number;
  walPerCard: number;
  intakeCommitsPerCard: number;
  intakeWalPerCard: number;
}

async function timeRun(ctx: BenchContext, kind: Run['kind'], orders: number): Promise<Omit<Run, 'intakeCommitsPerCard' | 'intakeWalPerCard'>> {
  const { stack } = ctx;
  const statements = process.env.BENCH_PG_STATEMENTS === '1';
  if (statements) {
    await stack.db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()');
    await stack.redis.client().config('RESETSTAT');
    await stack.redis.client().config('RESETSTAT');
  }
  const before = await pgCounters(ctx);
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
  const counted = await perCard(ctx, before, orders, done.polls);
  if (statements) {
    const top = await stack.db.query<{ calls: string; ms: string; wal: string; q: string }>(
      `SELECT calls, round(total_exec_time::numeric, 1) AS ms, wal_bytes AS wal, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS q
         FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
         ORDER BY calls DESC LIMIT 14`,
    );
    for (const r of top.rows) ctx.log(`    ${kind} ${(Number(r.calls) / orders).toFixed(2)}/card ${(Number(r.ms) / orders).toFixed(3)} ms/card ${(Number(r.wal) / orders).toFixed(0)} B/card  ${r.q}`);
    const wal = await stack.db.query<{ t: string; n: string; rec: string; fpi: string }>(
      `SELECT "resource_manager/record_type" AS t, count AS n, record_size AS rec, fpi_size AS fpi
         FROM pg_get_wal_stats($1::pg_lsn, pg_current_wal_flush_lsn(), true) WHERE count > 0 ORDER BY combined_size DESC LIMIT 10`,
      [before.lsn],
    );
    const redisStats = (await stack.redis.client().info('commandstats'))
      .split('\n')
      .map((l) => /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(l))
      .filter((m): m is RegExpExecArray => !!m)
      .sort((a, b) => Number(b[3]) - Number(a[3]))
      .slice(0, 12);
    ctx.log(`    ${kind} Redis: ${redisStats.map((m) => `${m[1]} ${(Number(m[2]) / orders).toFixed(2)}/card ${(Number(m[3]) / orders).toFixed(0)} us/card`).join(', ')}`);
    for (const r of wal.rows) ctx.log(`    ${kind} WAL ${r.t.padEnd(24)} ${(Number(r.n) / orders).toFixed(2)}/card, records ${(Number(r.rec) / orders).toFixed(0)} B/card, full pages ${(Number(r.fpi) / orders).toFixed(0)} B/card`);
    // The same WAL by the table or index each record's first block belongs to, and the record type (the 30 largest).
    const byRel = await stack.db.query<{ rel: string; bytes: string }>(
      `SELECT coalesce(c.relname, '(none)') || ' ' || w.resource_manager || '/' || w.record_type AS rel, sum(w.record_length) AS bytes
         FROM pg_get_wal_records_info($1::pg_lsn, pg_current_wal_flush_lsn()) w
         LEFT JOIN pg_class c ON c.relfilenode = substring(w.block_ref FROM 'rel \\d+/\\d+/(\\d+)')::oid
        GROUP BY 1 ORDER BY 2 DESC LIMIT 30`,
      [before.lsn],
    );
    ctx.log(`    ${kind} WAL by relation (B/card): ${byRel.rows.map((r) => `${r.rel} ${(Number(r.bytes) / orders).toFixed(0)}`).join('\n      ')}`);
  }
  const { rows } = await stack.db.query<{ n: string }>('SELECT count(*) AS n FROM cards');
  return { kind, ...done, cards: Number(rows[0]!.n), commitsPerCard: counted.commitsPerCard, walPerCard: counted.walPerCard };
}

/** ms of CPU per card of one process group (or of all of them) between 10 % and 90 % of the run. */
function cpuMs(run: Run, group?: string): number {
  const cores = group ? (run.cores[group] ?? 0) : Object.values(run.cores).reduce((a, b) => a + b, 0);
  return (cores * 1000) / run.steadyPerS;
}

export async function e2eBench(ctx: BenchContext): Promise<Figure[]> {
  const { stack, settings: s, log } = ctx;
  await stack.reset();
  await stack.startSim({ SIM_SYNC_DELAY_MS: '0' });
  const api = await stack.startApi();
  log(`e2e: ${s.e2eOrders} sync orders per run, created with no worker; ${s.e2eRounds} rounds (BENCH_E2E_ROUNDS), worker and bare alternating which goes first (concurrency 32, pool 10, one process each)`);
  const runs: Run[] = [];
  for (let round = 0; round < s.e2eRounds; round++) {
    for (const kind of (round % 2 ? ['bare', 'worker'] : ['worker', 'bare']) as Run['kind'][]) {
      await stack.reset();
      await stack.resetLedger();
      // A checkpoint before the orders are written: the run that follows then starts a fresh checkpoint
      // interval (5 min), so no timed checkpoint falls inside it and its WAL holds no full-page images
      // (a first change to each page after a checkpoint logs the whole page: 0.4 KB per card more, in
      // whichever run happened to straddle one).
      await stack.db.query('CHECKPOINT').catch((e: Error) => log(`  (no CHECKPOINT before the run: ${e.message})`));
      const intakeBefore = await pgCounters(ctx);
      await createOrders({ url: api.url, apiKey: stack.apiKey, count: s.e2eOrders, mode: 'sync', concurrency: 16, prefix: `e2e${round}${kind}` });
      const intake = await perCard(ctx, intakeBefore, s.e2eOrders);
      // Fresh statistics for the tables the run reads, as autovacuum would have them in a steady state: after
      // the TRUNCATE they say the tables are empty, and a plan made from that can cost a run a scan per card
      // (the bare script's completion picked the partial index of orders not completed, all 5,000 of them,
      // for its `status <> 'completed'` guard: 10 ms per card in Postgres, 230-340 cards/s in the runs where
      // autovacuum had not analyzed the table yet, 680-820 where it had). Either run gets the same.
      await stack.db.query('ANALYZE orders, attempts, cards, order_events, ledger_transactions, ledger_entries');
      const run: Run = { ...(await timeRun(ctx, kind, s.e2eOrders)), intakeCommitsPerCard: intake.commitsPerCard, intakeWalPerCard: intake.walPerCard };
      if (run.cards !== s.e2eOrders) throw new Error(`${kind}: ${run.cards} cards stored for ${s.e2eOrders} orders`);
      runs.push(run);
      log(`  ${kind.padEnd(6)} round ${round + 1}: ${run.steadyPerS.toFixed(0)} cards/s (10-90 %), all ${s.e2eOrders} in ${run.totalS.toFixed(1)} s from spawn; per card ${run.commitsPerCard.toFixed(2)} commits, ${(run.walPerCard / 1024).toFixed(2)} KB WAL (intake ${run.intakeCommitsPerCard.toFixed(2)}, ${(run.intakeWalPerCard / 1024).toFixed(2)} KB); cores: ${describeCores(run.cores)}`);
      const own = (h: Run['halves'][number]) => `${h.perS.toFixed(0)} cards/s, ${(((h.cores[kind] ?? 0) * 1000) / h.perS).toFixed(3)} ms ${kind} CPU per card`;
      log(`         halves: 10-50 % ${own(run.halves[0]!)}; 50-90 % ${own(run.halves[1]!)}`);
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
      target: 'ratio >= 0.95',
      pass: value / base >= 0.95,
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
    ...(
      [
        ['the worker process', 'worker', 'bare'],
        ['Postgres', 'postgres', 'postgres'],
        ['all processes', undefined, undefined],
      ] as const
    ).map(([what, service, baseline]) =>
      figure({
        bench: 'e2e',
        figure: `CPU per card, ${what} (10-90 %)`,
        value: median(worker.map((r) => cpuMs(r, service))),
        unit: 'ms',
        baseline: median(bare.map((r) => cpuMs(r, baseline))),
        baselineLabel: 'bare run',
        target: '-',
        pass: null,
      }),
    ),
    figure({
      bench: 'e2e',
      figure: 'Postgres commits per card (transactions that wrote), worker run',
      value: median(worker.map((r) => r.commitsPerCard)),
      unit: '',
      baseline: median(bare.map((r) => r.commitsPerCard)),
      baselineLabel: 'bare',
      target: '<= 2',
      // Per card to two decimals: a periodic task's write (a lease, a sweep) in a run of thousands is not the card's.
      pass: Math.round(median(worker.map((r) => r.commitsPerCard)) * 100) / 100 <= 2,
    }),
    figure({
      bench: 'e2e',
      figure: 'WAL per card, worker run',
      value: median(worker.map((r) => r.walPerCard)) / 1024,
      unit: 'KB',
      baseline: median(bare.map((r) => r.walPerCard)) / 1024,
      baselineLabel: 'bare',
      target: '<= 3 KB',
      pass: median(worker.map((r) => r.walPerCard)) <= 3 * 1024,
    }),
    figure({
      bench: 'e2e',
      figure: 'WAL per order, intake (API, both runs)',
      value: median(runs.map((r) => r.intakeWalPerCard)) / 1024,
      unit: 'KB',
      baseline: null,
      baselineLabel: '-',
      target: '-',
      pass: null,
      note: `${median(runs.map((r) => r.intakeCommitsPerCard)).toFixed(2)} commits per order`,
    }),
  ];
}
