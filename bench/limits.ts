import { readFileSync } from 'node:fs';
import { Queue } from 'bullmq';
import { ORDERS_QUEUE, orderStepJobId, redisOptions } from '@cardpull/queue';
import type { LedgerRequest, SimLimitsView } from '@cardpull/sim-contract';
import type { SimClient } from './chaos/faults';
import { type BenchContext, sleep, until } from './support/context';
import { CpuMeter, describeCores, type CpuSample } from './support/cpu';
import { createOrders, pacedIntake } from './support/http-load';
import { createPending, isPoll, ledgerSince } from './support/pending';
import { figure, median, percentile, type Figure } from './support/report';
import type { Running } from './support/stack';

/**
 * Limits (issue 12): cardpull against a partner that enforces a rate limit (the simulator's SIM_LIMITS /
 * PUT /_sim/limits), with the same limit given to cardpull (PARTNER_LIMITS, shared by every process
 * through Redis). Production timings. Three runs:
 *  - limited partner: BENCH_LIMITS_ORDERS sync orders then as many async ones, created with no worker, then
 *    1 (and, in a second run, 3) worker processes timed until every card is stored; the partner takes
 *    BENCH_LIMITS_RATE creations/s. Cards stored per second (between 1 % and 99 % of them: not the e2e
 *    bench's 10-90 %, because the async orders' polls wait behind every creation, so their cards come in a
 *    burst once the creations are done, and that gap falls inside 10-90 %) against the limit, and the
 *    partner's 429s as a share of the creation calls (its own counts, GET /_sim/limits);
 *  - Retry-After storm: 3 workers, sync orders flowing at half the limit; for 10 s the partner answers
 *    every creation 429 with Retry-After: 5, then takes the limit again. Creations that reached it during
 *    our pauses (the intervals the workers logged, `partnerPause`), and the rate at which the backlog drains
 *    once the pause is over;
 *  - starvation: BENCH_LIMITS_PENDING async orders pending and polled, the partner limited to
 *    BENCH_LIMITS_RATE calls/s of any kind (polls and creations share it), then BENCH_LIMITS_NEW new sync
 *    orders: the p99 time from intake to card of the new orders against 2 x (new / limit) + the partner's
 *    latency. Polls yield to creations (PARTNER_POLL_MAX_YIELD_MS) and new orders' steps go before polls in
 *    the queue; without either the new orders would wait behind thousands of due polls;
 *  - fairness: one client sends BENCH_FAIR_BULK sync orders at once (one worker, the partner limited to
 *    BENCH_LIMITS_RATE creations/s), a second client then sends BENCH_FAIR_SECOND: the second client's p99
 *    time from intake to card against 2 x (its orders / its fair share, half the limit). In first-come
 *    order it would wait for the import's backlog (shown beside it).
 */

const CARDS = '/partners/v1/cards';
const PULL_REQUESTS = '/partners/v1/pull_requests';
const isCreation = (r: Pick<LedgerRequest, 'method' | 'path'>) => r.method === 'POST' && (r.path === CARDS || r.path === PULL_REQUESTS);
const admitted = (r: LedgerRequest) => r.status !== null && r.status < 300;
const ms = (iso: string) => Date.parse(iso);

/** A creation whose permit was given just before a pause began may still arrive this long after it began. */
const ON_THEIR_WAY_MS = 400;
/** The end of a pause is read from Redis's clock and the workers' timers: this much slack at its end. */
const PAUSE_END_SLACK_MS = 50;

const STORM = { startS: 5, lengthS: 10, retryAfterS: 5, flowS: 40 };

async function count(ctx: BenchContext, sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await ctx.stack.db.query<{ n: string }>(sql, params);
  return Number(rows[0]!.n);
}

/** The BullMQ state of the open orders' jobs (a stuck run's picture): state -> count, and a few job ids per state. */
async function openJobStates(ctx: BenchContext): Promise<{ states: Record<string, number>; examples: Record<string, string[]> }> {
  const { rows } = await ctx.stack.db.query<{ id: string; step_seq: number }>(
    "SELECT id, step_seq FROM orders WHERE status NOT IN ('completed', 'failed', 'needs_attention') LIMIT 2000",
  );
  const queue = new Queue(ORDERS_QUEUE, { connection: redisOptions(ctx.stack.redis.url), prefix: 'cardpull' });
  const states: Record<string, number> = {};
  const examples: Record<string, string[]> = {};
  try {
    for (const r of rows) {
      const jobId = orderStepJobId(r.id, r.step_seq);
      const state = await queue.getJobState(jobId);
      states[state] = (states[state] ?? 0) + 1;
      if ((examples[state] ??= []).length < 3) {
        const job = await queue.getJob(jobId);
        examples[state]!.push(`${jobId} ${job ? `name ${job.name} attempts ${job.attemptsMade} delay ${job.delay} ts ${new Date(job.timestamp).toISOString()} failed ${job.failedReason ?? '-'}` : '(no job)'}`);
      }
    }
  } finally {
    await queue.close();
  }
  return { states, examples };
}

