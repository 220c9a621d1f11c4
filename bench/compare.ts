/**
 * Before/after of an optimisation, in one run: the intake (API, closed loop) and the end-to-end rate
 * (one worker) of another build against this one and the bare scripts, interleaved round by round.
 *   git archive <commit> | tar -x -C .tmp/before && cp -r libs/db/src/generated .tmp/before/libs/db/src/ \
 *     && ln -s "$PWD/node_modules" .tmp/before/node_modules && (cd .tmp/before && npx nest build api && npx nest build worker)
 *   node --import tsx bench/compare.ts .tmp/before [rounds]
 * The other build must live under this repository (its node_modules link resolves the packages).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, openSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BUILT, Cleanup, ROOT, freePort, stamp, waitHealthy, type AppProcess } from './chaos/infra';
import { sleep } from './support/context';
import { createOrders, intakePeak } from './support/http-load';
import { median } from './support/report';
import { BenchStack, type Env } from './support/stack';

async function startBuilt(stack: BenchStack, root: string, app: 'api' | 'worker', label: string, env: Env, cleanup: Cleanup): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const fd = openSync(join(stack.reportDir, `${label}.log`), 'a');
  const portEnv = app === 'api' ? { PORT: String(port), WORKER_PORT: '0' } : { WORKER_PORT: String(port), PORT: '0' };
  const child = spawn(process.execPath, [join(root, BUILT[app])], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...stack.serviceEnv({ ...portEnv, ...env }) }, stdio: ['ignore', fd, fd] });
  const proc = { label, pid: child.pid, logFile: join(stack.reportDir, `${label}.log`), exit: null as null | object } as unknown as AppProcess;
  const exited = new Promise<void>((r) => child.once('exit', (code) => ((proc as { exit: unknown }).exit = { code }, r())));
  cleanup.add(`kill ${label}`, () => child.kill('SIGKILL'));
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(proc, `${url}${app === 'api' ? '/health/ready' : '/health/live'}`);
  return { url, stop: async () => (child.kill('SIGTERM'), await exited) };
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
  try {
    await stack.start();
    await stack.startSim({});
    const apis = { before: await startBuilt(stack, builds.before, 'api', 'api-before', {}, cleanup), after: await startBuilt(stack, builds.after, 'api', 'api-after', {}, cleanup) };
    for (const a of Object.values(apis)) await intakePeak({ url: a.url, apiKey: stack.apiKey, connections: 32, seconds: 3, prefix: 'warm' });
    for (let round = 0; round < rounds; round++) {
      for (const which of ['before', 'after', 'bare'] as const) {
        await stack.reset();
        if (which === 'bare') intake.bare.push((await stack.spawnBare('intake-bare.ts', { CONCURRENCY: '32', SECONDS: '6', POOL_SIZE: '10' }).result).rate!);
        else intake[which].push((await intakePeak({ url: apis[which].url, apiKey: stack.apiKey, connections: 32, seconds: 6, prefix: `${which}${round}` })).acceptedPerS);
      }
      for (const which of ['before', 'after', 'bare'] as const) {
        await stack.reset();
        await createOrders({ url: apis.after.url, apiKey: stack.apiKey, count: 1500, mode: 'sync', prefix: `e2e${which}${round}` });
        const stop =
          which === 'bare'
            ? (() => { const b = stack.spawnBare('worker-bare.ts', { CONCURRENCY: '32', POOL_SIZE: '10', PARTNER_BASE_URL: stack.sim!.url }); return () => b.stop(); })()
            : (await startBuilt(stack, builds[which], 'worker', `worker-${which}-${round}`, {}, cleanup)).stop;
        const marks: { at: number; n: number }[] = [];
        for (;;) {
          const n = Number((await stack.db.query<{ n: string }>("SELECT count(*) AS n FROM orders WHERE status = 'completed'")).rows[0]!.n);
          marks.push({ at: Date.now(), n });
          if (n >= 1500) break;
          await sleep(50);
        }
        await stop();
        const a = marks.find((m) => m.n >= 150)!;
        const b = marks.find((m) => m.n >= 1350)!;
        e2e[which].push((b.n - a.n) / ((b.at - a.at) / 1000));
      }
      log(`round ${round + 1}: intake ${Object.entries(intake).map(([k, v]) => `${k} ${v.at(-1)!.toFixed(0)}`).join(', ')}; e2e ${Object.entries(e2e).map(([k, v]) => `${k} ${v.at(-1)!.toFixed(0)}`).join(', ')}`);
    }
    for (const [name, runs] of [['intake (accepted/s)', intake], ['e2e (cards/s)', e2e]] as const) {
      const bare = median(runs.bare);
      log(`${name}: ${(['before', 'after', 'bare'] as const).map((k) => `${k} ${median(runs[k]).toFixed(0)} (ratio ${(median(runs[k]) / bare).toFixed(2)})`).join(', ')}`);
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
