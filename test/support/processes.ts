import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/**
 * The built apps as real processes, for the suites that kill them (SIGKILL mid-call, SIGTERM). They run
 * the output of `npm run build` with the Node 24 that runs jest (process.execPath: jest is started
 * through npm, whose PATH puts node_modules/.bin/node first).
 */
const ROOT = join(__dirname, '..', '..');

export const BUILT = {
  worker: 'dist/apps/worker/apps/worker/src/main.js',
  api: 'dist/apps/api/apps/api/src/main.js',
  'partner-sim': 'dist/apps/partner-sim/apps/partner-sim/src/main.js',
} as const;
export type BuiltApp = keyof typeof BUILT;

/** Sources a built app is compiled from: a newer file there means the build is stale. */
/** The line each app's main.ts writes once it serves. */
const READY_LINE: Record<BuiltApp, RegExp> = {
  worker: /cardpull worker running/,
  api: /cardpull api listening on/,
  'partner-sim': /partner simulator listening on/,
};

const SOURCES: Record<BuiltApp, string[]> = {
  worker: ['apps/worker/src', 'libs'],
  api: ['apps/api/src', 'libs'],
  'partner-sim': ['apps/partner-sim/src', 'libs'],
};

const checked = new Set<BuiltApp>();

/** Absolute path of a built app's entry point; throws, saying what to run, when it is missing. */
export function builtEntry(app: BuiltApp): string {
  const entry = join(ROOT, BUILT[app]);
  if (!existsSync(entry)) {
    throw new Error(`${BUILT[app]} is missing: these suites run the built ${app}. Run \`npm run build\` first (\`npm test\` builds before running jest).`);
  }
  if (checked.has(app)) return entry;
  checked.add(app);
  const built = statSync(entry).mtimeMs;
  const newer = SOURCES[app].map((dir) => newestTsFile(join(ROOT, dir))).find((f) => f && f.mtimeMs > built);
  if (newer) {
    // A warning, not a failure: other work may be editing the sources while the build is still good enough.
    process.stderr.write(`warning: ${BUILT[app]} is older than ${newer.path.slice(ROOT.length + 1)}: the processes run the last build (\`npm run build\` to refresh it).\n`);
  }
  return entry;
}

