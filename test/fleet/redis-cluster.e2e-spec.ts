import { spawnSync } from 'node:child_process';
import { Queue } from 'bullmq';
import { Cluster } from 'ioredis';
import { startRedisCluster, type TestRedisCluster } from '@cardpull/testing';
import { useStack } from '../support/stack';
import { ADMIN_ENV, ALICE, adminCall, login } from '../admin/support/admin';
import { placeOrder, waitForAllEnded, withDb, type Mode } from '../recovery/support/recovery';

/** The slot of a key (CLUSTER KEYSLOT), asked of a node. */
const keyslot = (port: number, key: string) => Number(spawnSync('redis-cli', ['-p', String(port), 'cluster', 'keyslot', key], { encoding: 'utf8' }).stdout.trim());

/**
 * Issue 13, item 1: cardpull on a real Redis Cluster (3 masters, 3 replicas, started by the harness from
 * the machine's redis-server). REDIS_CLUSTER_NODES makes every connection an ioredis Cluster and the
 * queues' prefix a hash tag ({prefix}), so each queue's keys live in one slot as BullMQ requires; the
 * partner-limit gate (its own {traffic} tag), the poll ager and the sweeper run there too.
 */
describe('on a Redis Cluster: 3 masters, 3 replicas', () => {
  let cluster: TestRedisCluster;
  beforeAll(async () => {
    cluster = await startRedisCluster();
  }, 60_000);
  const stack = useStack({
    env: {
      get REDIS_CLUSTER_NODES() {
        return cluster.nodesSetting;
      },
      PARTNER_LIMITS: JSON.stringify({ create: { per_second: 200 }, poll: { per_second: 200 } }),
      ...ADMIN_ENV,
    } as Record<string, string>,
  });
  afterAll(() => cluster?.stop());

  const runOrders = async (n: number) => {
    const modes: Mode[] = Array.from({ length: n }, (_, i) => (i % 2 ? 'async' : 'sync'));
    const placed = await Promise.all(modes.map((m) => placeOrder(stack, m)));
    return waitForAllEnded(stack, placed.map((o) => o.id), 60_000);
  };
  /** Orders that caused more or fewer than one card (0 lost, 0 duplicated). */
  const cardsOtherThanOne = async () =>
    (await withDb(stack, (db) => db.query<{ id: string; n: string }>('SELECT o.id, count(c.*) AS n FROM orders o LEFT JOIN cards c ON c.order_id = o.id GROUP BY o.id HAVING count(c.*) <> 1'))).rows;

  it('orders complete end to end, and every key of the orders queue lives in one slot', async () => {
    const ended = await runOrders(40);
    expect(ended.filter((o) => o.status !== 'completed').map((o) => [o.id, o.status])).toEqual([]);
    const prefix = `{${stack.env.REDIS_PREFIX}}`;
    const port = cluster.masters()[0]!.port;
    const slots = new Set([`${prefix}:orders:wait`, `${prefix}:orders:prioritized`, `${prefix}:orders:delayed`, `${prefix}:orders:cardpull-aged`, `${prefix}:callbacks:wait`].map((k) => keyslot(port, k)));
    expect(slots.size).toBe(1);
    // The queues are on the cluster (not on the suite's own single Redis).
    const keys = cluster.masters().reduce((sum, m) => sum + Number(spawnSync('redis-cli', ['-p', String(m.port), 'dbsize'], { encoding: 'utf8' }).stdout.trim()), 0);
    expect(keys).toBeGreaterThan(0);
    expect(await cardsOtherThanOne()).toEqual([]);
    // The abuse limits' scripts (several keys under one hash tag, {abuse}) ran on the cluster: none failed there (a
    // CROSSSLOT refusal, say). A deadline missed on a loaded machine is the designed fallback, not a failure.
    expect(stack.logs.lines.filter((l) => l.includes('abuse limits unavailable') && !/did not answer within/.test(l))).toEqual([]);
    const abuseKeys = cluster.masters().reduce((sum, m) => sum + spawnSync('redis-cli', ['-p', String(m.port), '--scan', '--pattern', `${stack.env.REDIS_PREFIX}:{abuse}:*`], { encoding: 'utf8' }).stdout.trim().split('\n').filter(Boolean).length, 0);
    expect(abuseKeys).toBeGreaterThan(0);
  });

  it('the job dashboard (bull-board) reads both queues on the cluster, and the health check pings it', async () => {
    const cookie = await login(stack, ALICE);
    const res = await adminCall(stack, 'GET', '/admin/queues/api/queues', { cookie });
    expect(res.status).toBe(200);
    const queues = (res.json.queues as { name: string; counts: Record<string, number> }[]).map((q) => q.name).sort();
    expect(queues).toEqual(['callbacks', 'orders']);
    const ready = await stack.call('GET', '/health/ready', { key: null });
    expect([ready.status, JSON.stringify(ready.body)]).toEqual([200, expect.stringContaining('"redis":{"status":"up"')]);
  });

  it('the cluster loses every key (FLUSHALL on each master): the sweeper re-enqueues from Postgres and the orders complete', async () => {
    await stack.stopWorker();
    const placed = await Promise.all(Array.from({ length: 20 }, (_, i) => placeOrder(stack, i % 2 ? 'async' : 'sync')));
    cluster.flushAll();
    await stack.startWorker();
    const ended = await waitForAllEnded(stack, placed.map((o) => o.id), 60_000);
    expect(ended.filter((o) => o.status !== 'completed').map((o) => [o.id, o.status])).toEqual([]);
    expect(await cardsOtherThanOne()).toEqual([]);
  });

  it('the master holding the queues is killed mid-run: its replica takes over, and every order completes with one card', async () => {
    const port = cluster.masters()[0]!.port;
    const slot = keyslot(port, `{${stack.env.REDIS_PREFIX}}:orders:wait`);
    const holder = cluster.masters().find((m) => {
      const out = spawnSync('redis-cli', ['-p', String(m.port), 'cluster', 'countkeysinslot', String(slot)], { encoding: 'utf8' });
      return !out.stdout.includes('MOVED') && /^\d+$/.test(out.stdout.trim()) && Number(out.stdout.trim()) > 0;
    });
    expect(holder).toBeDefined();
    const placing = Promise.all(Array.from({ length: 40 }, (_, i) => placeOrder(stack, i % 2 ? 'async' : 'sync')));
    await new Promise((r) => setTimeout(r, 100));
    cluster.kill(holder!.port);
    const placed = await placing;
    await cluster.waitHealthy();
    const ended = await waitForAllEnded(stack, placed.map((o) => o.id), 90_000).catch(async (error: Error) => {
      // What the cluster holds for the orders still open, and what the processes logged (a failure's picture).
      const open = (await withDb(stack, (db) => db.query<{ id: string; step_seq: number }>("SELECT id, step_seq FROM orders WHERE status NOT IN ('completed', 'failed', 'needs_attention')"))).rows;
      const client = new Cluster(cluster.masters().map((m) => ({ host: m.host, port: m.port })));
      const queue = new Queue('orders', { connection: client, prefix: `{${stack.env.REDIS_PREFIX}}` });
      const states = await Promise.all(open.slice(0, 5).map(async (o) => `${o.id}-${o.step_seq}: ${await queue.getJobState(`${o.id}-${o.step_seq}`)}`));
      await queue.close();
      client.disconnect();
      const warnings = stack.logs.lines.filter((l) => /"level":(40|50|60)/.test(l)).slice(-15);
      throw new Error(`${error.message}\njobs on the cluster: ${states.join(', ')}\nlast warnings:\n${warnings.join('\n')}`);
    });
    expect(ended.filter((o) => o.status !== 'completed').map((o) => [o.id, o.status])).toEqual([]);
    expect(await cardsOtherThanOne()).toEqual([]);
  }, 120_000);
});
