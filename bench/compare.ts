/**
 * Before/after of an optimisation, in one run: the intake (API, closed loop) and the end-to-end rate
 * (one worker) of another build against this one and the bare scripts, interleaved round by round.
 *   git archive <commit> | tar -x -C .tmp/before && cp -r libs/db/src/generated .tmp/before/libs/db/src/ \
 *     && ln -s "$PWD/node_modules" .tmp/before/node_modules && (cd .tmp/before && npx nest build api && npx nest build worker)
 *   node --import tsx bench/compare.ts .tmp/before [rounds]
 * The other build must live under this repository (its node_modules link resolves the packages).
 * Also printed: the API's CPU per accepted order (its process, from /proc), and the worker's own CPU and
 * Postgres's per card. COMPARE_INTAKE=0 skips the intake rounds (a change to the worker alone). With
 * COMPARE_PGBOUNCER=1 each round also runs both workers through PgBouncer in transaction mode
 * (DATABASE_PREPARED_STATEMENTS=false, as a pooler before 1.21 needs), against their own straight runs.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, openSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BUILT, Cleanup, ROOT, freePort, stamp, waitHealthy, type AppProcess } from './chaos/infra';
import { sleep } from './support/context';
import { startPgBouncer } from '@cardpull/testing';
import { CpuMeter } from './support/cpu';
import { createOrders, intakePeak } from './support/http-load';
import { median } from './support/report';
import { BenchStack, type Env } from './support/stack';

/** CPU seconds (user + system) of a process so far. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

async function startBuilt(stack: BenchStack, root: string, app: 'api' | 'worker', label: string, env: Env, cleanup: Cleanup): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const port = await freePort();
  const fd = openSync(join(stack.reportDir, `${label}.log`), 'a');
  const portEnv = app === 'api' ? { PORT: String(port), WORKER_PORT: '0' } : { WORKER_PORT: String(port), PORT: '0' };
  const child = spawn(process.execPath, [join(root, BUILT[app])], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...stack.serviceEnv({ ...portEnv, ...env }) }, stdio: ['ignore', fd, fd] });
  const proc = { label, pid: child.pid, logFile: join(stack.reportDir, `${label}.log`), exit: null as null | object } as unknown as AppProcess;
  const exited = new Promise<void>((r) => child.once('exit', (code) => ((proc as { exit: unknown }).exit = { code }, r())));
  cleanup.add(`kill ${label}`, () => child.kill('SIGKILL'));
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(proc, `${url}${app === 'api' ? '/health/ready' : '/health/live'}`);
  return { url, pid: child.pid!, stop: async () => (child.kill('SIGTERM'), await exited) };
}

async function main(): Promise<void> {
  const [beforeArg, roundsArg] = process.argv.slice(2);
  if (!beforeArg) throw new Error('usage: node --import tsx bench/compare.ts <root of the other build> [rounds]');
  const builds = { before: resolve(beforeArg), after: ROOT };
  const rounds = Number(roundsArg ?? 4);
  const dir = join(ROOT, 'reports', `compare-${stamp()}`);
  mkdirSync(dir, { recursive: true });
  const cleanup = new Cleanup();
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const stack = new BenchStack(dir, log, cleanup);
  const intake: Record<string, number[]> = { before: [], after: [], bare: [] };
  const e2e: Record<string, number[]> = { before: [], after: [], bare: [] };
  /** ms of the API's CPU per accepted order; ms of Postgres CPU per card (e2e, and through PgBouncer). */
  const apiMs: Record<string, number[]> = { before: [], after: [] };
  const pgMs: Record<string, number[]> = { before: [], after: [], bare: [], 'before, PgBouncer': [], 'after, PgBouncer': [] };
  const pooled: Record<string, number[]> = { 'before, PgBouncer': [], 'after, PgBouncer': [] };
  /** ms of the worker's (or the bare script's) own CPU per card, between 10 % and 90 % of the cards. */
  const workerMs: Record<string, number[]> = { before: [], after: [], bare: [], 'before, PgBouncer': [], 'after, PgBouncer': [] };
  const withPgBouncer = ['1', 'true', 'yes'].includes((process.env.COMPARE_PGBOUNCER ?? '').toLowerCase());
  try {
    await stack.start();
    await stack.startSim({});
    const postgres = CpuMeter.forStack({ apps: () => ({}), redisPid: null, postgresData: stack.postmasterDataDir() });
    const bouncer = withPgBouncer ? await startPgBouncer({ serverUrl: stack.pg.url, poolSize: 20 }) : null;
    if (bouncer) cleanup.add('stop PgBouncer', () => bouncer.stop());
    const apis = { before: await startBuilt(stack, builds.before, 'api', 'api-before', {}, cleanup), after: await startBuilt(stack, builds.after, 'api', 'api-after', {}, cleanup) };
    for (const a of Object.values(apis)) await intakePeak({ url: a.url, apiKey: stack.apiKey, connections: 32, seconds: 3, prefix: 'warm' });
    for (let round = 0; round < rounds; round++) {
      // COMPARE_INTAKE=0: the end-to-end rounds only (a change to the worker alone).
      for (const which of process.env.COMPARE_INTAKE === '0' ? [] : (['before', 'after', 'bare'] as const)) {
        await stack.reset();
        if (which === 'bare') intake.bare.push((await stack.spawnBare('intake-bare.ts', { CONCURRENCY: '32', SECONDS: '6', POOL_SIZE: '10' }).result).rate!);
        else {
          const before = cpuSeconds(apis[which].pid);
          const peak = await intakePeak({ url: apis[which].url, apiKey: stack.apiKey, connections: 32, seconds: 6, prefix: `${which}${round}` });
          intake[which].push(peak.acceptedPerS);
          apiMs[which]!.push(((cpuSeconds(apis[which].pid) - before) * 1000) / peak.accepted);
        }
      }
      const runs = ['before', 'after', 'bare', ...(bouncer ? (['before, PgBouncer', 'after, PgBouncer'] as const) : [])] as const;
      for (const which of runs) {
        await stack.reset();
        await createOrders({ url: apis.after.url, apiKey: stack.apiKey, count: 1500, mode: 'sync', prefix: `e2e${which.replace(/\W/g, '')}${round}` });
        const build = which.startsWith('before') ? 'before' : 'after';
        const viaPooler: Env = bouncer && which.endsWith('PgBouncer') ? { DATABASE_URL: bouncer.url(stack.pg.url), DATABASE_PREPARED_STATEMENTS: 'false' } : {};
        const { stop, pid } =
          which === 'bare'
            ? (() => { const b = stack.spawnBare('worker-bare.ts', { CONCURRENCY: '32', POOL_SIZE: '10', PARTNER_BASE_URL: stack.sim!.url }); return { stop: () => b.stop(), pid: b.pid }; })()
            : await startBuilt(stack, builds[build], 'worker', `worker-${which.replace(/\W+/g, '-')}-${round}`, viaPooler, cleanup);
        let pg0: ReturnType<CpuMeter['sample']> | null = null;
        let pg1: ReturnType<CpuMeter['sample']> | null = null;
        let own0: number | null = null;
        let own1: number | null = null;
        const marks: { at: number; n: number }[] = [];
        for (;;) {
          const n = Number((await stack.db.query<{ n: string }>("SELECT count(*) AS n FROM orders WHERE status = 'completed'")).rows[0]!.n);
          marks.push({ at: Date.now(), n });
          if (!pg0 && n >= 150) (pg0 = postgres.sample()), (own0 = cpuSeconds(pid));
          if (!pg1 && n >= 1350) (pg1 = postgres.sample()), (own1 = cpuSeconds(pid));
          if (n >= 1500) break;
          await sleep(50);
        }
        await stop();
        const a = marks.find((m) => m.n >= 150)!;
        const b = marks.find((m) => m.n >= 1350)!;
        const rate = (b.n - a.n) / ((b.at - a.at) / 1000);
        (which.endsWith('PgBouncer') ? pooled : e2e)[which]!.push(rate);
        if (pg0 && pg1) pgMs[which]!.push(((CpuMeter.cores(pg0, pg1).postgres ?? 0) * 1000) / rate);
        if (own0 !== null && own1 !== null) workerMs[which]!.push(((own1 - own0) * 1000) / (b.n - a.n));
      }
      const last = (runs: Record<string, number[]>) => Object.entries(runs).map(([k, v]) => `${k} ${v.at(-1)?.toFixed(0) ?? '-'}`).join(', ');
      log(`round ${round + 1}: intake ${last(intake)}; e2e ${last(e2e)}${bouncer ? `; ${last(pooled)}` : ''}`);
    }
    for (const [name, runs] of [['intake (accepted/s)', intake], ['e2e (cards/s)', e2e]] as const) {
      if (!runs.bare.length) continue;
      const bare = median(runs.bare);
      log(`${name}: ${(['before', 'after', 'bare'] as const).map((k) => `${k} ${median(runs[k]).toFixed(0)} (ratio ${(median(runs[k]) / bare).toFixed(2)})`).join(', ')}`);
    }
    if (apiMs.before!.length) log(`API CPU per accepted order (ms): before ${median(apiMs.before!).toFixed(3)}, after ${median(apiMs.after!).toFixed(3)}`);
    log(`Worker CPU per card, its own process (ms): ${Object.entries(workerMs).filter(([, v]) => v.length).map(([k, v]) => `${k} ${median(v).toFixed(3)}`).join(', ')}`);
    log(`Postgres CPU per card (ms): ${Object.entries(pgMs).filter(([, v]) => v.length).map(([k, v]) => `${k} ${median(v).toFixed(3)}`).join(', ')}`);
    if (bouncer) {
      for (const build of ['before', 'after'] as const) {
        const through = median(pooled[`${build}, PgBouncer`]!);
        log(`e2e through PgBouncer, ${build}: ${through.toFixed(0)} cards/s against ${median(e2e[build]!).toFixed(0)} straight (ratio ${(through / median(e2e[build]!)).toFixed(2)})`);
      }
    }
  } finally {
    for (const e of await cleanup.run()) log(`clean-up: ${e}`);
  }
}

main().then(
  () => process.exit(0),
  (error: Error) => {
    process.stderr.write(`${error.stack ?? error.message}\n`);
    process.exit(1);
  },
);
