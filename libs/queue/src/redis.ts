import type { ConnectionOptions, RedisOptions } from 'bullmq';
import Redis, { Cluster } from 'ioredis';

/** Where Redis is (the settings of the same names): one node, or a Redis Cluster. */
export interface RedisTarget {
  REDIS_URL: string;
  /** Seed nodes of a Redis Cluster (REDIS_CLUSTER_NODES); empty: the one node of REDIS_URL. */
  REDIS_CLUSTER_NODES: readonly { host: string; port: number }[];
  REDIS_PREFIX: string;
}

export const isCluster = (t: Pick<RedisTarget, 'REDIS_CLUSTER_NODES'>): boolean => t.REDIS_CLUSTER_NODES.length > 0;

/**
 * BullMQ's key prefix. On a Redis Cluster it is a hash tag, `{REDIS_PREFIX}`, so every key of a queue hashes
 * to one slot, as BullMQ's Lua scripts (which touch many keys of a queue at once) require; our own keys
 * beside a queue's (the poll ager's set) share its prefix, hence its slot.
 */
export const queuePrefix = (t: Pick<RedisTarget, 'REDIS_CLUSTER_NODES' | 'REDIS_PREFIX'>): string => (isCluster(t) ? `{${t.REDIS_PREFIX}}` : t.REDIS_PREFIX);

/**
 * A client for `options` (ioredis options: timeouts, retries, offline queue): on one node, a `Redis`; on a
 * cluster, a `Cluster` of the seed nodes, whose node connections take the credentials and TLS of REDIS_URL
 * and the per-command options, and whose own retry strategy is `retryStrategy`.
 */
export function createRedis(t: Pick<RedisTarget, 'REDIS_URL' | 'REDIS_CLUSTER_NODES'>, options: RedisOptions = {}): Redis | Cluster {
  const all = { ...redisOptions(t.REDIS_URL), ...options };
  if (!isCluster(t)) return new Redis(all);
  // A cluster has no database index; host and port come from the nodes.
  const { host: _host, port: _port, db: _db, enableOfflineQueue, retryStrategy, lazyConnect, ...node } = all;
  return new Cluster(
    t.REDIS_CLUSTER_NODES.map((n) => ({ host: n.host, port: n.port })),
    {
      redisOptions: node,
      // No ready check ("cluster_state:ok" before 'ready'): during a failover the state is "fail" for a
      // second or two, and ioredis then drops the connection it just made and tries again, leaving the
      // promise of that connect() unsettled for ever. BullMQ reconnects its blocking client through that
      // promise, so its worker stopped taking jobs after a failover (and never closed). Without the check a
      // slot still without a master answers CLUSTERDOWN, which ioredis retries (retryDelayOnClusterDown).
      enableReadyCheck: false,
      ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
      ...(lazyConnect === undefined ? {} : { lazyConnect }),
      ...(retryStrategy ? { clusterRetryStrategy: (times: number) => retryStrategy(times) ?? null } : {}),
    },
  );
}

/**
 * The `connection` of a BullMQ Queue or Worker. On one node, options: BullMQ makes its clients and closes
 * them. On a cluster, a Cluster client (BullMQ cannot make one from options), which the caller closes
 * (closeConnection) after the queue or worker using it.
 */
export function bullConnection(t: Pick<RedisTarget, 'REDIS_URL' | 'REDIS_CLUSTER_NODES'>, role: 'producer' | 'worker'): ConnectionOptions {
  const options = role === 'worker' ? workerConnection(t.REDIS_URL) : producerConnection(t.REDIS_URL);
  return isCluster(t) ? (createRedis(t, options) as unknown as ConnectionOptions) : options;
}

/** Closes a connection made by bullConnection, if it is a client (on a cluster); options need nothing. */
export async function closeConnection(connection: ConnectionOptions): Promise<void> {
  if (connection instanceof Cluster || connection instanceof Redis) await connection.quit().catch(() => connection.disconnect());
}

