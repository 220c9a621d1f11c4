import { randomUUID } from 'node:crypto';
import { Pool as PgPool, type Pool } from 'pg';
import { createPgPool } from '@cardpull/db';
import { createTestDatabase, testPool, type TestDatabase } from '@cardpull/testing';
import { IntakeRepository, StepsRepository, TransitionsRepository, requestHash, type StoredCard } from '@cardpull/orders';

/**
 * Issue 22 (per-card cost): the takes of one turn of the worker's event loop share one statement and one
 * commit, and so do its card stores (libs/orders/src/write/step-batch.ts). Batching must not change what
 * each step gets: its own order, leased or not as a take of its own would leave it, a check that holds one
 * take back holds back that one only, each card stored once with its own role, and a statement the database
 * refuses is run again step by step, so that only the step that causes the error gets it.
 *
 * The suite's own database gets test-only poison: a trigger that refuses to mark the attempt of one chosen
 * order as sent, and one that refuses to store one chosen card. Each counts, in a sequence (which a rollback
 * does not undo), how many times it refused: twice means the refused step was tried in the shared statement
 * and then alone.
 */
const POISON = `
  CREATE TABLE test_poison (kind text PRIMARY KEY, value text NOT NULL);
  CREATE SEQUENCE test_poison_refusals MINVALUE 0 START 0;
  CREATE FUNCTION test_refuse_take() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF NEW.order_id::text = (SELECT value FROM test_poison WHERE kind = 'take') THEN
      PERFORM nextval('test_poison_refusals');
      RAISE EXCEPTION 'test: the database refuses this step';
    END IF;
    RETURN NEW;
  END $$;
  CREATE FUNCTION test_refuse_store() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF NEW.partner_card_id = (SELECT value FROM test_poison WHERE kind = 'store') THEN
      PERFORM nextval('test_poison_refusals');
      RAISE EXCEPTION 'test: the database refuses this step';
    END IF;
    RETURN NEW;
  END $$;
  CREATE TRIGGER test_refuse_take BEFORE UPDATE ON attempts FOR EACH ROW EXECUTE FUNCTION test_refuse_take();
  CREATE TRIGGER test_refuse_store BEFORE INSERT ON cards FOR EACH ROW EXECUTE FUNCTION test_refuse_store();`;

