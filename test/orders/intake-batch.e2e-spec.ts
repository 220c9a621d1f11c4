import { Client } from 'pg';
import { OrderQueue, IntakeRepository, requestHash, type CreateResult, type NewOrder } from '@cardpull/orders';
import { orderStepJobId } from '@cardpull/queue';
import { waitFor } from '@cardpull/testing';
import { idemKey, startStack, useStack, waitForOrder } from '../support/stack';

/**
 * The intake puts the orders that arrive in one turn of the event loop into ONE statement
 * (IntakeRepository: order, first attempt with its request ID, "created" event), retries each order alone
 * when that statement fails, and enqueues the steps of one turn with one addBulk (OrderQueue). Batching must
 * not change what each caller gets: its own order (202), the same order on a replay of its key (200), 409
 * for the key with another body, an error only for the order the database refused, and a job only once the
 * order is committed.
 *
 * The suite's own database gets test-only triggers (each suite has a database of its own):
 * - `test_intake_statements`: each committed intake statement with the keys it inserted, so a test can show
 *   that several orders did share one statement (batching really happened, the test is not vacuous);
 * - a poison rule: a statement inserting a key `poison-...` fails, after noting in a sequence (which a
 *   rollback does not undo) how many orders that failed statement held.
 */
const GOOD = { gift_card_code: 'ACME-BOOKS-FIXED', amount: 2500 };

const TRIGGERS = `
  CREATE TABLE test_intake_statements (id serial PRIMARY KEY, keys text[] NOT NULL);
  CREATE FUNCTION test_record_intake() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO test_intake_statements (keys)
      SELECT array_agg(idempotency_key ORDER BY idempotency_key) FROM new_orders HAVING count(*) > 0;
    RETURN NULL;
  END $$;
  CREATE TRIGGER test_record_intake AFTER INSERT ON orders REFERENCING NEW TABLE AS new_orders
    FOR EACH STATEMENT EXECUTE FUNCTION test_record_intake();

  CREATE SEQUENCE test_poisoned_statement_size MINVALUE 0 START 0;
  CREATE FUNCTION test_poison() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE n int;
  BEGIN
    IF EXISTS (SELECT 1 FROM new_orders WHERE idempotency_key LIKE 'poison-%') THEN
      SELECT count(*) INTO n FROM new_orders;
      PERFORM setval('test_poisoned_statement_size', greatest(n, (SELECT last_value FROM test_poisoned_statement_size)));
      RAISE EXCEPTION 'test: the database refuses this order';
    END IF;
    RETURN NULL;
  END $$;
  CREATE TRIGGER test_poison AFTER INSERT ON orders REFERENCING NEW TABLE AS new_orders
    FOR EACH STATEMENT EXECUTE FUNCTION test_poison();`;

