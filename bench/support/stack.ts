import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Pool } from 'pg';
import { startPostgres, startRedis, type ChaosPostgres, type ChaosRedis } from '../chaos/databases';
import { SimClient } from '../chaos/faults';
import { ROOT, freePort, spawnApp, waitHealthy, type AppProcess, type Cleanup, type Log } from '../chaos/infra';

/**
 * What every benchmark runs against: its own Postgres cluster and Redis (never the shared servers on
 * 5432/6379: the benches truncate and FLUSHALL), and the built apps as processes (tsx emits no decorator
 * metadata, so no Nest module is imported here). Reuses the chaos run's helpers (bench/chaos).
 */

export type Env = Record<string, string>;

export interface Running {
  proc: AppProcess;
  url: string;
}

/** A bare comparison script (bench/bare/*.ts) running under tsx; it prints one JSON line when done. */
export interface BareProcess {
  pid: number;
  /** Resolves when it prints "timing" (its measured part starts; the start-up and warm-up are over). */
  timing: Promise<void>;
  /** Its JSON result, as soon as it is printed (rejects when it exits without one). */
  result: Promise<Record<string, number>>;
  stop(): Promise<void>;
}

/** Settings every benchmark gives the service, whatever it measures. */
const SERVICE_BASE: Env = {
  // Against the local simulator with its public credentials: the local profile (docs/SECURITY.md).
  CARDPULL_PROFILE: 'local',
  LOG_LEVEL: 'warn',
  HOST: '127.0.0.1',
  PARTNER_ENV: 'staging',
  // The intake must not be throttled: the benchmark is the only client (default 60 s window).
  RATE_LIMIT_PER_CLIENT: '10000000',
};

export class BenchStack {
  pg!: ChaosPostgres;
  redis!: ChaosRedis;
  /** The bench's own connections to its Postgres (reads, resets, statistics). */
  db!: Pool;
  sim?: Running & { client: SimClient };
  readonly apiKey = `bench-${randomBytes(12).toString('hex')}`;
  private readonly procs: AppProcess[] = [];
  private readonly bares = new Set<number>();
  private logSeq = 0;

  constructor(
    readonly reportDir: string,
    private readonly log: Log,
    private readonly cleanup: Cleanup,
  ) {}

  async start(): Promise<void> {
    this.pg = await startPostgres({ prefer: 'dedicated', sharedUrl: 'postgresql://postgres@127.0.0.1:5432/postgres', reportDir: this.reportDir, log: this.log, cleanup: this.cleanup });
    if (this.pg.kind === 'shared') this.log(`!! no dedicated Postgres cluster (${this.pg.fallbackReason}): figures are taken on the shared server`);
    this.redis = await startRedis({ reportDir: this.reportDir, log: this.log, cleanup: this.cleanup });
    this.db = new Pool({ connectionString: this.pg.url, max: 4 });
    this.db.on('error', () => undefined);
    this.cleanup.add('close the bench pool', () => this.db.end());
    this.cleanup.add('kill the processes', async () => {
      for (const p of this.procs) p.kill('SIGKILL');
      await Promise.all(this.procs.map((p) => p.exited));
    });
  }

  /**
   * Stops the API and worker processes a bench left running (a bench that failed half-way: its workers
   * would take the next bench's jobs); returns their labels. The simulator is left to the next startSim.
   */
  async stopLeftovers(): Promise<string[]> {
    const left = this.procs.filter((p) => p.exit === null && p.app !== 'partner-sim');
    await Promise.all(left.map((p) => p.stop(5_000)));
    return left.map((p) => p.label);
  }

  /** The simulator with these settings (restarted when one runs already). */
  async startSim(env: Env): Promise<SimClient> {
    if (this.sim) await this.sim.proc.stop();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const proc = this.spawn('partner-sim', 'partner-sim', {
      LOG_LEVEL: 'warn',
      SIM_HOST: '127.0.0.1',
      SIM_PORT: String(port),
      SIM_CONTROL: 'true',
      SIM_MODE: 'production',
      ...env,
    });
    await waitHealthy(proc, `${url}/_sim/health`);
    const client = new SimClient(url);
    await client.setBalance(1_000_000_000);
    this.sim = { proc, url, client };
    return client;
  }

  /** The environment of the API and the workers (the defaults of the service unless overridden). */
  serviceEnv(overrides: Env = {}): Env {
    if (!this.sim) throw new Error('start the simulator first');
    return {
      ...SERVICE_BASE,
      DATABASE_URL: this.pg.url,
      REDIS_URL: this.redis.url,
      API_KEYS: `bench:${this.apiKey}`,
      PARTNER_BASE_URL: this.sim.url,
      // BENCH_CPU_PROF=1: every API and worker process writes a V8 CPU profile on exit (for the hot paths).
      // BENCH_NODE_OPTIONS: more Node options for them (--trace-gc, --max-semi-space-size=..., ...).
      ...(process.env.BENCH_CPU_PROF || process.env.BENCH_NODE_OPTIONS
        ? {
            NODE_OPTIONS: [process.env.BENCH_CPU_PROF ? `--cpu-prof --cpu-prof-dir=${join(this.reportDir, 'profiles')}` : '', process.env.BENCH_NODE_OPTIONS ?? '']
              .join(' ')
              .trim(),
          }
        : {}),
      ...overrides,
    };
  }