/** Connection options from REDIS_URL (BullMQ's RedisOptions, which ioredis accepts too). */
export function redisOptions(redisUrl: string): RedisOptions {
  const url = new URL(redisUrl);
  const db = url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0;
  return {
    host: url.hostname,
    port: Number(url.port || 6379),
    username: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    db: Number.isInteger(db) ? db : 0,
    tls: url.protocol === 'rediss:' ? {} : undefined,
  };
}

/** Worker connections: BullMQ requires maxRetriesPerRequest null (blocking commands wait for Redis to return). */
export function workerConnection(redisUrl: string): RedisOptions {
  return { ...redisOptions(redisUrl), maxRetriesPerRequest: null, enableReadyCheck: true };
}

/**
 * Producer connections (the API): fail fast while Redis is down instead of queueing commands, because the
 * order is already durable in Postgres and the sweeper will enqueue it later (invariant 4).
 */
export function producerConnection(redisUrl: string): RedisOptions {
  return {
    ...redisOptions(redisUrl),
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    connectTimeout: 2_000,
    // No command waits for ever (a node lost mid-failover): an enqueue that fails is repaired by the sweeper.
    commandTimeout: 10_000,
    retryStrategy: (times) => Math.min(times * 200, 2_000),
  };
}

export interface RedisCheck {
  /** Why the service cannot start, or null. */
  error: string | null;
  /** Problems worth a warning (e.g. an eviction policy that may drop jobs). */
  warnings: string[];
}

const CHECK_TIMEOUT_MS = 10_000;

/** Start-up check of Redis: reachable, and `maxmemory-policy noeviction` (an evicted job is a delayed order). */
export async function checkRedis(target: string | Pick<RedisTarget, 'REDIS_URL' | 'REDIS_CLUSTER_NODES'>, setting = 'REDIS_URL'): Promise<RedisCheck> {
  const t = typeof target === 'string' ? { REDIS_URL: target, REDIS_CLUSTER_NODES: [] } : target;
  const url = new URL(t.REDIS_URL);
  const where = isCluster(t) ? `the Redis Cluster ${t.REDIS_CLUSTER_NODES.map((n) => `${n.host}:${n.port}`).join(',')}` : `${url.hostname}:${url.port || 6379}`;
  if (isCluster(t)) setting = 'REDIS_CLUSTER_NODES';
  const client = createRedis(t, {
    lazyConnect: true,
    connectTimeout: 3_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    // A cluster learns its slots before it answers: commands wait for that (they fail fast on one node).
    enableOfflineQueue: isCluster(t),
  });
  // What the connection met (ECONNREFUSED, ...): more telling than the "Connection is closed" that follows.
  let met: Error | undefined;
  client.on('error', (error: Error) => (met ??= error));
  // A cluster whose master is failing over may leave connect() unsettled with nothing else to keep the
  // process alive (it would exit 0 in silence): bound the check with a timer.
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([(async () => {
      await client.connect();
      await client.ping();
    })(), deadline]);
  } catch (error) {
    clearTimeout(timer);
    client.disconnect();
    return {
      error:
        `Cannot reach Redis at ${where} (${setting}): ${(met ?? (error as Error)).message.trim().replace(/\.+$/, '')}.\n` +
        '  Install it from your distribution (Debian: `apt-get install redis-server`, then `redis-server --daemonize yes`), ' +
        `or set ${setting} to a reachable server (\`docker compose up -d redis\` gives one at redis://127.0.0.1:56379).`,
      warnings: [],
    };
  }
  const warnings: string[] = [];
  try {
    const reply = (await client.config('GET', 'maxmemory-policy')) as string[];
    const policy = reply[1];
    if (policy && policy !== 'noeviction') {
      warnings.push(
        `Redis at ${where} has maxmemory-policy "${policy}": under memory pressure it may evict queued jobs. ` +
          'Orders are safe in Postgres (the sweeper re-enqueues them) but will be delayed; set `maxmemory-policy noeviction`.',
      );
    }
  } catch {
    warnings.push(`Could not read maxmemory-policy of Redis at ${where} (CONFIG GET refused); make sure it is noeviction.`);
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
  return { error: null, warnings };
}