describe('intake batching: orders of one event-loop turn share a statement, yet each caller gets its own answer', () => {
  let pg: Client;
  const stack = useStack({ worker: false, env: { RATE_LIMIT_PER_CLIENT: '100000' }, beforeClose: () => pg?.end() });
  beforeAll(async () => {
    pg = new Client({ connectionString: stack.db.url });
    await pg.connect();
    await pg.query(TRIGGERS);
  });
  beforeEach(() => pg.query(`TRUNCATE test_intake_statements; SELECT setval('test_poisoned_statement_size', 0)`));

  const post = (body: object, key: string) => stack.call('POST', '/v1/orders', { body, headers: { 'idempotency-key': key } });
  const statements = async () => (await pg.query<{ keys: string[] }>('SELECT keys FROM test_intake_statements ORDER BY id')).rows.map((r) => r.keys);
  const poisonedStatementSize = async () => Number((await pg.query('SELECT last_value FROM test_poisoned_statement_size')).rows[0].last_value);
  const ordersWithKeys = async (keys: string[]) =>
    (await pg.query<{ id: string; idempotency_key: string; request_id: string }>(
      'SELECT o.id, o.idempotency_key, a.request_id FROM orders o JOIN attempts a ON a.order_id = o.id WHERE o.idempotency_key = ANY($1)',
      [keys],
    )).rows;
  const liveJobs = () => stack.api!.get(OrderQueue).liveJobIds();
  const newOrder = (key: string, body: { gift_card_code: string; amount: number } = GOOD): NewOrder => ({
    client: 'shop',
    callbackSecrets: true,
    idempotencyKey: key,
    requestHash: requestHash({ ...body, mode: 'sync' }),
    mode: 'sync',
    giftCardCode: body.gift_card_code,
    amount: body.amount,
    metadata: undefined,
  });

  it('one order the database refuses fails alone: the others of its statement are created (202), committed with their request IDs, and enqueued', async () => {
    // Sent together until the refused order shared its statement with others (usually the first round).
    let round = 0;
    const answers: { key: string; status: number; body: any }[] = [];
    while ((await poisonedStatementSize()) < 2) {
      if (++round > 5) throw new Error(`the refused order never shared a statement with another one: ${JSON.stringify(await statements())}`);
      const keys = [...Array.from({ length: 10 }, () => idemKey('batch')), idemKey('poison'), ...Array.from({ length: 10 }, () => idemKey('batch'))];
      answers.push(...(await Promise.all(keys.map(async (key) => ({ key, ...(await post(GOOD, key)) })))));
    }
    const poisoned = answers.filter((a) => a.key.startsWith('poison-'));
    const good = answers.filter((a) => !a.key.startsWith('poison-'));
    // The refused order gets an error, and nothing of it is stored.
    expect(poisoned.map((a) => [a.status, a.body.errors?.[0]?.code])).toEqual(poisoned.map(() => [500, 'internal_error']));
    expect(await ordersWithKeys(poisoned.map((a) => a.key))).toEqual([]);
    // Every other order of the round is accepted, committed with the request ID it was answered with...
    expect(good.filter((a) => a.status !== 202).map((a) => `${a.key}: ${a.status} ${JSON.stringify(a.body)}`)).toEqual([]);
    const stored = new Map((await ordersWithKeys(good.map((a) => a.key))).map((r) => [r.idempotency_key, r]));
    for (const a of good) {
      expect(stored.get(a.key)).toEqual({ id: a.body.order.id, idempotency_key: a.key, request_id: a.body.order.attempts[0].request_id });
    }
    // ...and has its first step's job in Redis (enqueued once its answer went: test/orders/intake-answer.e2e-spec.ts).
    const missing = async () => {
      const jobs = await liveJobs();
      return good.filter((a) => !jobs.has(orderStepJobId(a.body.order.id, 1))).map((a) => a.key);
    };
    await waitFor('every accepted order\'s first job in Redis', async () => (await missing()).length === 0, 10_000).catch(() => undefined);
    expect(await missing()).toEqual([]);
    // Batching did happen: the statement the database refused held other orders, which were then retried alone.
    expect(await poisonedStatementSize()).toBeGreaterThan(1);
  });

  it('in one statement: a replayed key gets the same order (replay), the key with another body a conflict, and only one row per key', async () => {
    const repo = stack.api!.get(IntakeRepository);
    const [a, b] = [idemKey('same'), idemKey('other')];
    // Created in the same turn of the event loop: one batch, whatever the machine's speed.
    const results = await Promise.all([
      repo.create(newOrder(a)),
      repo.create(newOrder(a)),
      repo.create(newOrder(b)),
      repo.create(newOrder(b, { ...GOOD, amount: 5000 })),
    ]);
    expect(await statements()).toEqual([[a, b].sort()]);
    const byKey = (i: number, j: number) => [results[i]!, results[j]!];
    const [a1, a2] = byKey(0, 1);
    expect([a1.kind, a2.kind].sort()).toEqual(['created', 'replay']);
    expect(a2.order.id).toBe(a1.order.id);
    const [b1, b2] = byKey(2, 3);
    expect([b1.kind, b2.kind].sort()).toEqual(['conflict', 'created']);
    expect(b2.order.id).toBe(b1.order.id);
    expect((await ordersWithKeys([a, b])).map((r) => r.idempotency_key).sort()).toEqual([a, b].sort());
    // The created one's request ID is the one committed.
    const created = [a1, a2, b1, b2].filter((r): r is Extract<CreateResult, { kind: 'created' }> => r.kind === 'created');
    expect(new Set((await ordersWithKeys([a, b])).map((r) => r.request_id))).toEqual(new Set(created.map((r) => r.requestId)));
  });

  it('a statement that fails is retried order by order: the replay and the conflict still come out right, the refused order alone fails', async () => {
    const repo = stack.api!.get(IntakeRepository);
    const [a, b, poison] = [idemKey('same'), idemKey('other'), idemKey('poison')];
    const settled = await Promise.allSettled([
      repo.create(newOrder(a)),
      repo.create(newOrder(poison)),
      repo.create(newOrder(a)),
      repo.create(newOrder(b)),
      repo.create(newOrder(b, { ...GOOD, amount: 5000 })),
    ]);
    // The first statement held the three keys (a repeated key is skipped inside it), so it failed; then each order went alone.
    expect(await poisonedStatementSize()).toBe(3);
    expect(settled[1]).toEqual({ status: 'rejected', reason: expect.objectContaining({ message: expect.stringContaining('the database refuses this order') }) });
    const results = settled.filter((s) => s.status === 'fulfilled').map((s) => s.value);
    expect(results).toHaveLength(4);
    const [a1, a2, b1, b2] = results as [CreateResult, CreateResult, CreateResult, CreateResult];
    expect([a1.kind, a2.kind].sort()).toEqual(['created', 'replay']);
    expect(a2.order.id).toBe(a1.order.id);
    expect([b1.kind, b2.kind].sort()).toEqual(['conflict', 'created']);
    expect(b2.order.id).toBe(b1.order.id);
    expect((await ordersWithKeys([a, b, poison])).map((r) => r.idempotency_key).sort()).toEqual([a, b].sort());
    expect((await statements()).every((keys) => keys.length === 1)).toBe(true);
  });

  it('over HTTP, replays and conflicts sent at the same time as other orders: 202 once, 200 with the same order, 409 for another body', async () => {
    const same = idemKey('same');
    const other = idemKey('other');
    const sends: [string, object][] = [
      [same, GOOD],
      [other, GOOD],
      ...Array.from({ length: 8 }, (): [string, object] => [idemKey('filler'), GOOD]),
      [same, GOOD],
      [other, { ...GOOD, amount: 5000 }],
    ];
    const res = await Promise.all(sends.map(([key, body]) => post(body, key)));
    const of = (key: string) => res.filter((_, i) => sends[i]![0] === key);
    const sameAnswers = of(same);
    expect(sameAnswers.map((r) => r.status).sort()).toEqual([200, 202]);
    expect(sameAnswers[1]!.body.order.id).toBe(sameAnswers[0]!.body.order.id);
    expect(sameAnswers[1]!.body.order.attempts[0].request_id).toBe(sameAnswers[0]!.body.order.attempts[0].request_id);
    const otherAnswers = of(other);
    expect(otherAnswers.map((r) => r.status).sort()).toEqual([202, 409]);
    expect(otherAnswers.find((r) => r.status === 409)!.body.errors[0].code).toBe('idempotency_key_reused');
    expect((await ordersWithKeys([same, other])).map((r) => r.idempotency_key).sort()).toEqual([same, other].sort());
    expect(res.filter((_, i) => sends[i]![0].startsWith('filler-')).map((r) => r.status)).toEqual(Array(8).fill(202));
  });
});

