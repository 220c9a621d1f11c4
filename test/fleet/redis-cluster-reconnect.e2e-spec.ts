import { spawnSync } from 'node:child_process';
import type { Cluster } from 'ioredis';
import { startRedisCluster, type TestRedisCluster } from '@cardpull/testing';
import { bullConnection, createRedis, workerConnection } from '@cardpull/queue';

const BOUND_MS = 15_000;
/** How `work` ended, or 'still pending' after BOUND_MS. */
const settled = (work: Promise<unknown>) =>
  Promise.race([
    work.then(
      () => 'settled',
      () => 'settled',
    ),
    new Promise<string>((r) => setTimeout(() => r(`still pending after ${BOUND_MS} ms`), BOUND_MS).unref()),
  ]);
const clusterInfo = (port: number) => spawnSync('redis-cli', ['-p', String(port), 'cluster', 'info'], { encoding: 'utf8' }).stdout;

/**
 * A reconnect while the cluster reports `cluster_state:fail` (a failover under way, or a shard with no
 * master at all) settles. With ioredis's ready check on, such a connect() saw the failed state, dropped
 * its connection and tried again, and its promise never settled; BullMQ reconnects its worker's blocking
 * client through that promise, so a worker stopped taking jobs after a failover and never closed (the
 * cluster suite's failover test timed out that way on a loaded machine: 20 delayed jobs never taken).
 * Here the shard is lost for good (its master and its replica killed), so the failed state lasts. (A
 * BullMQ worker's close() can still hang right after a failover, an upstream race of its own: the worker
 * process bounds its shutdown, apps/worker/src/processors/queue-processor.spec.ts.)
 */
describe('on a Redis Cluster whose state is "fail"', () => {
  let cluster: TestRedisCluster;
  const target = () => ({ REDIS_URL: 'redis://127.0.0.1:6379', REDIS_CLUSTER_NODES: cluster.nodes.map((n) => ({ host: n.host, port: n.port })), REDIS_PREFIX: 'reconnect' });

  beforeAll(async () => {
    cluster = await startRedisCluster();
  }, 60_000);
  afterAll(() => cluster?.stop());

  it("the reconnect of each of our cluster connections settles: a worker's own and BullMQ's blocking one", async () => {
    const client = createRedis(target(), workerConnection('redis://127.0.0.1:6379')) as Cluster;
    client.on('error', () => undefined);
    // The connection BullMQ's worker is given (and duplicates for its blocking client, which it reconnects
    // through connect(): the promise that never settled).
    const connection = bullConnection(target(), 'worker') as unknown as Cluster;
    connection.on('error', () => undefined);
    try {
      expect(await settled(Promise.all([client.ping(), connection.ping()]))).toBe('settled');
      // The master serving the queue's slot and its replica killed: that slot has no one left.
      const cli = (...args: string[]) => spawnSync('redis-cli', ['-p', String(cluster.nodes[0]!.port), ...args], { encoding: 'utf8' }).stdout.trim();
      const slot = Number(cli('cluster', 'keyslot', '{reconnect}:jobs:marker'));
      const nodes = cli('cluster', 'nodes').split('\n').filter(Boolean);
      const serves = (line: string) =>
        line.split(' ').slice(8).some((range) => {
          const [from, to = from] = range.split('-').map(Number);
          return slot >= from! && slot <= to!;
        });
      const master = nodes.find((l) => l.includes('master') && serves(l))!;
      const masterId = master.split(' ')[0]!;
      const replica = nodes.find((l) => l.includes('slave') && l.split(' ')[3] === masterId)!;
      const port = (line: string) => Number(line.split(' ')[1]!.split(':')[1]!.split('@')[0]);
      cluster.kill(port(master));
      cluster.kill(port(replica));
      const live = cluster.nodes.find((n) => n.port !== port(master) && n.port !== port(replica))!;
      const failedBy = Date.now() + 10_000;
      while (!clusterInfo(live.port).includes('cluster_state:fail')) {
        if (Date.now() > failedBy) throw new Error('the cluster never reported cluster_state:fail');
        await new Promise((r) => setTimeout(r, 100));
      }

      client.disconnect();
      connection.disconnect();
      expect(await settled(client.connect())).toBe('settled');
      expect(await settled(connection.connect())).toBe('settled');
    } finally {
      client.disconnect();
      connection.disconnect();
    }
  }, 60_000);
});
