import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { redisOptions } from '@cardpull/queue';
import { type BenchContext, sleep, until, withCpu } from './support/context';
import { describeCores } from './support/cpu';
import { intakePeak } from './support/http-load';
import { createPending, isPoll, ledgerSince } from './support/pending';
import { figure, median, type Figure } from './support/report';

/**
 * Scale: BENCH_PENDING async orders pending and polled (the simulator keeps pull requests `waiting` for an
 * hour; the worker polls at the production intervals, 2 s then every 5-10 s). Measures, in one run:
 *  - intake rate with none pending, then with all of them pending (sync orders, one worker running in both);
 *  - Redis memory per pending order (INFO used_memory) against a bare delayed BullMQ job with an order id;
 *  - Postgres row writes during a period with nothing but polls that change nothing.
 */

const TABLES = ['orders', 'attempts', 'order_events', 'cards', 'callback_events'];

/** Rows inserted, updated or deleted so far, per table (every table; the order tables make the figure). */
async function rowWrites(ctx: BenchContext): Promise<{ perTable: Record<string, number>; total: number; dbTupUpdated: number; dbTupInserted: number; xactCommit: number }> {
  const { rows } = await ctx.stack.db.query<{ relname: string; w: string }>('SELECT relname, n_tup_ins + n_tup_upd + n_tup_del AS w FROM pg_stat_user_tables');
  const db = await ctx.stack.db.query<{ upd: string; ins: string; xact: string }>(
    'SELECT tup_updated AS upd, tup_inserted AS ins, xact_commit AS xact FROM pg_stat_database WHERE datname = current_database()',
  );
  const perTable = Object.fromEntries(rows.map((r) => [r.relname, Number(r.w)]));
  return {
    perTable,
    total: TABLES.reduce((sum, t) => sum + (perTable[t] ?? 0), 0),
    dbTupUpdated: Number(db.rows[0]!.upd),
    dbTupInserted: Number(db.rows[0]!.ins),
    xactCommit: Number(db.rows[0]!.xact),
  };
}

const completedCount = async (ctx: BenchContext) =>
  Number((await ctx.stack.db.query<{ n: string }>("SELECT count(*) AS n FROM orders WHERE status = 'completed'")).rows[0]!.n);

async function intakeRounds(ctx: BenchContext, apiUrl: string, label: string): Promise<{ rates: number[]; runs: Record<string, unknown>[] }> {
  const { stack, settings: s, log } = ctx;
  const rates: number[] = [];
  const runs: Record<string, unknown>[] = [];
  for (let round = 0; round < s.rounds; round++) {
    const since = Date.now();
    const completedBefore = await completedCount(ctx);
    const { result, cores } = await withCpu(ctx.cpu, () =>
      intakePeak({ url: apiUrl, apiKey: stack.apiKey, connections: s.connections, seconds: s.intakeSeconds, prefix: `${label}${round}` }),
    );
    const completedPerS = ((await completedCount(ctx)) - completedBefore) / result.seconds;
    const polls = (await ledgerSince(stack.sim!.client, since)).filter(isPoll).length / result.seconds;
    rates.push(result.acceptedPerS);
    runs.push({ ...result, pollsPerS: polls, completedPerS, cores });
    log(`  ${label} round ${round + 1}: ${result.acceptedPerS.toFixed(0)} accepted/s; meanwhile the worker completed ${completedPerS.toFixed(0)}/s and polled ${polls.toFixed(0)}/s; cores: ${describeCores(cores)}`);
    // The worker completes the sync orders of the run before the next one starts.
    const drained = await until(async () => {
      const { rows } = await stack.db.query<{ n: string }>("SELECT count(*) AS n FROM orders WHERE mode = 'sync' AND status <> 'completed'");
      return Number(rows[0]!.n) === 0;
    }, 180_000, 500);
    if (!drained) throw new Error(`${label}: the worker did not complete the intake's sync orders within 180 s`);
  }
  return { rates, runs };
}

/** Bytes of Redis per delayed BullMQ job carrying an order id, in a queue of its own (its events stream excluded). */
async function bareJobBytes(ctx: BenchContext, count: number): Promise<{ perJob: number; streamBytes: number }> {
  const queue = new Queue('bare-jobs', { connection: redisOptions(ctx.stack.redis.url), prefix: 'bench' });
  try {
    const before = await ctx.stack.redisUsedMemory();
    for (let i = 0; i < count; i += 500) {
      const n = Math.min(500, count - i);
      await queue.addBulk(
        Array.from({ length: n }, () => {
          const orderId = randomUUID();
          return { name: 'async_poll', data: { orderId }, opts: { jobId: `${orderId}-1`, delay: 3_600_000 } };
        }),
      );
    }
    const after = await ctx.stack.redisUsedMemory();
    const streamBytes = Number((await ctx.stack.redis.client().memory('USAGE', 'bench:bare-jobs:events')) ?? 0);
    return { perJob: (after - before - streamBytes) / count, streamBytes };
  } finally {
    await queue.obliterate({ force: true });
    await queue.close();
  }
}