function newestTsFile(dir: string): { path: string; mtimeMs: number } | undefined {
  let newest: { path: string; mtimeMs: number } | undefined;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'generated' && e.name !== 'node_modules') walk(p);
      } else if (e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts')) {
        const mtimeMs = statSync(p).mtimeMs;
        if (!newest || mtimeMs > newest.mtimeMs) newest = { path: p, mtimeMs };
      }
    }
  };
  if (existsSync(dir)) walk(dir);
  return newest;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface AppProcess {
  pid: number;
  /** Every stdout and stderr line so far (JSON log lines, mostly). */
  logs: string[];
  /** Resolves when the process has exited (never rejects). */
  exited: Promise<ExitInfo>;
  /** Whether the process has exited already. */
  readonly exitInfo: ExitInfo | null;
  kill(signal?: NodeJS.Signals): boolean;
  /** Resolves once the app says it is up (its "running" line); rejects if it exits or stays silent. */
  ready(timeoutMs?: number): Promise<void>;
  /** Resolves with the first log line matching `pattern` (already logged or to come). */
  waitForLog(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
  stop(graceMs?: number): Promise<ExitInfo>;
}

export interface SpawnOptions {
  /** Label in failure messages (default: the app name and pid). */
  label?: string;
  /** Echo the process's lines to this process's stderr (debugging). */
  echo?: boolean;
  /**
   * Runs the process with its wall clock (Date) this far off (positive: ahead). Its monotonic clock
   * (performance.now) is untouched, as with a real machine whose clock is set wrong.
   */
  clockSkewMs?: number;
}

const live = new Set<AppProcess>();

/**
 * Starts the built worker with exactly `env` (a stack's env: DATABASE_URL, REDIS_URL, REDIS_PREFIX,
 * PARTNER_BASE_URL, API_KEYS, the timings...) plus PATH/HOME, WORKER_PORT=0 (health on an ephemeral port).
 * Killed in afterAll by stopAllProcesses (registered below), whatever happened in the tests.
 */
export function spawnWorker(env: Record<string, string>, opts: SpawnOptions = {}): AppProcess {
  return spawnApp('worker', { ...env, WORKER_PORT: '0' }, opts);
}

export function spawnApp(app: BuiltApp, env: Record<string, string>, opts: SpawnOptions = {}): AppProcess {
  const entry = builtEntry(app);
  // Watchdog: if the jest worker dies without running afterAll (killed, crashed), the child exits too,
  // instead of polling a Redis prefix and a database that are gone.
  const watchdog =
    `data:text/javascript,const parent=${process.pid};` +
    'setInterval(()=>{if(process.ppid!==parent)process.exit(70)},250).unref();';
  const skew = opts.clockSkewMs
    ? [
        '--import',
        `data:text/javascript,const skew=${Math.round(opts.clockSkewMs)};const Real=Date;` +
          'class Skewed extends Real{constructor(...a){if(a.length===0)super(Real.now()+skew);else super(...a)}static now(){return Real.now()+skew}}' +
          'globalThis.Date=Skewed;',
      ]
    : [];
  const child: ChildProcess = spawn(process.execPath, ['--import', watchdog, ...skew, entry], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`could not start ${entry}`);
  const pid = child.pid;
  const label = opts.label ?? `${app} pid ${pid}`;
  const logs: string[] = [];
  const listeners = new Set<(line: string) => void>();
  const onLine = (line: string) => {
    logs.push(line);
    if (opts.echo) process.stderr.write(`[${label}] ${line}\n`);
    for (const l of listeners) l(line);
  };
  createInterface({ input: child.stdout! }).on('line', onLine);
  createInterface({ input: child.stderr! }).on('line', onLine);

  let exitInfo: ExitInfo | null = null;
  child.once('error', (error) => onLine(`spawn error: ${error.message}`));
  // 'close' rather than 'exit': it comes once stdout and stderr are drained, so `logs` is complete.
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once('close', (code, signal) => {
      exitInfo = { code, signal };
      live.delete(handle);
      for (const l of listeners) l(''); // wakes waitForLog callers: the process is gone
      resolve(exitInfo);
    });
  });

  const waitForLog = (pattern: RegExp, timeoutMs = 20_000) =>
    new Promise<string>((resolve, reject) => {
      const already = logs.find((l) => pattern.test(l));
      if (already) return resolve(already);
      const timer = setTimeout(() => done(new Error(`${label}: no log line matching ${pattern} within ${timeoutMs} ms.\n${tail(logs)}`)), timeoutMs);
      const listener = (line: string) => {
        if (line && pattern.test(line)) done(null, line);
        else if (exitInfo) done(new Error(`${label} exited (${exitInfo.signal ?? exitInfo.code}) before logging ${pattern}.\n${tail(logs)}`));
      };
      const done = (err: Error | null, line?: string) => {
        clearTimeout(timer);
        listeners.delete(listener);
        if (err) reject(err);
        else resolve(line!);
      };
      listeners.add(listener);
    });

  const handle: AppProcess = {
    pid,
    logs,
    exited,
    get exitInfo() {
      return exitInfo;
    },
    kill: (signal = 'SIGTERM') => (exitInfo ? false : child.kill(signal)),
    // A built app starts in 2-5 s here; a CI run beside a benchmark saw more than 20 s (two cores, run queue 5-10 deep).
    ready: (timeoutMs = 45_000) => waitForLog(READY_LINE[app], timeoutMs).then(() => undefined),
    waitForLog,
    async stop(graceMs = 5_000) {
      if (exitInfo) return exitInfo;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const info = await exited;
      clearTimeout(timer);
      return info;
    },
  };
  live.add(handle);
  return handle;
}

/** SIGKILLs every process started by this file that is still running, and waits for them to be gone. */
export async function stopAllProcesses(): Promise<void> {
  const all = [...live];
  for (const p of all) p.kill('SIGKILL');
  await Promise.all(all.map((p) => p.exited));
}

function tail(lines: string[], n = 15): string {
  return lines.slice(-n).join('\n');
}

// Every suite that imports this file kills what it started, even when a test or a hook failed.
if (typeof afterAll === 'function') afterAll(stopAllProcesses);