describe('steps of one turn share a statement and its commit, yet each gets what a statement of its own would give it', () => {
  let db: TestDatabase;
  let admin: Pool;
  let pool: Pool;
  beforeAll(async () => {
    db = await createTestDatabase();
    admin = testPool(db.url, 1);
    await admin.query(POISON);
    pool = createPgPool(db.url, 10);
  });
  afterAll(async () => {
    await pool?.end();
    await admin?.end();
    await db?.drop();
  });
  beforeEach(() => admin.query(`TRUNCATE test_poison; SELECT setval('test_poison_refusals', 0)`));

  const body = { gift_card_code: 'FAST-FREE', amount: 500, mode: 'sync' as const };
  const newOrders = async (n: number) => {
    const intake = new IntakeRepository(pool);
    const created = await Promise.all(
      Array.from({ length: n }, () => intake.create({ client: 'shop', idempotencyKey: `batch-${randomUUID()}`, requestHash: requestHash(body), mode: 'sync', giftCardCode: 'FAST-FREE', amount: 500, metadata: null, callbackUrl: null, callbackSecrets: false })),
    );
    return created.map((c) => {
      if (c.kind !== 'created') throw new Error('expected a new order');
      return { id: c.order.id, requestId: c.requestId };
    });
  };
  const card = (requestId: string, partnerCardId = `card-${randomUUID()}`): StoredCard => ({
    id: randomUUID(),
    requestId,
    partnerCardId,
    keyId: 'k1',
    codeEnc: Buffer.from('sealed'),
    pinEnc: Buffer.from('sealed pin'),
    expireAt: new Date('2030-01-01T00:00:00Z'),
    amount: 500,
    giftCardCode: 'FAST-FREE',
    pdfEnc: null,
  });
  /** The transactions that last wrote these rows (one value: one statement wrote them all). */
  const writers = async (table: 'orders' | 'cards', column: 'id' | 'order_id', ids: string[]) =>
    new Set((await admin.query<{ x: string }>(`SELECT xmin::text AS x FROM ${table} WHERE ${column} = ANY($1::uuid[])`, [ids])).rows.map((r) => r.x));
  const attempts = async (orderIds: string[]) =>
    (await admin.query<{ order_id: string; state: string; call_count: number }>('SELECT order_id, state, call_count FROM attempts WHERE order_id = ANY($1::uuid[]) ORDER BY order_id', [orderIds])).rows;
  const refusals = async () => Number((await admin.query('SELECT last_value FROM test_poison_refusals')).rows[0].last_value);

  it.each([
    ['named statements', true],
    ['server-side functions (behind a transaction pooler)', false],
  ])('through %s: the takes of one turn are one commit, and each answers its own order, leased, its attempt sent once', async (_label, preparedStatements) => {
    const via = createPgPool(db.url, 10, { preparedStatements });
    try {
      const orders = await newOrders(6);
      const steps = new StepsRepository(via);
      const taken = await Promise.all(orders.map((o, i) => steps.take(o.id, 1, `w/${i}`, 30_000)));
      expect(taken.map((t) => (t && t !== 'held' ? [t.order.id, t.leased, t.order.leaseOwner, t.attempt.requestId, t.attempt.state, t.previousState] : t))).toEqual(
        orders.map((o, i) => [o.id, true, `w/${i}`, o.requestId, 'sent', 'created']),
      );
      expect((await writers('orders', 'id', orders.map((o) => o.id))).size).toBe(1);
      expect(await attempts(orders.map((o) => o.id))).toEqual(orders.map((o) => ({ order_id: o.id, state: 'sent', call_count: 1 })).sort((a, b) => (a.order_id < b.order_id ? -1 : 1)));
      // A second take of the same steps in one turn, by other runs: the leases are held, nothing is sent again.
      const again = await Promise.all(orders.map((o) => steps.take(o.id, 1, 'w/other', 30_000)));
      expect(again.map((t) => (t && t !== 'held' ? [t.leased, t.order.leaseOwner] : t))).toEqual(orders.map((_, i) => [false, `w/${i}`]));
      expect((await attempts(orders.map((o) => o.id))).map((a) => a.call_count)).toEqual(orders.map(() => 1));
    } finally {
      await via.end();
    }
  });

  it('two runs of one order\'s step in the same turn (a job run twice): only one of them leases it and sends its request ID; the other sees its lease', async () => {
    const [order] = await newOrders(1);
    const steps = new StepsRepository(pool);
    const taken = await Promise.all(['w/a', 'w/b'].map((owner) => steps.take(order!.id, 1, owner, 30_000)));
    expect(taken.map((t) => (t && t !== 'held' ? t.leased : t)).sort()).toEqual([false, true]);
    const winner = taken.find((t) => t && t !== 'held' && t.leased) as { order: { leaseOwner: string } };
    const loser = taken.find((t) => t && t !== 'held' && !t.leased) as { order: { leaseOwner: string } };
    expect(loser.order.leaseOwner).toBe(winner.order.leaseOwner);
    expect(await attempts([order!.id])).toEqual([{ order_id: order!.id, state: 'sent', call_count: 1 }]);
  });

  it("a take its check holds back is answered 'held' and left as it was; the others of its turn are taken", async () => {
    const orders = await newOrders(4);
    const steps = new StepsRepository(pool);
    const taken = await Promise.all(orders.map((o, i) => steps.take(o.id, 1, `w/${i}`, 30_000, i === 2 ? () => false : i === 3 ? () => Promise.resolve(true) : () => true)));
    expect(taken.map((t) => (t && t !== 'held' ? t.leased : t))).toEqual([true, true, 'held', true]);
    const states = new Map((await attempts(orders.map((o) => o.id))).map((a) => [a.order_id, [a.state, a.call_count]]));
    expect(orders.map((o) => states.get(o.id))).toEqual([['sent', 1], ['sent', 1], ['created', 0], ['sent', 1]]);
    const { rows } = await admin.query('SELECT lease_owner FROM orders WHERE id = $1', [orders[2]!.id]);
    expect(rows[0].lease_owner).toBeNull();
  });

  it('a take whose check fails (at once, or later) gets that error alone; the others of its turn are taken, each once', async () => {
    const orders = await newOrders(4);
    const steps = new StepsRepository(pool);
    const checks = [
      () => true,
      () => {
        throw new Error('check failed at once');
      },
      () => Promise.reject(new Error('check failed later')),
      () => Promise.resolve(true),
    ];
    const taken = await Promise.allSettled(orders.map((o, i) => steps.take(o.id, 1, `w/${i}`, 30_000, checks[i])));
    expect(taken.map((t) => (t.status === 'rejected' ? (t.reason as Error).message : t.value && t.value !== 'held' ? t.value.leased : t.value))).toEqual([
      true,
      'check failed at once',
      'check failed later',
      true,
    ]);
    const states = new Map((await attempts(orders.map((o) => o.id))).map((a) => [a.order_id, [a.state, a.call_count]]));
    expect(orders.map((o) => states.get(o.id))).toEqual([['sent', 1], ['created', 0], ['created', 0], ['sent', 1]]);
  });

  it('a take the database refuses fails alone: its turn is run again take by take, and every other order is leased once', async () => {
    const orders = await newOrders(5);
    await admin.query(`INSERT INTO test_poison VALUES ('take', $1)`, [orders[1]!.id]);
    const steps = new StepsRepository(pool);
    const taken = await Promise.allSettled(orders.map((o, i) => steps.take(o.id, 1, `w/${i}`, 30_000)));
    expect(taken.map((t) => (t.status === 'rejected' ? (t.reason as Error).message : t.value && t.value !== 'held' ? t.value.leased : t.value))).toEqual([
      true,
      'test: the database refuses this step',
      true,
      true,
      true,
    ]);
    // Refused in the statement of its turn, then alone: the others were retried alone too, and counted once.
    expect(await refusals()).toBe(2);
    const states = new Map((await attempts(orders.map((o) => o.id))).map((a) => [a.order_id, [a.state, a.call_count]]));
    expect(orders.map((o) => states.get(o.id))).toEqual([['sent', 1], ['created', 0], ['sent', 1], ['sent', 1], ['sent', 1]]);
  });

  it('the card stores of one turn are one commit, and each card is stored once with its own role: the order\'s, a re-run\'s (known), a surplus', async () => {
    const orders = await newOrders(3);
    const steps = new StepsRepository(pool);
    await Promise.all(orders.map((o) => steps.take(o.id, 1, 'w/1', 30_000)));
    const transitions = new TransitionsRepository(pool);
    // The third order has its card already: a second one is a surplus.
    const first = card(orders[2]!.requestId);
    await transitions.storeCard(orders[2]!.id, first, null, { state: 'succeeded' }, 'w/1');
    const a = card(orders[0]!.requestId);
    const stores = [
      [orders[0]!.id, a],
      [orders[0]!.id, { ...a, id: randomUUID() }],
      [orders[1]!.id, card(orders[1]!.requestId)],
      [orders[2]!.id, card(orders[2]!.requestId)],
    ] as const;
    const stored = await Promise.all(stores.map(([orderId, c]) => transitions.storeCard(orderId, c, null, { state: 'succeeded' }, 'w/1')));
    expect(stored.map((s) => [s?.role, s?.status])).toEqual([
      ['order', 'completed'],
      ['known', 'completed'],
      ['order', 'completed'],
      ['surplus', 'completed'],
    ]);
    const { rows } = await admin.query<{ partner_card_id: string; role: string }>('SELECT partner_card_id, role FROM cards WHERE order_id = ANY($1::uuid[])', [orders.map((o) => o.id)]);
    expect(rows.map((r) => `${r.partner_card_id} ${r.role}`).sort()).toEqual(
      [`${a.partnerCardId} order`, `${stores[2][1].partnerCardId} order`, `${first.partnerCardId} order`, `${stores[3][1].partnerCardId} surplus`].sort(),
    );
    const batched = [stores[0][1].partnerCardId, stores[2][1].partnerCardId, stores[3][1].partnerCardId];
    expect(new Set((await admin.query<{ x: string }>('SELECT xmin::text AS x FROM cards WHERE partner_card_id = ANY($1)', [batched])).rows.map((r) => r.x)).size).toBe(1);
  });

  it('a renewal of leases locks its orders in the order of their ids, as a shared statement does: it waits behind one that holds the first, and neither fails', async () => {
    const [low, high] = (await newOrders(2)).sort((a, b) => (a.id < b.id ? -1 : 1));
    const steps = new StepsRepository(pool);
    await Promise.all([low!, high!].map((o) => steps.take(o.id, 1, 'w/1', 30_000)));
    // A shared statement's transaction (orders by id): it has written the lower order and will write the higher next.
    const batch = await pool.connect();
    const keeper = new PgPool({ connectionString: db.url, max: 1, options: '-c enable_seqscan=off -c enable_hashjoin=off -c enable_mergejoin=off' });
    try {
      await batch.query('BEGIN');
      await batch.query(`SET LOCAL deadlock_timeout = '100ms'`);
      await batch.query('UPDATE orders SET updated_at = now() WHERE id = $1', [low!.id]);
      // The keeper's leases, in whatever order it holds them, on a connection planned as for a large table
      // (each order looked up by its key in the order given: what the old statement did there, highest first).
      const renewal = steps.renewLeases([high!, low!].map((o) => ({ orderId: o.id, owner: 'w/1' })), 60_000, keeper);
      renewal.catch(() => undefined);
      const waiting = async () => Number((await admin.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%SET lease_expires_at = now()%'`)).rows[0].n);
      for (let i = 0; i < 200 && (await waiting()) === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(await waiting()).toBe(1);
      // Had the renewal taken the higher order first, this would be a deadlock, and one of the two would fail.
      await batch.query('UPDATE orders SET updated_at = now() WHERE id = $1', [high!.id]);
      await batch.query('COMMIT');
      expect([...(await renewal)].sort()).toEqual([low!, high!].map((o) => `${o.id} w/1`).sort());
    } finally {
      await batch.query('ROLLBACK').catch(() => undefined);
      batch.release();
      await keeper.end();
    }
    const { rows } = await admin.query(`SELECT count(*) AS n FROM orders WHERE id = ANY($1::uuid[]) AND lease_expires_at > now() + interval '45 seconds'`, [[low!.id, high!.id]]);
    expect(Number(rows[0].n)).toBe(2);
  });

  it('a card store the database refuses fails alone: every other card of its turn is stored, once', async () => {
    const orders = await newOrders(4);
    const steps = new StepsRepository(pool);
    await Promise.all(orders.map((o) => steps.take(o.id, 1, 'w/1', 30_000)));
    const cards = orders.map((o) => card(o.requestId));
    await admin.query(`INSERT INTO test_poison VALUES ('store', $1)`, [cards[2]!.partnerCardId]);
    const transitions = new TransitionsRepository(pool);
    const stored = await Promise.allSettled(orders.map((o, i) => transitions.storeCard(o.id, cards[i]!, null, { state: 'succeeded' }, 'w/1')));
    expect(stored.map((s) => (s.status === 'rejected' ? (s.reason as Error).message : s.value?.role))).toEqual(['order', 'order', 'test: the database refuses this step', 'order']);
    expect(await refusals()).toBe(2);
    const { rows } = await admin.query<{ partner_card_id: string }>('SELECT partner_card_id FROM cards WHERE order_id = ANY($1::uuid[])', [orders.map((o) => o.id)]);
    expect(rows.map((r) => r.partner_card_id).sort()).toEqual([cards[0]!, cards[1]!, cards[3]!].map((c) => c.partnerCardId).sort());
  });
});
