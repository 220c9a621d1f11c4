import { spawn, spawnSync } from 'node:child_process';
import { chownSync, closeSync, copyFileSync, existsSync, mkdtempSync, openSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { startRedisCluster } from '@cardpull/testing';
import { Client } from 'pg';
import { freePort, run, runAsync, sleep, type Cleanup, type Log } from './infra';

/**
 * The run's own Postgres and Redis. The machine's servers are shared with other test runs, so the chaos
 * run never flushes or restarts them: it starts a Redis of its own (a real FLUSHALL) and a Postgres cluster
 * of its own (a real restart). Without initdb it falls back to a database on the shared server, where the
 * "restart" can only be the termination of every connection to that database (reported loudly).
 */

export interface ChaosPostgres {
  url: string;
  kind: 'dedicated' | 'shared';
  /** Why the run fell back to the shared server, if it did. */
  fallbackReason: string | null;
  /** What `restart` does. */
  restartMethod: string;
  /** The server's log, when the run has its own server. */
  logFile: string | null;
  restart(): Promise<{ downMs: number }>;
}

function postgresBinDir(): string | null {
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    const versions = readdirSync(base).filter((v) => existsSync(join(base, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
    if (versions.length) return join(base, versions[0]!, 'bin');
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  const path = which.stdout.trim();
  return which.status === 0 && path ? path.replace(/\/initdb$/, '') : null;
}

/** Runs a Postgres binary, as the postgres user when we are root (initdb refuses root). */
function pgRun(bin: string, args: string[], asPostgres: boolean): string {
  return asPostgres ? run('runuser', ['-u', 'postgres', '--', bin, ...args], { cwd: '/' }) : run(bin, args, { cwd: '/' });
}
function pgRunAsync(bin: string, args: string[], asPostgres: boolean): Promise<string> {
  return asPostgres ? runAsync('runuser', ['-u', 'postgres', '--', bin, ...args], { cwd: '/' }) : runAsync(bin, args, { cwd: '/' });
}

export async function startPostgres(opts: { prefer: 'dedicated' | 'shared'; sharedUrl: string; reportDir: string; log: Log; cleanup: Cleanup }): Promise<ChaosPostgres> {
  let reason = opts.prefer === 'shared' ? 'CHAOS_POSTGRES=shared' : null;
  if (!reason) {
    try {
      return await startDedicated(opts);
    } catch (error) {
      reason = `no dedicated cluster: ${(error as Error).message.split('\n').slice(0, 3).join(' ')}`;
    }
  }
  return startShared(opts, reason);
}

async function startDedicated(opts: { reportDir: string; log: Log; cleanup: Cleanup }): Promise<ChaosPostgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('initdb not found (/usr/lib/postgresql/*/bin or PATH)');
  const asPostgres = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'cardpull-chaos-pg-'));
  opts.cleanup.add('remove the Postgres data directory', () => rmSync(dir, { recursive: true, force: true }));
  if (asPostgres) {
    const uid = Number(run('id', ['-u', 'postgres']).trim());
    const gid = Number(run('id', ['-g', 'postgres']).trim());
    chownSync(dir, uid, gid);
  }
  const data = join(dir, 'data');
  const pgLog = join(dir, 'postgres.log');
  const port = await freePort();
  const started = Date.now();
  pgRun(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync'], asPostgres);
  const pgCtl = (...args: string[]) => pgRun(join(bin, 'pg_ctl'), ['-D', data, ...args], asPostgres);
  const pgCtlAsync = (...args: string[]) => pgRunAsync(join(bin, 'pg_ctl'), ['-D', data, ...args], asPostgres);
  // BENCH_PG_STATEMENTS=1: pg_stat_statements loaded, for the e2e bench's statements per card (a diagnosis).
  const statements = process.env.BENCH_PG_STATEMENTS === '1' ? ' -c shared_preload_libraries=pg_stat_statements' : '';
  // Autovacuum's passes are logged (postgres.log of the report): a stall in a run can be told from one.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=300 -c log_autovacuum_min_duration=0${statements}`;
  pgCtl('-l', pgLog, '-o', options, '-w', '-t', '60', 'start');
  opts.cleanup.add('stop the Postgres cluster', () => {
    try {
      pgCtl('-m', 'immediate', '-w', 'stop');
    } finally {
      if (existsSync(pgLog)) copyFileSync(pgLog, join(opts.reportDir, 'postgres.log'));
    }
  });
  const url = `postgresql://postgres@127.0.0.1:${port}/cardpull_chaos`;
  migrate(url);
  opts.log(`Postgres: own cluster (${bin}) on port ${port}, data in ${dir}, ready and migrated in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return {
    url,
    kind: 'dedicated',
    fallbackReason: null,
    logFile: pgLog,
    restartMethod: 'pg_ctl stop -m fast, 2 s down, pg_ctl start',
    async restart() {
      const t0 = Date.now();
      await pgCtlAsync('-m', 'fast', '-w', '-t', '60', 'stop');
      await sleep(2_000);
      await pgCtlAsync('-l', pgLog, '-o', options, '-w', '-t', '60', 'start');
      return { downMs: Date.now() - t0 };
    },
  };
}

async function startShared(opts: { sharedUrl: string; log: Log; cleanup: Cleanup }, reason: string): Promise<ChaosPostgres> {
  const name = `cardpull_chaos_${process.pid}`;
  const url = new URL(opts.sharedUrl);
  url.pathname = `/${name}`;
  const admin = new URL(opts.sharedUrl);
  admin.pathname = '/postgres';
  const adminQuery = async (sql: string, params: unknown[] = []) => {
    const c = new Client({ connectionString: admin.toString() });
    await c.connect();
    try {
      return await c.query(sql, params);
    } finally {
      await c.end();
    }
  };
  await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  opts.cleanup.add(`drop database ${name}`, () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  migrate(url.toString());
  const banner = '!'.repeat(100);
  opts.log(banner);
  opts.log(`!! Postgres: FALLBACK to database ${name} on the SHARED server ${admin.host} (${reason}).`);
  opts.log('!! The shared server is never restarted: the "Postgres restart" terminates every connection to this database instead.');
  opts.log(banner);
  return {
    url: url.toString(),
    kind: 'shared',
    fallbackReason: reason,
    logFile: null,
    restartMethod: `pg_terminate_backend of every connection to ${name} (shared server: no real restart)`,
    async restart() {
      const t0 = Date.now();
      const { rows } = await adminQuery('SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
      opts.log(`terminated ${rows[0].n} connections to ${name}`);
      return { downMs: Date.now() - t0 };
    },
  };
}

function migrate(url: string): void {
  run(process.execPath, ['scripts/prisma-wasm.mjs', 'migrate'], { env: { DATABASE_URL: url } });
}

export interface ChaosRedis {
  url: string;
  /** What the service's processes are given (REDIS_URL, and REDIS_CLUSTER_NODES on a cluster). */
  env: Record<string, string>;
  /** FLUSHALL (of every master); answers how many keys there were just before. */
  flushAll(): Promise<number>;
  /** The one node's client (the benches, which run on one node); on a cluster, a client of one master. */
  client(): Redis;
  /** A client per node holding data (the masters), for reading every key. */
  clients(): Promise<Redis[]>;
  /** On a cluster: SIGKILL the master holding the queues' slot; resolves once its replica serves it. */
  killQueueMaster?(queueKey: string): Promise<{ port: number; failoverMs: number }>;
}

/** A Redis Cluster of the run's own (3 masters, 3 replicas: libs/testing's harness), stopped by the clean-up. */
export async function startRedisClusterForRun(opts: { log: Log; cleanup: Cleanup }): Promise<ChaosRedis> {
  const cluster = await startRedisCluster();
  opts.cleanup.add('stop the Redis Cluster', () => cluster.stop());
  const open: Redis[] = [];
  opts.cleanup.add('close the Redis Cluster clients', () => open.forEach((c) => c.disconnect()));
  const clientOf = (port: number) => {
    const c = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1, retryStrategy: () => null });
    c.on('error', () => undefined);
    open.push(c);
    return c;
  };
  const first = cluster.nodes[0]!;
  opts.log(`Redis: own Redis Cluster, 3 masters + 3 replicas on ports ${cluster.nodes.map((n) => n.port).join(', ')} (no persistence)`);
  return {
    url: `redis://${first.host}:${first.port}/0`,
    env: { REDIS_URL: `redis://${first.host}:${first.port}/0`, REDIS_CLUSTER_NODES: cluster.nodesSetting },
    client: () => clientOf(cluster.masters()[0]!.port),
    clients: async () => cluster.masters().map((m) => clientOf(m.port)),
    async flushAll() {
      let keys = 0;
      for (const m of cluster.masters()) {
        const c = clientOf(m.port);
        keys += await c.dbsize();
        await c.flushall();
      }
      return keys;
    },
    async killQueueMaster(queueKey: string) {
      const any = clientOf(cluster.masters()[0]!.port);
      const slot = Number(await any.call('cluster', 'keyslot', queueKey));
      const slots = (await any.call('cluster', 'slots')) as [number, number, [string, number]][];
      const owner = slots.find(([from, to]) => slot >= from && slot <= to);
      if (!owner) throw new Error(`no master serves slot ${slot}`);
      const port = owner[2][1];
      const started = Date.now();
      cluster.kill(port);
      await cluster.waitHealthy(60_000);
      return { port, failoverMs: Date.now() - started };
    },
  };
}

/** A redis-server of the run's own, in memory only, killed by the clean-up. */
export async function startRedis(opts: { reportDir: string; log: Log; cleanup: Cleanup }): Promise<ChaosRedis> {
  const port = await freePort();
  const fd = openSync(join(opts.reportDir, 'redis.log'), 'a');
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], {
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const failed = new Promise<never>((_, reject) => child.once('error', (e) => reject(new Error(`redis-server: ${e.message} (is it on PATH?)`))));
  failed.catch(() => undefined);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  opts.cleanup.add('kill redis-server', async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  const url = `redis://127.0.0.1:${port}/0`;
  const redis = new Redis(url, { maxRetriesPerRequest: 1, retryStrategy: () => 200 });
  redis.on('error', () => undefined);
  opts.cleanup.add('close the Redis client', () => redis.disconnect());
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      if ((await Promise.race([redis.ping(), failed])) === 'PONG') break;
    } catch (error) {
      if (Date.now() > deadline || (error as Error).message.startsWith('redis-server:')) throw error;
      await sleep(100);
    }
  }
  opts.log(`Redis: own redis-server on port ${port} (no persistence)`);
  return {
    url,
    env: { REDIS_URL: url },
    client: () => redis,
    clients: async () => [redis],
    async flushAll() {
      const keys = await redis.dbsize();
      await redis.flushall();
      return keys;
    },
  };
}
