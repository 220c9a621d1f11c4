/**
 * `npm run bench [-- intake e2e scale recovery limits scale-out]`: the benchmarks of docs/BENCHMARKS.md (default: all), each
 * against its own Postgres cluster and Redis and the built apps as processes. Prints the figures with their
 * same-run baselines and ratios as a table and writes reports/bench-<timestamp>.json. Exit code 0 even when
 * a target is missed (benchmarks report, they do not test); 1 when a bench could not run; 2 on bad usage.
 */
import { cpus } from 'node:os';
import { mkdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { Cleanup, ROOT, buildApps, stamp } from './chaos/infra';
import { e2eBench } from './e2e';
import { intakeBench } from './intake';
import { limitsBench } from './limits';
import { recoveryBench } from './recovery';
import { scaleBench } from './scale';
import { scaleOutBench } from './scale-out';
import { settingsFromEnv, type Bench, type BenchContext } from './support/context';
import { CpuMeter } from './support/cpu';
import { tableLines, writeJson, type BenchReport } from './support/report';
import { BenchStack } from './support/stack';

const BENCHES: Record<string, Bench> = { intake: intakeBench, e2e: e2eBench, scale: scaleBench, recovery: recoveryBench, limits: limitsBench, 'scale-out': scaleOutBench };

async function main(): Promise<number> {
  const args = process.argv.slice(2).filter((a) => a !== '--');
  const unknown = args.filter((a) => !(a in BENCHES));
  if (unknown.length) {
    process.stderr.write(`unknown bench(es): ${unknown.join(', ')}; choose from ${Object.keys(BENCHES).join(', ')}\n`);
    return 2;
  }
  const chosen = args.length ? Object.keys(BENCHES).filter((b) => args.includes(b)) : Object.keys(BENCHES);
  if (Number(process.versions.node.split('.')[0]) < 24) {
    process.stderr.write(`Node ${process.versions.node} runs this; run it through npm (Node 24 from the node package)\n`);
    return 2;
  }
  const settings = settingsFromEnv();
  const started = new Date();
  const reportDir = resolve(ROOT, 'reports', `bench-${stamp(started)}`);
  const jsonPath = `${reportDir}.json`;
  mkdirSync(reportDir, { recursive: true });
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const report: BenchReport = {
    command: `npm run bench${args.length ? ` -- ${args.join(' ')}` : ''}`,
    startedAt: started.toISOString(),
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? '?', node: process.versions.node, platform: `${process.platform} ${process.arch}` },
    settings: { ...settings },
    postgres: '',
    benches: chosen,
    figures: [],
    details: {},
    errors: [],
  };
  const cleanup = new Cleanup();
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    log(`${signal}: cleaning up...`);
    void cleanup.run().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    log(`bench: ${chosen.join(', ')} on ${report.machine.cpus} cores (${report.machine.cpuModel}), Node ${report.machine.node}; logs in ${relative(ROOT, reportDir)}`);
    log(`build: ${buildApps(settings.skipBuild, log)}`);
    const stack = new BenchStack(reportDir, log, cleanup);
    await stack.start();
    report.postgres = `${stack.pg.kind}${stack.pg.fallbackReason ? ` (${stack.pg.fallbackReason})` : ''}`;
    const redisPid = await stack.redisPid();
    const cpu = CpuMeter.forStack({ apps: () => stack.livePids(), redisPid, postgresData: stack.postmasterDataDir() });
    const ctx: BenchContext = { stack, settings, log, cpu, details: report.details };
    for (const name of chosen) {
      const t0 = Date.now();
      log(`\n== ${name} ==`);
      try {
        const figures = await BENCHES[name]!(ctx);
        report.figures.push(...figures);
        log(`${name} done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
      } catch (error) {
        const message = `${name}: ${(error as Error).stack ?? String(error)}`;
        report.errors.push(message);
        log(`!! ${message}`);
      }
      const left = await stack.stopLeftovers();
      if (left.length) log(`  (stopped what ${name} left running: ${left.join(', ')})`);
      writeJson(jsonPath, report);
    }
  } catch (error) {
    report.errors.push((error as Error).stack ?? String(error));
    log(`!! bench could not run: ${report.errors.at(-1)}`);
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    for (const e of await cleanup.run()) report.errors.push(`clean-up: ${e}`);
    report.finishedAt = new Date().toISOString();
    writeJson(jsonPath, report);
  }
  log('');
  for (const line of tableLines(report.figures)) log(line);
  log(`\nreport: ${relative(ROOT, jsonPath)} (process logs in ${relative(ROOT, join(reportDir))})`);
  if (report.errors.length) log(`errors:\n${report.errors.map((e) => `  ${e.split('\n')[0]}`).join('\n')}`);
  return report.errors.filter((e) => !e.startsWith('clean-up')).length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  },
);
