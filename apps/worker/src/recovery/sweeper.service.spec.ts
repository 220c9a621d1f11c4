import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { Pool } from 'pg';
import { TaskLeases } from '@cardpull/db';
import { CALLBACKS_QUEUE, ORDERS_QUEUE, callbackJobId, orderStepJobId, type CallbackJobData, type OrderJobData } from '@cardpull/queue';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from '@cardpull/testing';
import { CallbackQueue, CallbacksRepository, OrderQueue, PartnerCircuit, PartnerStateRepository, StepsRepository } from '@cardpull/orders';
import { Sweeper } from './sweeper.service';

/** More than one chunk of removals and re-adds (500): the sweeper's batching is exercised too. */
const N = 1_200;

/**
 * Invariant 4 (Redis is disposable) at the sweeper itself, against a real Postgres and Redis: every order
 * with a next step and every pending callback event gets its job back, whether Redis lost everything or
 * lost only the lists and kept the job hashes (which would make BullMQ drop a plain re-add as a duplicate).
 */
describe('Sweeper (real Postgres and Redis): every pending step and callback gets a job back', () => {
  let db: TestDatabase;
  let pool: Pool;
  let redis: TestRedis;
  let orderQueue: Queue<OrderJobData>;
  let callbackQueue: Queue<CallbackJobData>;
  let orders: OrderQueue;
  let callbacks: CallbackQueue;
  let sweeper: Sweeper;
  let steps: { id: string; step_seq: number }[];
  let events: string[];
  const connections: Redis[] = [];
  const connection = () => {
    const c = new Redis(redis.url, { maxRetriesPerRequest: null });
    connections.push(c);
    return c;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 4 });
    redis = await createTestRedis('sweeper');
    orderQueue = new Queue<OrderJobData>(ORDERS_QUEUE, { connection: connection(), prefix: redis.prefix });
    callbackQueue = new Queue<CallbackJobData>(CALLBACKS_QUEUE, { connection: connection(), prefix: redis.prefix });
    orders = new OrderQueue(orderQueue);
    callbacks = new CallbackQueue(callbackQueue);
    sweeper = new Sweeper(new StepsRepository(pool), orders, new PartnerCircuit(new PartnerStateRepository(pool), orders), callbacks, new CallbacksRepository(pool));

    // N orders waiting for a step an hour from now, plus one that ended (no step: nothing to enqueue).
    ({ rows: steps } = await pool.query<{ id: string; step_seq: number }>(
      `INSERT INTO orders (id, client, idempotency_key, request_hash, status, mode, gift_card_code, amount, next_step, next_step_at, step_seq)
       SELECT gen_random_uuid(), 'shop', 'key-' || i, 'h', 'in_progress', 'sync', 'GC', 1000, 'sync_call', now() + interval '1 hour', 1 + i % 3
       FROM generate_series(1, $1) i RETURNING id, step_seq`,
      [N],
    ));
    const { rows: ended } = await pool.query<{ id: string }>(
      `INSERT INTO orders (id, client, idempotency_key, request_hash, status, mode, gift_card_code, amount, step_seq)
       VALUES (gen_random_uuid(), 'shop', 'ended', 'h', 'failed', 'sync', 'GC', 1000, 2) RETURNING id`,
    );
    // A pending callback event per order (retry due in an hour), and a delivered one (no job).
    const pending = await pool.query<{ id: string }>(
      `INSERT INTO callback_events (id, order_id, client, type, url, snapshot, next_attempt_at)
       SELECT gen_random_uuid(), id, 'shop', 'order.completed', 'http://127.0.0.1:9/cb', '{"status":"completed","error":null}', now() + interval '1 hour'
       FROM orders WHERE next_step IS NOT NULL RETURNING id`,
    );
    events = pending.rows.map((e) => e.id);
    await pool.query(
      `INSERT INTO callback_events (id, order_id, client, type, url, snapshot, state, delivered_at)
       VALUES (gen_random_uuid(), $1, 'shop', 'order.completed', 'http://127.0.0.1:9/cb', '{"status":"completed","error":null}', 'delivered', now())`,
      [ended[0]!.id],
    );
  });

  afterAll(async () => {
    await orderQueue?.close();
    await callbackQueue?.close();
    for (const c of connections) c.disconnect();
    await redis?.close();
    await pool?.end();
    await db?.drop();
  });

  const expectAllLive = async () => {
    const liveSteps = await orders.liveJobIds();
    expect(liveSteps.size).toBe(N);
    expect(steps.filter((s) => !liveSteps.has(orderStepJobId(s.id, s.step_seq)))).toEqual([]);
    const liveCallbacks = await callbacks.liveJobIds();
    expect(liveCallbacks.size).toBe(N);
    expect(events.filter((id) => !liveCallbacks.has(callbackJobId(id)))).toEqual([]);
  };

  it('with nothing in Redis (a flush), re-enqueues every pending step and callback, and nothing else', async () => {
    await redis.flush();
    expect(await sweeper.sweep()).toEqual({ swept: true, pending: N, enqueued: N });
    await expectAllLive();
  });

  it('a second sweep finds every job live and enqueues nothing', async () => {
    expect(await sweeper.sweep()).toEqual({ swept: true, pending: N, enqueued: 0 });
    await expectAllLive();
  });

  it('with the delayed lists lost and the job hashes kept, removes the leftovers and re-enqueues every job', async () => {
    await redis.client.del(`${redis.prefix}:${ORDERS_QUEUE}:delayed`, `${redis.prefix}:${CALLBACKS_QUEUE}:delayed`);
    expect((await orders.liveJobIds()).size).toBe(0);
    const s = steps[0]!;
    expect(await redis.client.exists(`${redis.prefix}:${ORDERS_QUEUE}:${orderStepJobId(s.id, s.step_seq)}`)).toBe(1);
    expect(await redis.client.exists(`${redis.prefix}:${CALLBACKS_QUEUE}:${callbackJobId(events[0]!)}`)).toBe(1);

    expect(await sweeper.sweep()).toEqual({ swept: true, pending: N, enqueued: N });
    await expectAllLive();
  });

  it('an order cannot have a next step without its time (the CHECK the sweeper relies on: it finds open orders by next_step_at)', async () => {
    await expect(
      pool.query(
        `INSERT INTO orders (id, client, idempotency_key, request_hash, status, mode, gift_card_code, amount, next_step, next_step_at, step_seq)
         VALUES (gen_random_uuid(), 'shop', 'no-time', 'h', 'in_progress', 'sync', 'GC', 1000, 'sync_call', NULL, 1)`,
      ),
    ).rejects.toThrow(/orders_next_step_has_time/);
  });

  it('does not sweep while another worker holds the sweep (its lease in periodic_task_runs)', async () => {
    sweeper.leases = new TaskLeases(pool, 60_000, 'this-worker');
    const other = new TaskLeases(pool, 60_000, 'other-worker');
    try {
      expect(await other.claim('sweep', 0)).toBe(true);
      expect(await sweeper.sweep()).toEqual({ swept: false, pending: 0, enqueued: 0 });
      await other.release('sweep');
      expect(await sweeper.sweep()).toEqual({ swept: true, pending: N, enqueued: 0 });
    } finally {
      sweeper.leases = undefined;
    }
  });
});