export async function scaleBench(ctx: BenchContext): Promise<Figure[]> {
  const { stack, settings: s, log } = ctx;
  await stack.reset();
  const sim = await stack.startSim({ SIM_ASYNC_DELAY_MS: '3600000', SIM_SYNC_DELAY_MS: '0' });
  const api = await stack.startApi();
  const worker = await stack.startWorker('worker');
  log(`scale: API and one worker (production poll intervals: first 2 s, then 5-10 s); intake of sync orders, ${s.rounds} rounds of ${s.intakeSeconds} s, before and with ${s.pending} pending`);
  const emptyRedis = await stack.redisUsedMemory();
  await intakePeak({ url: api.url, apiKey: stack.apiKey, connections: s.connections, seconds: 3, prefix: 'warm' });
  const none = await intakeRounds(ctx, api.url, 'none-pending');

  const eventsKey = 'cardpull:orders:events';
  const m0 = await stack.redisUsedMemory();
  const stream0 = Number((await stack.redis.client().memory('USAGE', eventsKey)) ?? 0);
  const created = await createPending({ db: stack.db, apiUrl: api.url, apiKey: stack.apiKey, count: s.pending, log, prefix: 'pending' });
  const m1 = await stack.redisUsedMemory();
  const stream1 = Number((await stack.redis.client().memory('USAGE', eventsKey)) ?? 0);
  const perOrder = (m1 - m0) / s.pending;
  const bare = await bareJobBytes(ctx, s.pending);
  const redisKeys = await stack.redis.client().dbsize();
  log(`  Redis: ${(perOrder / 1024).toFixed(2)} KB per pending order (used_memory ${(m0 / 1e6).toFixed(1)} -> ${(m1 / 1e6).toFixed(1)} MB; from an empty Redis ${((m1 - emptyRedis) / s.pending / 1024).toFixed(2)} KB); bare delayed job ${(bare.perJob / 1024).toFixed(2)} KB`);

  // Only polls that change nothing: let earlier statistics reach pg_stat (backends flush them within ~10 s idle), then count.
  await sleep(11_000);
  const w0 = await rowWrites(ctx);
  const t0 = Date.now();
  await sleep(20_000);
  await sleep(11_000);
  const w1 = await rowWrites(ctx);
  const polls = (await ledgerSince(sim, t0)).filter(isPoll);
  const writes = w1.total - w0.total;
  const windowS = (Date.now() - t0) / 1000;
  const perTable = Object.fromEntries(Object.entries(w1.perTable).map(([k, v]) => [k, v - (w0.perTable[k] ?? 0)]).filter(([k, v]) => TABLES.includes(k as string) || v !== 0));
  log(`  unchanged polls: ${polls.length} polls in ${windowS.toFixed(0)} s (${(polls.length / windowS).toFixed(0)}/s), row writes to ${TABLES.join('/')}: ${writes} (${JSON.stringify(perTable)}); database-wide tup_updated +${w1.dbTupUpdated - w0.dbTupUpdated}, tup_inserted +${w1.dbTupInserted - w0.dbTupInserted}, commits +${w1.xactCommit - w0.xactCommit}`);

  const withPending = await intakeRounds(ctx, api.url, 'pending');
  await worker.proc.stop(15_000);
  await api.proc.stop();
  await stack.reset();
  const expectedPollsPerS = s.pending / 7.5;
  ctx.details.scale = {
    pending: s.pending,
    created,
    none: none.runs,
    withPending: withPending.runs,
    redis: { emptyBytes: emptyRedis, beforeBytes: m0, afterBytes: m1, keysAfter: redisKeys, eventsStreamBytes: { before: stream0, after: stream1 }, perOrderBytes: perOrder, fromEmptyPerOrderBytes: (m1 - emptyRedis) / s.pending, bareJobBytes: bare.perJob, bareStreamBytes: bare.streamBytes },
    unchangedPolls: { windowS, polls: polls.length, pollsPerS: polls.length / windowS, expectedPollsPerS, rowWrites: writes, perTable, dbTupUpdated: w1.dbTupUpdated - w0.dbTupUpdated, dbTupInserted: w1.dbTupInserted - w0.dbTupInserted, commits: w1.xactCommit - w0.xactCommit },
  };
  const a = median(none.rates);
  const b = median(withPending.rates);
  return [
    figure({ bench: 'scale', figure: `intake/s with ${s.pending} pending polled`, value: b, unit: '/s', baseline: a, baselineLabel: 'none pending', target: 'ratio >= 0.8', pass: b / a >= 0.8, samples: withPending.rates, baselineSamples: none.rates }),
    figure({ bench: 'scale', figure: 'Redis bytes per pending order', value: perOrder / 1024, unit: 'KB', baseline: bare.perJob / 1024, baselineLabel: 'bare delayed job', target: '<= 2 KB', pass: perOrder <= 2048 }),
    figure({
      bench: 'scale',
      figure: `Postgres row writes during unchanged polls`,
      value: writes,
      unit: 'rows',
      baseline: polls.length,
      baselineUnit: 'polls',
      baselineLabel: `in ${windowS.toFixed(0)} s`,
      target: '0 writes',
      pass: writes === 0,
      note: `${(polls.length / windowS).toFixed(0)} polls/s achieved, ${expectedPollsPerS.toFixed(0)}/s expected at 5-10 s intervals`,
    }),
    figure({ bench: 'scale', figure: 'polls/s achieved (unchanged-poll window)', value: polls.length / windowS, unit: '/s', baseline: expectedPollsPerS, baselineLabel: 'pending / 7.5 s', target: '-', pass: null }),
  ];
}