/** Open orders by status, next step and attempt state, with when their next step is due (a stuck run's picture). */
async function openBreakdown(ctx: BenchContext): Promise<Record<string, unknown>[]> {
  const { rows } = await ctx.stack.db.query(
    `SELECT o.status::text AS status, o.next_step::text AS next_step, a.state::text AS attempt, a.partner_status, count(*)::int AS n,
            round(extract(epoch FROM min(o.next_step_at) - now())::numeric, 1) AS due_min_s, round(extract(epoch FROM max(o.next_step_at) - now())::numeric, 1) AS due_max_s
       FROM orders o LEFT JOIN attempts a ON a.order_id = o.id AND a.seq = (SELECT max(seq) FROM attempts x WHERE x.order_id = o.id)
      WHERE o.status NOT IN ('completed', 'failed', 'needs_attention') GROUP BY 1, 2, 3, 4 ORDER BY n DESC LIMIT 10`,
  );
  return rows as Record<string, unknown>[];
}

async function stopAll(procs: Running[]): Promise<void> {
  await Promise.all(procs.map((p) => p.proc.stop(15_000)));
}

// ---------------------------------------------------------------------------------------------------------
// Limited partner

interface LimitedRun {
  workers: number;
  orders: number;
  /** Cards stored/s between 1 % and 99 % of them (the figure). */
  steadyPerS: number;
  /** Between 10 % and 90 % (the e2e bench's window): lower here, see below. */
  perS10to90: number;
  /** Cards stored/s while only sync orders completed (1 % to 45 %). */
  syncPhasePerS: number;
  /** Creations the partner admitted per second, from the first to the last (its ledger). */
  creationsPerS: number;
  /** Seconds from the first card to the last (the tail: an order whose call met a 429 waits for the spec's retry). */
  firstToLastS: number;
  totalS: number;
  cards: number;
  creations: { admitted: number; refused: number };
  refusedShare: number;
  /** From the ledger: creation calls and their statuses. */
  ledgerCreations: number;
  ledgerStatuses: Record<string, number>;
  cores: Record<string, number>;
}

async function limitedRun(ctx: BenchContext, apiUrl: string, sim: SimClient, workers: number, partnerLimits: string): Promise<LimitedRun> {
  const { stack, settings: s } = ctx;
  const n = s.limitsOrders;
  const rate = s.limitsRate;
  await stack.reset();
  await sim.setLimits({ create: { per_second: rate } });
  await createOrders({ url: apiUrl, apiKey: stack.apiKey, count: n, mode: 'sync', concurrency: 16, prefix: `lim${workers}s` });
  await createOrders({ url: apiUrl, apiKey: stack.apiKey, count: n, mode: 'async', concurrency: 16, prefix: `lim${workers}a` });
  const since = Date.now();
  const procs: Running[] = [];
  for (let i = 0; i < workers; i++) procs.push(await stack.startWorker(`worker-limited-${workers}w-${i + 1}`, { PARTNER_LIMITS: partnerLimits }, false));
  const marks: { at: number; done: number }[] = [];
  let cpu1: CpuSample | null = null;
  let cpu99: CpuSample | null = null;
  const total = 2 * n;
  try {
    const deadline = Date.now() + (total / rate) * 2_000 + 90_000;
    for (;;) {
      const done = await count(ctx, 'SELECT count(*) AS n FROM cards');
      marks.push({ at: Date.now(), done });
      if (!cpu1 && done >= total * 0.01) cpu1 = ctx.cpu.sample();
      if (!cpu99 && done >= total * 0.99) cpu99 = ctx.cpu.sample();
      if (done >= total) break;
      if (Date.now() > deadline) throw new Error(`limited partner, ${workers} workers: only ${done} of ${total} cards stored after ${((Date.now() - since) / 1000).toFixed(0)} s`);
      await sleep(250);
    }
  } finally {
    await stopAll(procs);
  }
  const view = await sim.limits();
  const calls = (await ledgerSince(sim, since)).filter(isCreation);
  const statuses: Record<string, number> = {};
  for (const c of calls) statuses[String(c.status)] = (statuses[String(c.status)] ?? 0) + 1;
  const rateBetween = (a: number, b: number) => {
    const from = marks.find((m) => m.done >= Math.max(1, total * a))!;
    const to = marks.find((m) => m.done >= total * b)!;
    return (to.done - from.done) / Math.max(0.001, (to.at - from.at) / 1000);
  };
  const firstCard = marks.find((m) => m.done >= 1)!;
  const admittedAt = calls.filter(admitted).map((c) => ms(c.at));
  const { admitted: ok, refused } = view.counts.create;
  return {
    workers,
    orders: total,
    steadyPerS: rateBetween(0.01, 0.99),
    perS10to90: rateBetween(0.1, 0.9),
    syncPhasePerS: rateBetween(0.01, 0.45),
    creationsPerS: (admittedAt.length - 1) / Math.max(0.001, (Math.max(...admittedAt) - Math.min(...admittedAt)) / 1000),
    firstToLastS: (marks.at(-1)!.at - firstCard.at) / 1000,
    totalS: (marks.at(-1)!.at - since) / 1000,
    cards: marks.at(-1)!.done,
    creations: { admitted: ok, refused },
    refusedShare: refused / Math.max(1, ok + refused),
    ledgerCreations: calls.length,
    ledgerStatuses: statuses,
    cores: cpu1 && cpu99 ? CpuMeter.cores(cpu1, cpu99) : {},
  };
}