describe('each order is committed before its job is enqueued, however slow the commit', () => {
  let pg: Client;
  // One sweep at start-up, the next one in ten minutes: an order whose first job found nothing would wait for it.
  const stack = useStack({ env: { SWEEP_INTERVAL_MS: '600000' }, beforeClose: () => pg?.end() });
  beforeAll(async () => {
    pg = new Client({ connectionString: stack.db.url });
    await pg.connect();
    // Every intake commit takes 200 ms more per order: a deferred trigger runs at COMMIT, after the statement
    // has returned its rows inside the transaction. A job enqueued before the commit would run while the
    // order is not visible yet, end with "no such order", and leave the order to the next sweep.
    await pg.query(`
      CREATE FUNCTION test_slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.2); RETURN NULL; END $$;
      CREATE CONSTRAINT TRIGGER test_slow_commit AFTER INSERT ON orders DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW EXECUTE FUNCTION test_slow_commit();`);
  });

  it('orders sent together each complete on their first job, long before the next sweep', async () => {
    const keys = Array.from({ length: 6 }, () => idemKey('slow-commit'));
    const res = await Promise.all(keys.map((key, i) => stack.call('POST', '/v1/orders', { body: { ...GOOD, mode: i % 2 ? 'async' : 'sync' }, headers: { 'idempotency-key': key } })));
    expect(res.map((r) => r.status)).toEqual(keys.map(() => 202));
    const ids: string[] = res.map((r) => r.body.order.id);
    const done = await Promise.all(ids.map((id) => waitForOrder(stack, id, undefined, 15_000)));
    expect(done.map((o) => o.status)).toEqual(ids.map(() => 'completed'));
    // The first job of each order found it committed.
    for (const id of ids) {
      expect([id, await stack.redis.client.hget(`${stack.redis.prefix}:orders:${orderStepJobId(id, 1)}`, 'returnvalue')]).not.toEqual([id, JSON.stringify('no such order')]);
    }
  });
});