  async startApi(overrides: Env = {}): Promise<Running> {
    const port = await freePort();
    const proc = this.spawn('api', 'api', this.serviceEnv({ PORT: String(port), WORKER_PORT: '0', ...overrides }));
    const url = `http://127.0.0.1:${port}`;
    await waitHealthy(proc, `${url}/health/ready`);
    return { proc, url };
  }

  async startWorker(label: string, overrides: Env = {}, waitReady = true): Promise<Running> {
    const port = await freePort();
    const proc = this.spawn('worker', label, this.serviceEnv({ WORKER_PORT: String(port), PORT: '0', ...overrides }));
    const url = `http://127.0.0.1:${port}`;
    if (waitReady) await waitHealthy(proc, `${url}/health/live`);
    return { proc, url };
  }

  /** Empty orders (and everything hanging off them) and the bench's own Redis; the catalog cache stays. */
  async reset(): Promise<void> {
    await this.db.query('TRUNCATE orders CASCADE');
    await this.redis.client().flushall();
  }

  /**
   * Empties the ledger too, in the bench's own cluster only (the service's database refuses: the ledger is
   * append-only, and its TRUNCATE trigger is skipped here as a replica's would be). Without it the ledger's
   * tables grow from run to run, and a run whose inserts land in pages left over from an earlier run writes
   * full-page images after the checkpoint that starts it (0.1 KB per card in one e2e run, in no other).
   */
  async resetLedger(): Promise<void> {
    if (this.pg.kind !== 'dedicated') return;
    const client = await this.db.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL session_replication_role = replica');
      await client.query('TRUNCATE ledger_entries, ledger_transactions');
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** INFO memory used_memory of the bench's Redis, in bytes. */
  async redisUsedMemory(): Promise<number> {
    const info = await this.redis.client().info('memory');
    return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? NaN);
  }

  async redisPid(): Promise<number | null> {
    const info = await this.redis.client().info('server');
    const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
    return Number.isFinite(pid) ? pid : null;
  }

  /** The postmaster's pid (own cluster only): its children are the backends whose CPU is counted. */
  postmasterDataDir(): string | null {
    return this.pg.logFile ? join(dirname(this.pg.logFile), 'data') : null;
  }

  /** Pids of the live processes per kind (api, worker, partner-sim, bare), for the CPU meter. */
  livePids(): Record<string, number[]> {
    const out: Record<string, number[]> = {};
    for (const p of this.procs) if (!p.exit) (out[p.app] ??= []).push(p.pid);
    for (const b of this.bares) (out.bare ??= []).push(b);
    return out;
  }

  /** Runs bench/bare/<script> with exactly `env` (plus PATH, HOME and the bench's databases). */
  spawnBare(script: string, env: Env): BareProcess {
    const logFile = join(this.reportDir, `${String(++this.logSeq).padStart(2, '0')}-bare-${script.replace(/\.ts$/, '')}.log`);
    const fd = openSync(logFile, 'a');
    // `--import tsx` (not tsx's CLI, which runs the script in a child process): the pid is the script's own.
    const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${join(this.reportDir, 'profiles')}`, `--cpu-prof-name=bare-${script.replace(/\.ts$/, '')}-${this.logSeq}.cpuprofile`] : [];
    const child = spawn(process.execPath, [...profile, '--import', 'tsx', join(ROOT, 'bench/bare', script)], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', DATABASE_URL: this.pg.url, REDIS_URL: this.redis.url, ...env },
      stdio: ['ignore', 'pipe', fd],
    });
    closeSync(fd);
    const pid = child.pid!;
    this.bares.add(pid);
    let out = '';
    let timingStarted!: () => void;
    const timing = new Promise<void>((r) => (timingStarted = r));
    let resolveResult!: (r: Record<string, number>) => void;
    let rejectResult!: (e: Error) => void;
    const result = new Promise<Record<string, number>>((res, rej) => ((resolveResult = res), (rejectResult = rej)));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (/^timing$/m.test(out)) timingStarted();
      const json = /^\{.*\}$/m.exec(out);
      if (json) resolveResult(JSON.parse(json[0]) as Record<string, number>);
    });
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    void exited.then(() => {
      this.bares.delete(pid);
      timingStarted();
      rejectResult(new Error(`bare ${script} ended without a result (exit ${child.exitCode ?? child.signalCode}); see ${logFile}`));
    });
    this.cleanup.add(`kill bare ${script}`, () => child.exitCode === null && child.kill('SIGKILL'));
    result.catch(() => undefined);
    return {
      pid,
      timing,
      result,
      async stop() {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        await exited;
      },
    };
  }

  private spawn(app: 'partner-sim' | 'api' | 'worker', label: string, env: Env): AppProcess {
    const proc = spawnApp(app, label, env, join(this.reportDir, `${String(++this.logSeq).padStart(2, '0')}-${label}.log`));
    this.procs.push(proc);
    return proc;
  }
}

/** Orders per status (the bench's progress and completion checks). */
export async function countByStatus(db: Pool): Promise<Record<string, number>> {
  const { rows } = await db.query<{ status: string; n: string }>('SELECT status::text AS status, count(*) AS n FROM orders GROUP BY 1');
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}
