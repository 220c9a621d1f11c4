import { Queue, Worker } from 'bullmq';
import Redis from 'ioredis';
import { createTestRedis, type TestRedis } from './test-redis';

/** A BullMQ queue on its own Redis key prefix, for a suite that drives a queue owner against real Redis. */
export interface TestQueue<T extends { orderId: string }> {
  redis: TestRedis;
  queue: Queue<T>;
  /** Every ready job's order id, in the order a worker takes them (taking them). */
  takeAll(): Promise<string[]>;
  /** The next `n` jobs' order ids, as a worker takes them. */
  take(n: number): Promise<string[]>;
  close(): Promise<void>;
}

export async function openTestQueue<T extends { orderId: string }>(name: string, label: string): Promise<TestQueue<T>> {
  const redis = await createTestRedis(label);
  const connections: Redis[] = [];
  /** BullMQ leaves a connection it was given open: the suite closes its own. */
  const connection = () => {
    const c = new Redis(redis.url, { maxRetriesPerRequest: null });
    connections.push(c);
    return c;
  };
  const queue = new Queue<T>(name, { connection: connection(), prefix: redis.prefix });
  const take = async (n: number): Promise<string[]> => {
    const worker = new Worker<T>(name, null, { connection: connection(), prefix: redis.prefix, autorun: false });
    const taken: string[] = [];
    try {
      while (taken.length < n) {
        const job = await worker.getNextJob(`token-${taken.length}`, { block: false });
        if (!job) break;
        taken.push(job.data.orderId);
      }
      return taken;
    } finally {
      await worker.close();
    }
  };
  return {
    redis,
    queue,
    take,
    takeAll: () => take(Number.POSITIVE_INFINITY),
    close: async () => {
      await queue.close();
      for (const c of connections) c.disconnect();
      await redis.close();
    },
  };
}
