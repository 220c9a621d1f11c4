import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';

/** Redis is shared by every test run on the machine: each suite uses its own key prefix. */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0';

export interface TestRedis {
  url: string;
  prefix: string;
  /** Deletes every key of this suite's prefix (the suite's own "FLUSHALL"). */
  flush(): Promise<number>;
  close(): Promise<void>;
  client: Redis;
}

export async function createTestRedis(label = 'suite'): Promise<TestRedis> {
  const prefix = `cptest-${label}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const client = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 3 });
  const flush = async () => {
    let cursor = '0';
    let deleted = 0;
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) deleted += await client.del(...keys);
    } while (cursor !== '0');
    return deleted;
  };
  return {
    url: TEST_REDIS_URL,
    prefix,
    client,
    flush,
    close: async () => {
      await flush();
      client.disconnect();
    },
  };
}
