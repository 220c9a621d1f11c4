import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';

/**
 * What the chaos run starts around the service: free ports, the build, the apps as real processes (each
 * with its log file), and the clean-up that always runs. Postgres and Redis are in databases.ts.
 */
export const ROOT = join(__dirname, '..', '..');

export const BUILT = {
  'partner-sim': 'dist/apps/partner-sim/apps/partner-sim/src/main.js',
  api: 'dist/apps/api/apps/api/src/main.js',
  worker: 'dist/apps/worker/apps/worker/src/main.js',
} as const;
export type App = keyof typeof BUILT;

export type Log = (line: string) => void;

/** A port nobody listens on right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Clean-up steps, run once in reverse order, each one whatever the others did. */
export class Cleanup {
  private steps: { label: string; fn: () => Promise<unknown> | unknown }[] = [];
  private done?: Promise<string[]>;
  add(label: string, fn: () => Promise<unknown> | unknown): void {
    this.steps.push({ label, fn });
  }
  run(): Promise<string[]> {
    this.done ??= (async () => {
      const errors: string[] = [];
      for (const step of this.steps.reverse()) {
        try {
          await step.fn();
        } catch (error) {
          errors.push(`${step.label}: ${(error as Error).message}`);
        }
      }
      return errors;
    })();
    return this.done;
  }
}

function newestSource(dirs: string[]): { path: string; mtimeMs: number } | undefined {
  let newest: { path: string; mtimeMs: number } | undefined;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'node_modules') walk(p);
      } else if (e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts')) {
        const mtimeMs = statSync(p).mtimeMs;
        if (!newest || mtimeMs > newest.mtimeMs) newest = { path: p, mtimeMs };
      }
    }
  };
  for (const d of dirs) if (existsSync(join(ROOT, d))) walk(join(ROOT, d));
  return newest;
}

/** Builds the three apps unless told not to or dist/ is newer than every source file. */
export function buildApps(skip: boolean, log: Log): string {
  const missing = Object.values(BUILT).filter((p) => !existsSync(join(ROOT, p)));
  const oldestBuild = missing.length ? 0 : Math.min(...Object.values(BUILT).map((p) => statSync(join(ROOT, p)).mtimeMs));
  const newest = newestSource(['apps', 'libs']);
  if (skip) {
    if (missing.length) throw new Error(`the build is skipped but ${missing.join(', ')} is missing: run \`npm run build\``);
    const stale = newest && newest.mtimeMs > oldestBuild ? `; warning: ${newest.path.slice(ROOT.length + 1)} is newer than dist (the last build runs)` : '';
    return `skipped${stale}`;
  }
  if (!missing.length && newest && newest.mtimeMs < oldestBuild) return 'dist is newer than the sources: not rebuilt';
  for (const app of Object.keys(BUILT)) {
    const started = Date.now();
    log(`building ${app}...`);
    const r = spawnSync(process.execPath, [join(ROOT, 'node_modules/@nestjs/cli/bin/nest.js'), 'build', app], { cwd: ROOT, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`nest build ${app} failed (exit ${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`);
    log(`built ${app} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  return `rebuilt (${newest ? newest.path.slice(ROOT.length + 1) : 'dist missing'} was newer)`;
}

export interface AppProcess {
  app: App;
  label: string;
  pid: number;
  logFile: string;
  /** Set once it has exited. */
  exit: { code: number | null; signal: string | null } | null;
  /** True when this run killed or stopped it on purpose. */
  expectedExit: boolean;
  exited: Promise<void>;
  kill(signal: NodeJS.Signals): void;
  /** SIGTERM, then SIGKILL after graceMs. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts a built app with exactly `env` (plus PATH and HOME), stdout and stderr appended to `logFile`
 * by the child itself (so nothing is lost when this process dies). A watchdog makes the child exit when
 * its parent is gone (the runner killed without its clean-up).
 */
export function spawnApp(app: App, label: string, env: Record<string, string>, logFile: string): AppProcess {
  const watchdog =
    `data:text/javascript,const parent=${process.pid};` + 'setInterval(()=>{if(process.ppid!==parent)process.exit(70)},250).unref();';
  const fd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, ['--import', watchdog, join(ROOT, BUILT[app])], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
      stdio: ['ignore', fd, fd],
    });
  } finally {
    closeSync(fd);
  }
  if (child.pid === undefined) throw new Error(`could not start ${label}`);
  let resolveExit!: () => void;
  const handle: AppProcess = {
    app,
    label,
    pid: child.pid,
    logFile,
    exit: null,
    expectedExit: false,
    exited: new Promise<void>((r) => (resolveExit = r)),
    kill(signal) {
      if (handle.exit) return;
      handle.expectedExit = true;
      child.kill(signal);
    },
    async stop(graceMs = 5_000) {
      if (handle.exit) return;
      handle.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await handle.exited;
      clearTimeout(timer);
    },
  };
  const ended = (exit: { code: number | null; signal: string | null }) => {
    if (handle.exit) return;
    handle.exit = exit;
    resolveExit();
  };
  child.once('error', (error) => ended({ code: null, signal: `spawn error: ${error.message}` }));
  child.once('exit', (code, signal) => ended({ code, signal }));
  return handle;
}

/** Until GET url answers 2xx; fails when the process exits first or after timeoutMs. */
export async function waitHealthy(proc: AppProcess, url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.exit) throw new Error(`${proc.label} exited (${proc.exit.signal ?? proc.exit.code}) before it was ready; see ${proc.logFile}`);
    try {
      const res = await request(url, { headersTimeout: 2_000, bodyTimeout: 2_000 });
      await res.body.text();
      if (res.statusCode >= 200 && res.statusCode < 300) return;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(`${proc.label} not ready at ${url} within ${timeoutMs} ms; see ${proc.logFile}`);
}

/** Runs a command, returns its output; throws with the output when it fails. */
export function run(cmd: string, args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', env: { ...process.env, ...opts.env }, cwd: opts.cwd ?? ROOT });
  if (r.error) throw new Error(`${cmd} ${args.join(' ')}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`);
  return `${r.stdout}${r.stderr}`;
}

/** A compact ISO-like stamp for directory names. */
export const stamp = (d = new Date()) => d.toISOString().replace(/[:.]/g, '-').replace('Z', '');

/** Like run, without blocking the event loop (the load and the progress keep going meanwhile). */
export function runAsync(cmd: string, args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...opts.env }, cwd: opts.cwd ?? ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', (e) => reject(new Error(`${cmd} ${args.join(' ')}: ${e.message}`)));
    child.once('close', (code, signal) =>
      code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')} failed (exit ${code ?? signal}):\n${out}`)),
    );
  });
}
