import type { RedisOptions } from 'bullmq';
import Redis from 'ioredis';

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
    retryStrategy: (times) => Math.min(times * 200, 2_000),
  };
}

export interface RedisCheck {
  /** Why the service cannot start, or null. */
  error: string | null;
  /** Problems worth a warning (e.g. an eviction policy that may drop jobs). */
  warnings: string[];
}

/** Start-up check of Redis: reachable, and `maxmemory-policy noeviction` (an evicted job is a delayed order). */
export async function checkRedis(redisUrl: string, setting = 'REDIS_URL'): Promise<RedisCheck> {
  const url = new URL(redisUrl);
  const where = `${url.hostname}:${url.port || 6379}`;
  const client = new Redis({
    ...redisOptions(redisUrl),
    lazyConnect: true,
    connectTimeout: 3_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    client.disconnect();
    return {
      error:
        `Cannot reach Redis at ${where} (${setting}): ${(error as Error).message}.\n` +
        '  Start it with `docker compose up -d redis`, or install it from your distribution ' +
        `(Debian: \`apt-get install redis-server\`, then \`redis-server --daemonize yes\`), or set ${setting} to a reachable server.`,
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
    client.disconnect();
  }
  return { error: null, warnings };
}