async function limitedPartner(ctx: BenchContext, apiUrl: string, sim: SimClient, partnerLimits: string): Promise<Figure[]> {
  const { settings: s, log } = ctx;
  const runs: LimitedRun[] = [];
  for (const workers of [1, 3]) {
    const run = await limitedRun(ctx, apiUrl, sim, workers, partnerLimits);
    runs.push(run);
    log(
      `  limited partner, ${workers} worker${workers > 1 ? 's' : ''}: ${run.steadyPerS.toFixed(1)} cards/s (1-99 %; 10-90 %: ${run.perS10to90.toFixed(1)}, sync part ${run.syncPhasePerS.toFixed(1)}), ` +
        `creations admitted ${run.creationsPerS.toFixed(1)}/s; all ${run.orders} cards ${run.firstToLastS.toFixed(1)} s from the first, ${run.totalS.toFixed(1)} s from spawn; ` +
        `partner admitted ${run.creations.admitted} creations, refused ${run.creations.refused} (${(100 * run.refusedShare).toFixed(2)} %); cores: ${describeCores(run.cores)}`,
    );
  }
  ctx.details.limitsLimitedPartner = { ordersPerMode: s.limitsOrders, rate: s.limitsRate, partnerLimits, runs };
  return runs.flatMap((r) => {
    const who = `${r.workers} worker${r.workers > 1 ? 's' : ''}`;
    return [
      figure({
        bench: 'limits',
        figure: `cards stored/s, partner limited to ${s.limitsRate} creations/s, ${s.limitsOrders} sync + ${s.limitsOrders} async, ${who}`,
        value: r.steadyPerS,
        unit: '/s',
        baseline: s.limitsRate,
        baselineLabel: "partner's limit",
        target: 'ratio >= 0.9',
        pass: r.steadyPerS >= 0.9 * s.limitsRate,
        note: `1-99 % of the cards; 10-90 %: ${r.perS10to90.toFixed(1)}/s (async cards wait for polls, which go after every creation); creations admitted ${r.creationsPerS.toFixed(1)}/s`,
      }),
      figure({
        bench: 'limits',
        figure: `partner 429s, share of creation calls, ${who}`,
        value: 100 * r.refusedShare,
        unit: '%',
        baseline: r.creations.admitted + r.creations.refused,
        baselineUnit: 'calls',
        baselineLabel: 'creation calls',
        target: '<= 1 %',
        pass: r.refusedShare <= 0.01,
        ratio: null,
        note: `${r.creations.refused} refused of ${r.creations.admitted + r.creations.refused}`,
      }),
    ];
  });
}

// ---------------------------------------------------------------------------------------------------------
// Retry-After storm

export interface Pause {
  worker: string;
  kind: string;
  /** When the worker learned of the 429 (until - Retry-After), ms. */
  from: number;
  until: number;
  retryAfterMs: number;
  lengthened: boolean;
}

/** The pauses a worker logged (`partnerPause` with `until`: a pause begun or lengthened). */
export function pausesLogged(logFile: string, worker: string): Pause[] {
  const out: Pause[] = [];
  let text = '';
  try {
    text = readFileSync(logFile, 'utf8');
  } catch {
    return out;
  }
  for (const line of text.split('\n')) {
    if (!line.includes('"partnerPause"') || !line.includes('"until"')) continue;
    try {
      const entry = JSON.parse(line) as { partnerPause?: { kind: string; until: string; retryAfterMs: number }; msg?: string };
      const p = entry.partnerPause;
      if (!p?.until) continue;
      const until = Date.parse(p.until);
      out.push({ worker, kind: p.kind, from: until - p.retryAfterMs, until, retryAfterMs: p.retryAfterMs, lengthened: (entry.msg ?? '').includes('lengthened') });
    } catch {
      // not a JSON line
    }
  }
  return out;
}

/** Creations that arrived while a pause was on: beyond its first ON_THEIR_WAY_MS (`during`), or within them. */
export function arrivalsInPauses(calls: LedgerRequest[], pauses: Pause[]): { during: LedgerRequest[]; onTheirWay: { call: LedgerRequest; afterMs: number }[] } {
  const during: LedgerRequest[] = [];
  const onTheirWay: { call: LedgerRequest; afterMs: number }[] = [];
  for (const c of calls) {
    const at = ms(c.at);
    const inside = pauses.filter((p) => at > p.from && at < p.until - PAUSE_END_SLACK_MS);
    if (!inside.length) continue;
    if (inside.some((p) => at > p.from + ON_THEIR_WAY_MS)) during.push(c);
    else onTheirWay.push({ call: c, afterMs: at - Math.max(...inside.map((p) => p.from)) });
  }
  return { during, onTheirWay };
}

