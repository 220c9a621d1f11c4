import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const REDIS_SERVER_BIN = process.env.REDIS_SERVER_BIN ?? 'redis-server';
export const REDIS_CLI_BIN = process.env.REDIS_CLI_BIN ?? 'redis-cli';

export interface ClusterNode {
  host: string;
  port: number;
  proc: ChildProcess;
}

export interface TestRedisCluster {
  /** Every node, masters and replicas: REDIS_CLUSTER_NODES's value is `nodesSetting`. */
  nodes: ClusterNode[];
  nodesSetting: string;
  /** The nodes that are masters now (CLUSTER NODES, asked of a live node). */
  masters(): { host: string; port: number }[];
  /** SIGKILL a node (a master lost): its replica is promoted once the others notice (cluster-node-timeout). */
  kill(port: number): void;
  /** Waits until every slot is served again (cluster_state:ok on every live node). */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /** FLUSHALL on every live master. */
  flushAll(): void;
  stop(): Promise<void>;
}

async function freePorts(n: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < n) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
      });
    });
    // A cluster node also listens on port + 10000 (its bus): keep both free and under 55536.
    if (port < 55_000 && !ports.includes(port) && (await canBind(port + 10_000))) ports.push(port);
  }
  return ports;
}

/** Whether a port can be listened on now (another process may still take it before the node does). */
function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

const cli = (port: number, ...args: string[]) => spawnSync(REDIS_CLI_BIN, ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8', timeout: 10_000 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A real Redis Cluster of `masters` masters, each with one replica, from the machine's redis-server
 * (`--cluster-enabled yes`) and `redis-cli --cluster create`: no Docker. No persistence; a short
 * cluster-node-timeout so a killed master's replica takes over within about a second.
 */
export async function startRedisCluster(opts: { masters?: number; nodeTimeoutMs?: number } = {}): Promise<TestRedisCluster> {
  // A port found free may be taken by another process before its node binds it (the suites run in
  // parallel): a node that does not start means new ports, twice at most.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startRedisClusterOnce(opts);
    } catch (error) {
      if (attempt >= 3 || !/did not start/.test((error as Error).message)) throw error;
    }
  }
}

async function startRedisClusterOnce(opts: { masters?: number; nodeTimeoutMs?: number }): Promise<TestRedisCluster> {
  const count = (opts.masters ?? 3) * 2;
  const ports = await freePorts(count);
  const dir = mkdtempSync(join(tmpdir(), 'cardpull-redis-cluster-'));
  const nodes: ClusterNode[] = ports.map((port) => {
    const proc = spawn(
      REDIS_SERVER_BIN,
      [
        '--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`),
        '--cluster-node-timeout', String(opts.nodeTimeoutMs ?? 1_000), '--save', '', '--appendonly', 'no', '--dir', dir,
        '--maxmemory-policy', 'noeviction', '--logfile', join(dir, `redis-${port}.log`),
        // A replica takes over whatever the age of its copy (a test kills a master soon after the start).
        '--cluster-replica-validity-factor', '0',
      ],
      { stdio: 'ignore' },
    );
    // Stopped by stop(); meanwhile it does not keep the test process alive.
    proc.unref();
    return { host: '127.0.0.1', port, proc };
  });
  const dead = new Set<number>();
  const stop = async () => {
    for (const n of nodes) if (!dead.has(n.port)) n.proc.kill('SIGKILL');
    await sleep(50);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const n of nodes) {
      const deadline = Date.now() + 10_000;
      while (cli(n.port, 'ping').stdout.trim() !== 'PONG') {
        if (Date.now() > deadline) throw new Error(`redis-server on port ${n.port} did not start`);
        await sleep(50);
      }
    }
    const created = spawnSync(REDIS_CLI_BIN, ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '1', '--cluster-yes'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}\n${created.stderr}`);
  } catch (error) {
    await stop();
    throw error;
  }
  const live = () => nodes.filter((n) => !dead.has(n.port));
  const masters = () => {
    const out = cli(live()[0]!.port, 'cluster', 'nodes').stdout;
    return out
      .split('\n')
      .filter((l) => l.includes('master') && !l.includes('fail') && / \d+-\d+/.test(l))
      .map((l) => {
        const [host, rest] = l.split(' ')[1]!.split(':');
        return { host: host!, port: Number(rest!.split('@')[0]) };
      })
      .filter((m) => !dead.has(m.port));
  };
  const waitHealthy = async (timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const ok = live().every((n) => cli(n.port, 'cluster', 'info').stdout.includes('cluster_state:ok'));
      if (ok && masters().length === (opts.masters ?? 3)) return;
      if (Date.now() > deadline) throw new Error(`the Redis Cluster is not healthy after ${timeoutMs} ms:\n${cli(live()[0]!.port, 'cluster', 'nodes').stdout}`);
      await sleep(100);
    }
  };
  await waitHealthy();
  // Every replica in sync with its master, so a master killed now has a replica to take over.
  const synced = Date.now() + 20_000;
  while (!live().every((n) => { const info = cli(n.port, 'info', 'replication').stdout; return info.includes('role:master') || info.includes('master_link_status:up'); })) {
    if (Date.now() > synced) throw new Error('the Redis Cluster replicas did not sync within 20 s');
    await sleep(100);
  }
  return {
    nodes,
    nodesSetting: nodes.map((n) => `${n.host}:${n.port}`).join(','),
    masters,
    kill: (port) => {
      const node = nodes.find((n) => n.port === port);
      if (!node) throw new Error(`no node on port ${port}`);
      node.proc.kill('SIGKILL');
      dead.add(port);
    },
    waitHealthy,
    flushAll: () => {
      for (const m of masters()) cli(m.port, 'flushall');
    },
    stop,
  };
}