describe('intake while Redis is down, orders sent together: all accepted (the failed enqueues answer false for each), then completed from Postgres', () => {
  it('every caller gets 202 (the answer does not wait for the enqueue); the failed batch names every order; a worker with Redis completes them all', async () => {
    const api = await startStack({ worker: false, env: { REDIS_URL: 'redis://127.0.0.1:1/0' } });
    try {
      const res = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          api.call('POST', '/v1/orders', { body: { ...GOOD, mode: i % 3 ? 'sync' : 'async' }, headers: { 'idempotency-key': idemKey('noredis-batch') } }),
        ),
      );
      // Nobody waits for Redis: the answers go at the commit, and each enqueue gives up after 1 s on its own
      // (ioredis would retry for ever, and these answers would never come). Not timed: a loaded machine takes
      // seconds for the twelve POSTs themselves.
      expect(res.map((r) => r.status)).toEqual(res.map(() => 202));
      const ids: string[] = res.map((r) => r.body.order.id);
      // What the API logged for the enqueues it could not make (after its answers: they do not wait for
      // Redis): every order, and several in one batch.
      const failedBatches = () =>
        api.logs
          .json()
          .filter((l) => typeof l.msg === 'string' && l.msg.startsWith('could not enqueue the next step'))
          .map((l) => (l.orderIds as string[]).filter((id) => ids.includes(id)))
          .filter((batch) => batch.length > 0);
      await waitFor('every order\'s failed enqueue logged', () => new Set(failedBatches().flat()).size === ids.length, 15_000).catch(() => undefined);
      expect(new Set(failedBatches().flat())).toEqual(new Set(ids));
      expect(Math.max(...failedBatches().map((b) => b.length))).toBeGreaterThan(1);

      const worker = await startStack({ api: false, db: api.db, sim: api.sim });
      try {
        const done = await Promise.all(ids.map((id) => waitForOrder(api, id, undefined, 20_000)));
        expect(done.map((o) => [o.id, o.status])).toEqual(ids.map((id) => [id, 'completed']));
      } finally {
        await worker.close();
      }
    } finally {
      await api.close();
    }
  });
});