async function storm(ctx: BenchContext, apiUrl: string, sim: SimClient, partnerLimits: string): Promise<Figure[]> {
  const { stack, settings: s, log } = ctx;
  const rate = s.limitsRate;
  const flowRate = Math.max(1, Math.round(rate / 2));
  await stack.reset();
  await sim.setLimits({ create: { per_second: rate } });
  const workers: Running[] = [];
  for (let i = 0; i < 3; i++) workers.push(await stack.startWorker(`worker-storm-${i + 1}`, { PARTNER_LIMITS: partnerLimits }));
  log(`  storm: 3 workers, sync orders at ${flowRate}/s for ${STORM.flowS} s; from ${STORM.startS} s for ${STORM.lengthS} s the partner answers every creation 429 with Retry-After: ${STORM.retryAfterS}`);
  const t0 = Date.now();
  let stormStart = 0;
  let stormEnd = 0;
  let duringStorm: SimLimitsView | null = null;
  let beforeStorm: SimLimitsView | null = null;
  const flow = pacedIntake({ url: apiUrl, apiKey: stack.apiKey, rate: flowRate, seconds: STORM.flowS, connections: 8, prefix: 'storm' });
  const switches = (async () => {
    await sleep(STORM.startS * 1000);
    beforeStorm = await sim.limits();
    // per_second 0.01: the bucket starts (nearly) empty and refills once in 100 s: every creation is refused.
    await sim.setLimits({ create: { per_second: 0.01, retry_after_s: STORM.retryAfterS } });
    stormStart = Date.now();
    await sleep(STORM.lengthS * 1000);
    duringStorm = await sim.limits();
    await sim.setLimits({ create: { per_second: rate } });
    stormEnd = Date.now();
  })();
  let intake;
  try {
    [intake] = await Promise.all([flow, switches]);
    const open = async () => count(ctx, "SELECT count(*) AS n FROM orders WHERE status NOT IN ('completed', 'failed', 'needs_attention')");
    if (!(await until(async () => (await open()) === 0, 120_000, 500))) {
      const stuck = { orders: await openBreakdown(ctx), jobs: await openJobStates(ctx) };
      const since = (await ledgerSince(sim, stormEnd)).filter(isCreation);
      ctx.details.limitsStorm = { stuck, creationsAfterStorm: since.length, lastCreation: since.at(-1)?.at ?? null };
      throw new Error(`storm: ${await open()} orders not completed 120 s after the flow ended (${since.length} creations reached the partner after the storm, the last at ${since.at(-1)?.at ?? '-'}): ${JSON.stringify(stuck)}`);
    }
  } finally {
    await stopAll(workers);
  }
  const afterStorm = await sim.limits();
  const calls = (await ledgerSince(sim, t0)).filter(isCreation).sort((a, b) => ms(a.at) - ms(b.at));
  const pauses = workers.flatMap((w) => pausesLogged(w.proc.logFile, w.proc.label)).filter((p) => p.kind === 'create').sort((a, b) => a.from - b.from);
  const { during, onTheirWay } = arrivalsInPauses(calls, pauses);
  const lastUntil = pauses.length ? Math.max(...pauses.map((p) => p.until)) : stormEnd;
  const drainFrom = Math.max(lastUntil, stormEnd);
  // The backlog: orders created before the drain began; drained when the last of them is completed.
  const { rows } = await stack.db.query<{ t: Date | null; n: string }>('SELECT max(completed_at) AS t, count(*) AS n FROM orders WHERE created_at <= $1', [new Date(drainFrom)]);
  const backlogDoneAt = rows[0]!.t ? rows[0]!.t.getTime() : drainFrom;
  const windowMs = Math.max(1_000, Math.min(10_000, backlogDoneAt - drainFrom));
  const drained = calls.filter((c) => admitted(c) && ms(c.at) >= drainFrom && ms(c.at) < drainFrom + windowMs).length;
  const drainPerS = drained / (windowMs / 1000);
  const backlogAtDrain = await count(ctx, "SELECT count(*) AS n FROM orders WHERE created_at <= $1 AND (completed_at IS NULL OR completed_at > $1)", [new Date(drainFrom)]);
  const firstAfter = calls.find((c) => admitted(c) && ms(c.at) >= stormEnd);
  const refusedInStorm = calls.filter((c) => c.status === 429 && ms(c.at) >= stormStart && ms(c.at) < stormEnd).length;
  const refusedAfter = calls.filter((c) => c.status === 429 && ms(c.at) >= stormEnd).length;
  const rel = (t: number) => Number(((t - stormStart) / 1000).toFixed(2));
  const pauseSpans = mergeSpans(pauses.map((p) => [p.from, p.until] as [number, number]));
  const pausedS = pauseSpans.reduce((sum, [a, b]) => sum + (b - a) / 1000, 0);
  log(
    `  storm: ${pauses.length} pauses logged (${pauses.filter((p) => !p.lengthened).length} begun, ${pauses.filter((p) => p.lengthened).length} lengthened) by ${new Set(pauses.map((p) => p.worker)).size} workers, ` +
      `paused ${pausedS.toFixed(1)} s in all (${pauseSpans.map(([a, b]) => `${rel(a)}..${rel(b)} s`).join(', ')} from the storm's start); ` +
      `creations arriving during a pause: ${during.length}, already on their way: ${onTheirWay.length}${onTheirWay.length ? ` (at most ${Math.max(...onTheirWay.map((o) => o.afterMs))} ms after the pause began)` : ''}`,
  );
  log(
    `  storm: ${refusedInStorm} creations refused during the storm, ${refusedAfter} after it; first creation admitted ${firstAfter ? ((ms(firstAfter.at) - stormEnd) / 1000).toFixed(2) : '-'} s after the storm ended; ` +
      `backlog of ${backlogAtDrain} orders drained at ${drainPerS.toFixed(1)} creations/s (${drained} in ${(windowMs / 1000).toFixed(1)} s from ${rel(drainFrom)} s)`,
  );
  ctx.details.limitsStorm = {
    rate,
    flowRate,
    storm: STORM,
    intake,
    stormStart: new Date(stormStart).toISOString(),
    stormEnd: new Date(stormEnd).toISOString(),
    partnerCounts: { beforeStorm, duringStorm, afterStorm },
    pauses: pauses.map((p) => ({ ...p, from: new Date(p.from).toISOString(), until: new Date(p.until).toISOString() })),
    pausedS,
    during: during.map((c) => ({ at: c.at, status: c.status, request_id: c.request_id })),
    onTheirWay: onTheirWay.map((o) => ({ at: o.call.at, status: o.call.status, afterMs: o.afterMs })),
    refusedInStorm,
    refusedAfter,
    drain: { from: new Date(drainFrom).toISOString(), windowS: windowMs / 1000, admitted: drained, perS: drainPerS, backlogOrders: backlogAtDrain },
    firstAdmittedAfterStormS: firstAfter ? (ms(firstAfter.at) - stormEnd) / 1000 : null,
  };
  return [
    figure({
      bench: 'limits',
      figure: `creations reaching the partner during our Retry-After pauses (3 workers)`,
      value: during.length,
      unit: 'calls',
      baseline: calls.length,
      baselineLabel: 'creations in the run',
      target: '0',
      pass: during.length === 0 && pauses.length > 0,
      ratio: null,
      note: `${pauses.length} pauses, ${pausedS.toFixed(1)} s paused; ${onTheirWay.length} more already on their way (<= ${ON_THEIR_WAY_MS} ms after a pause began)`,
    }),
    figure({
      bench: 'limits',
      figure: `creations already on their way when a pause began (<= ${ON_THEIR_WAY_MS} ms)`,
      value: onTheirWay.length,
      unit: 'calls',
      baseline: null,
      baselineLabel: onTheirWay.length ? `latest ${Math.max(...onTheirWay.map((o) => o.afterMs))} ms after` : '-',
      target: '-',
      pass: null,
    }),
    figure({
      bench: 'limits',
      figure: `drain rate after a 10 s Retry-After: ${STORM.retryAfterS} storm (backlog ${backlogAtDrain})`,
      value: drainPerS,
      unit: '/s',
      baseline: rate,
      baselineLabel: "partner's limit",
      target: 'ratio >= 0.9',
      pass: drainPerS >= 0.9 * rate,
      note: `over ${(windowMs / 1000).toFixed(1)} s from the end of the last pause`,
    }),
  ];
}

function mergeSpans(spans: [number, number][]): [number, number][] {
  const sorted = [...spans].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [a, b] of sorted) {
    const last = out.at(-1);
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Starvation

async function starvation(ctx: BenchContext): Promise<Figure[]> {
  const { stack, settings: s, log } = ctx;
  const rate = s.limitsRate;
  const m = s.limitsPending;
  const fresh = s.limitsNew;
  const anyLimit = JSON.stringify({ any: { per_second: rate } });
  await stack.reset();
  // The pull requests stay `waiting` for an hour: the pending orders are polled all along.
  const sim = await stack.startSim({ SIM_ASYNC_DELAY_MS: '3600000', SIM_SYNC_DELAY_MS: '0' });
  log(`  starvation: ${m} async orders made pending with no limits (one worker), then the partner limited to ${rate} calls/s of any kind, cardpull too; then ${fresh} new sync orders`);
  let api = await stack.startApi();
  const setup = await stack.startWorker('worker-pending');
  let created;
  try {
    created = await createPending({ db: stack.db, apiUrl: api.url, apiKey: stack.apiKey, count: m, log, prefix: 'starve-pending' });
  } finally {
    await setup.proc.stop(15_000);
    await api.proc.stop();
  }
  await sim.setLimits({ any: { per_second: rate } });
  api = await stack.startApi({ PARTNER_LIMITS: anyLimit });
  const worker = await stack.startWorker('worker-starvation', { PARTNER_LIMITS: anyLimit });
  try {
    // The overdue polls take the whole limit before the new orders come.
    await sleep(5_000);
    const saturated = await sim.limits();
    const sentAt = Date.now();
    const ids = await createOrders({ url: api.url, apiKey: stack.apiKey, count: fresh, mode: 'sync', concurrency: 16, prefix: 'starve-new' });
    const intakeS = (Date.now() - sentAt) / 1000;
    const bound = (2 * fresh) / rate;
    const waitMs = Math.max(180_000, bound * 10_000);
    const done = async () => count(ctx, "SELECT count(*) AS n FROM orders WHERE id = ANY($1::uuid[]) AND status IN ('completed', 'failed', 'needs_attention')", [ids]);
    const finished = await until(async () => (await done()) >= fresh, waitMs, 250);
    const view = await sim.limits();
    const { rows } = await stack.db.query<{ status: string; ms: string | null }>(
      'SELECT status::text AS status, extract(epoch FROM (completed_at - created_at)) * 1000 AS ms FROM orders WHERE id = ANY($1::uuid[])',
      [ids],
    );
    const latencies = rows.map((r) => (r.status === 'completed' && r.ms !== null ? Number(r.ms) : Infinity));
    const requests = await ledgerSince(sim, sentAt);
    const cards = requests.filter((r) => r.method === 'POST' && r.path === CARDS);
    const partnerMs = median(cards.filter((c) => admitted(c) && c.finished_at).map((c) => ms(c.finished_at!) - ms(c.at)));
    const lastCard = Math.max(...cards.filter(admitted).map((c) => ms(c.at)));
    const windowS = Math.max(0.001, (lastCard - sentAt) / 1000);
    const polls = requests.filter((r) => isPoll(r) && ms(r.at) <= lastCard);
    const pollsAdmitted = polls.filter(admitted).length;
    const refused = requests.filter((r) => r.status === 429 && ms(r.at) <= lastCard);
    const p99 = percentile(latencies, 99) / 1000;
    const p50 = percentile(latencies, 50) / 1000;
    const target = bound + (Number.isFinite(partnerMs) ? partnerMs : 0) / 1000;
    log(
      `  starvation: ${fresh} new sync orders sent in ${intakeS.toFixed(1)} s into ${m} pending; ${finished ? 'all completed' : `NOT all completed within ${(waitMs / 1000).toFixed(0)} s`}; ` +
        `intake -> card p50 ${p50.toFixed(1)} s, p99 ${p99.toFixed(1)} s, max ${(Math.max(...latencies) / 1000).toFixed(1)} s (bound ${target.toFixed(1)} s); ` +
        `meanwhile the partner admitted ${pollsAdmitted} polls (${(pollsAdmitted / windowS).toFixed(1)}/s) and refused ${refused.length} calls; partner latency p50 ${partnerMs.toFixed(1)} ms`,
    );
    ctx.details.limitsStarvation = {
      pending: m,
      newOrders: fresh,
      rate,
      partnerLimits: anyLimit,
      created,
      intakeS,
      finished,
      latencyMs: { p50: p50 * 1000, p90: percentile(latencies, 90), p99: p99 * 1000, max: Math.max(...latencies) },
      partnerLatencyMs: partnerMs,
      boundS: target,
      window: { seconds: windowS, cardsCalls: cards.length, cardsAdmitted: cards.filter(admitted).length, pollsAdmitted, pollsRefused: polls.filter((p) => p.status === 429).length, refused: refused.length },
      partnerCountsBefore: saturated,
      partnerCountsAfter: view,
    };
    return [
      figure({
        bench: 'limits',
        figure: `p99 intake -> card of ${fresh} new sync orders with ${m} async pending, partner limited to ${rate} calls/s (any)`,
        value: p99,
        unit: 's',
        baseline: target,
        baselineLabel: `2 x ${fresh}/${rate} + partner latency`,
        target: 'ratio <= 1',
        pass: Number.isFinite(p99) && p99 <= target,
        note: `p50 ${p50.toFixed(1)} s; ${pollsAdmitted} polls admitted meanwhile`,
      }),
      figure({
        bench: 'limits',
        figure: `p50 intake -> card of the same orders`,
        value: p50,
        unit: 's',
        baseline: fresh / rate,
        baselineLabel: `${fresh}/${rate}: all of the limit`,
        target: '-',
        pass: null,
      }),
    ];
  } finally {
    await worker.proc.stop(15_000);
    await api.proc.stop();
    await stack.reset();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Fairness

/** The second client of the fairness run (the first is the bench's own key). */
const SECOND_CLIENT = { client: 'second', key: `second-${'7'.repeat(16)}` };

async function fairness(ctx: BenchContext, apiUrl: string, sim: SimClient, partnerLimits: string): Promise<Figure[]> {
  const { stack, settings: s, log } = ctx;
  const rate = s.limitsRate;
  const share = rate / 2;
  await stack.reset();
  await sim.setLimits({ create: { per_second: rate } });
  const worker = await stack.startWorker('worker-fairness', { PARTNER_LIMITS: partnerLimits });
  try {
    const t0 = Date.now();
    const bulk = await createOrders({ url: apiUrl, apiKey: stack.apiKey, count: s.fairBulk, mode: 'sync', concurrency: 16, prefix: 'fair-bulk' });
    const bulkIntakeS = (Date.now() - t0) / 1000;
    const ended = "status IN ('completed', 'failed', 'needs_attention')";
    const backlog = s.fairBulk - (await count(ctx, `SELECT count(*) AS n FROM orders WHERE id = ANY($1::uuid[]) AND ${ended}`, [bulk]));
    const second = await createOrders({ url: apiUrl, apiKey: SECOND_CLIENT.key, count: s.fairSecond, mode: 'sync', concurrency: 16, prefix: 'fair-second' });
    const finished = await until(async () => (await count(ctx, `SELECT count(*) AS n FROM orders WHERE id = ANY($1::uuid[]) AND ${ended}`, [second])) >= s.fairSecond, 180_000, 100);
    const bulkLeft = s.fairBulk - (await count(ctx, `SELECT count(*) AS n FROM orders WHERE id = ANY($1::uuid[]) AND ${ended}`, [bulk]));
    const { rows } = await stack.db.query<{ status: string; ms: string | null }>(
      'SELECT status::text AS status, extract(epoch FROM (completed_at - created_at)) * 1000 AS ms FROM orders WHERE id = ANY($1::uuid[])',
      [second],
    );
    const latencies = rows.map((r) => (r.status === 'completed' && r.ms !== null ? Number(r.ms) : Infinity));
    const p99 = percentile(latencies, 99) / 1000;
    const p50 = percentile(latencies, 50) / 1000;
    const bound = 2 * (s.fairSecond / share);
    const fifoS = backlog / rate;
    log(
      `  fairness: ${s.fairBulk} orders of one client sent in ${bulkIntakeS.toFixed(1)} s (${backlog} still open), then ${s.fairSecond} of a second client: ` +
        `${finished ? 'all completed' : 'NOT all ended within 180 s'}, intake -> card p50 ${p50.toFixed(2)} s, p99 ${p99.toFixed(2)} s (bound ${bound.toFixed(1)} s; first come, first served: ~${fifoS.toFixed(0)} s); ` +
        `${bulkLeft} of the import still open when the second client's last card was stored`,
    );
    ctx.details.limitsFairness = { rate, bulk: s.fairBulk, second: s.fairSecond, bulkIntakeS, backlogAtSecond: backlog, bulkLeftAfter: bulkLeft, latencyMs: { p50: p50 * 1000, p99: p99 * 1000, max: Math.max(...latencies) }, boundS: bound, fifoS };
    return [
      figure({
        bench: 'limits',
        figure: `p99 intake -> card of a second client's ${s.fairSecond} sync orders behind another's ${s.fairBulk}, partner limited to ${rate} creations/s`,
        value: p99,
        unit: 's',
        baseline: bound,
        baselineLabel: `2 x ${s.fairSecond}/${share} (half the limit)`,
        target: 'ratio <= 1',
        pass: Number.isFinite(p99) && p99 <= bound,
        note: `p50 ${p50.toFixed(2)} s; ${backlog} of the import open when they came (first come, first served: ~${fifoS.toFixed(0)} s), ${bulkLeft} still open after`,
      }),
    ];
  } finally {
    await worker.proc.stop(15_000);
    await stack.reset();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Learned limits: a partner whose limits nobody told us

interface LearnedRun {
  rate: number;
  retryAfterS: number;
  workers: number;
  orders: number;
  /** Cards stored/s between 5 % and 95 % of them, against the partner's limit. */
  steadyPerS: number;
  ratio: number;
  creations: { admitted: number; refused: number };
  refusedShare: number;
  totalS: number;
  /** The rates the workers logged as learned (partnerBackoff), in order. */
  learnedRates: number[];
  pauses: number;
  /** Per second from the workers' start: [admitted, refused] creations, as the partner saw them. */
  perSecond: [number, number][];
}

/**
 * No PARTNER_LIMITS: the partner takes `rate` creations/s (a bucket of one second) and answers 429 beyond,
 * with Retry-After (retryAfterS) or without it (0). Sync orders (one creation per card), created with no
 * worker, then `workers` worker processes until every card is stored. The fleet must find the rate itself.
 */
async function learnedRun(ctx: BenchContext, apiUrl: string, sim: SimClient, rate: number, retryAfterS: number, workers: number): Promise<LearnedRun> {
  const { stack, settings: s } = ctx;
  const n = Math.max(200, Math.round(rate * s.learnedSeconds));
  await stack.reset();
  await createOrders({ url: apiUrl, apiKey: stack.apiKey, count: n, mode: 'sync', concurrency: 16, prefix: `learn${rate}r${retryAfterS}w${workers}` });
  await sim.setLimits({ create: { per_second: rate, retry_after_s: retryAfterS } }); // (its counts start again here)
  const since = Date.now();
  const procs: Running[] = [];
  for (let i = 0; i < workers; i++) procs.push(await stack.startWorker(`worker-learned-${rate}-${retryAfterS}-${workers}w-${i + 1}`, { PARTNER_LIMITS: '{}' }, false));
  const marks: { at: number; done: number }[] = [];
  try {
    const deadline = Date.now() + (n / rate) * 3_000 + 60_000;
    for (;;) {
      const done = await count(ctx, 'SELECT count(*) AS n FROM cards');
      marks.push({ at: Date.now(), done });
      if (done >= n) break;
      if (Date.now() > deadline) throw new Error(`learned limits ${rate}/s, Retry-After ${retryAfterS}, ${workers} workers: only ${done} of ${n} cards after ${((Date.now() - since) / 1000).toFixed(0)} s`);
      await sleep(200);
    }
  } finally {
    await stopAll(procs);
  }
  const view = await sim.limits();
  // Per second from the workers' start: creations the partner admitted / refused (the learning, as it saw it).
  const perSecond: [number, number][] = [];
  for (const c of (await ledgerSince(sim, since)).filter(isCreation)) {
    const i = Math.floor((ms(c.at) - since) / 1000);
    while (perSecond.length <= i) perSecond.push([0, 0]);
    perSecond[i]![c.status === 429 ? 1 : 0]++;
  }
  // 5 % to 95 %: the last orders are those a 429 sent to wait for the spec's interval (a tail of retries,
  // not of the rate learned).
  const from = marks.find((m) => m.done >= Math.max(1, n * 0.05))!;
  const to = marks.find((m) => m.done >= n * 0.95)!;
  const steadyPerS = (to.done - from.done) / Math.max(0.001, (to.at - from.at) / 1000);
  const learnedRates: number[] = [];
  let pauses = 0;
  for (const proc of procs) {
    let text = '';
    try {
      text = readFileSync(proc.proc.logFile, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      if (line.includes('"partnerBackoff"')) learnedRates.push(Number((JSON.parse(line) as { partnerBackoff: { ratePerSecond: number } }).partnerBackoff.ratePerSecond.toFixed(1)));
      if (line.includes('"partnerPause"') && line.includes('"until"')) pauses++;
    }
  }
  const { admitted: ok, refused } = view.counts.create;
  return {
    rate,
    retryAfterS,
    workers,
    orders: n,
    steadyPerS,
    ratio: steadyPerS / rate,
    creations: { admitted: ok, refused },
    refusedShare: refused / Math.max(1, ok + refused),
    totalS: (marks.at(-1)!.at - since) / 1000,
    learnedRates,
    pauses,
    perSecond,
  };
}

async function learnedLimits(ctx: BenchContext): Promise<Figure[]> {
  const { stack, settings: s, log } = ctx;
  await stack.reset();
  const sim = await stack.startSim({ SIM_SYNC_DELAY_MS: '0' });
  const api = await stack.startApi({});
  const runs: LearnedRun[] = [];
  try {
    log(`  learned: no PARTNER_LIMITS; the partner takes R creations/s (R in ${s.learnedRates.join(', ')}), 429 beyond with Retry-After: 1 or without; R x ${s.learnedSeconds} s of sync orders (at least 200), 1 and 3 workers; cards/s between 5 and 95 % of them`);
    for (const rate of s.learnedRates) {
      for (const retryAfterS of [1, 0]) {
        for (const workers of [1, 3]) {
          const run = await learnedRun(ctx, api.url, sim, rate, retryAfterS, workers);
          runs.push(run);
          log(
            `  learned ${rate}/s, ${retryAfterS ? 'Retry-After: 1' : 'no Retry-After'}, ${workers} worker${workers > 1 ? 's' : ''}: ${run.steadyPerS.toFixed(1)} cards/s (${run.ratio.toFixed(2)} of the limit), ` +
              `429s ${(100 * run.refusedShare).toFixed(1)} % of ${run.creations.admitted + run.creations.refused} creations, ${run.pauses} pauses, ${run.orders} orders in ${run.totalS.toFixed(1)} s; ` +
              `rates learned: ${run.learnedRates.slice(0, 8).join(', ')}${run.learnedRates.length > 8 ? `, ... (${run.learnedRates.length})` : ''}`,
          );
          log(`    per second, admitted/refused: ${run.perSecond.map(([a, r]) => `${a}/${r}`).join(' ')}`);
        }
      }
    }
  } finally {
    await api.proc.stop();
  }
  ctx.details.limitsLearned = { seconds: s.learnedSeconds, runs };
  return runs.flatMap((r) => {
    const who = `${r.rate}/s, ${r.retryAfterS ? 'Retry-After: 1' : 'no Retry-After'}, ${r.workers} worker${r.workers > 1 ? 's' : ''}`;
    return [
      figure({
        bench: 'limits',
        figure: `learned limit (none configured): cards stored/s, partner at ${who}`,
        value: r.steadyPerS,
        unit: '/s',
        baseline: r.rate,
        baselineLabel: "partner's limit",
        target: 'ratio >= 0.9',
        pass: r.ratio >= 0.9,
        note: `${r.orders} sync orders, 5-95 % of the cards; rates learned ${r.learnedRates.slice(0, 5).join(', ')}${r.learnedRates.length > 5 ? ', ...' : ''}`,
      }),
      figure({
        bench: 'limits',
        figure: `learned limit: partner 429s, share of creation calls, ${who}`,
        value: 100 * r.refusedShare,
        unit: '%',
        baseline: r.creations.admitted + r.creations.refused,
        baselineUnit: 'calls',
        baselineLabel: 'creation calls',
        target: '<= 10 %',
        pass: r.refusedShare <= 0.1,
        ratio: null,
        note: `${r.creations.refused} refused of ${r.creations.admitted + r.creations.refused}; ${r.pauses} pauses`,
      }),
    ];
  });
}

export async function limitsBench(ctx: BenchContext): Promise<Figure[]> {
  const { stack, settings: s, log } = ctx;
  const full = s.limitsOrders >= 2000 && s.limitsPending >= 10_000 && s.limitsNew >= 500;
  log(
    `limits: partner limited to ${s.limitsRate} calls/s; ${s.limitsOrders} sync + ${s.limitsOrders} async orders per run (BENCH_LIMITS_ORDERS), ` +
      `${s.limitsPending} pending (BENCH_LIMITS_PENDING) and ${s.limitsNew} new (BENCH_LIMITS_NEW) for starvation` +
      (full
        ? " (the issue's sizes)"
        : ` (the issue asks ${[s.limitsOrders < 2000 ? '2,000 orders' : '', s.limitsPending < 10_000 ? '10,000 pending (BENCH_LIMITS_PENDING=10000: about a minute more)' : '', s.limitsNew < 500 ? '500 new' : ''].filter(Boolean).join(', ')})`),
  );
  const parts = s.limitsParts;
  const figures: Figure[] = [];
  if (parts.includes('limited') || parts.includes('storm') || parts.includes('fairness')) {
    await stack.reset();
    const createLimit = JSON.stringify({ create: { per_second: s.limitsRate } });
    const sim = await stack.startSim({ SIM_LIMITS: createLimit, SIM_SYNC_DELAY_MS: '0' });
    const api = await stack.startApi({ PARTNER_LIMITS: createLimit, API_KEYS: `bench:${stack.apiKey},${SECOND_CLIENT.client}:${SECOND_CLIENT.key}` });
    try {
      if (parts.includes('limited')) figures.push(...(await limitedPartner(ctx, api.url, sim, createLimit)));
      if (parts.includes('storm')) figures.push(...(await storm(ctx, api.url, sim, createLimit)));
      if (parts.includes('fairness')) figures.push(...(await fairness(ctx, api.url, sim, createLimit)));
    } finally {
      await api.proc.stop();
    }
  }
  if (parts.includes('starvation')) figures.push(...(await starvation(ctx)));
  if (parts.includes('learned')) figures.push(...(await learnedLimits(ctx)));
  ctx.details.limits = { orders: s.limitsOrders, pending: s.limitsPending, newOrders: s.limitsNew, rate: s.limitsRate, issueSizes: full };
  return figures;
}
