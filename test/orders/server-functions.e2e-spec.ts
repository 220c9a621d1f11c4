import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { createPgPool } from '@cardpull/db';
import { createTestDatabase, testPool, type TestDatabase } from '@cardpull/testing';
import { IntakeRepository, StepsRepository, TransitionsRepository, requestHash, type StoredCard } from '@cardpull/orders';
import { HOT_FUNCTIONS, hotFunctionsMigration } from '../../libs/orders/src/write/hot-functions';
import { functionSource } from '../../libs/orders/src/write/server-functions';

/**
 * Issue 22: behind a transaction pooler (DATABASE_PREPARED_STATEMENTS=false) the hot statements go through
 * server-side functions whose plans Postgres keeps per connection (libs/orders/src/write/server-functions.ts).
 * The functions are the statements themselves: the database's copy is checked against the repositories'
 * text, and both ways give the same answers and leave the same rows.
 */
describe('the hot statements as server-side functions (DATABASE_PREPARED_STATEMENTS=false)', () => {
  let db: TestDatabase;
  let admin: Pool;
  beforeAll(async () => {
    db = await createTestDatabase();
    admin = testPool(db.url, 2);
  });
  afterAll(async () => {
    await admin?.end();
    await db?.drop();
  });

  it("each function in the database (from the migration) holds its statement as the repository has it: no drift", async () => {
    const held = new Map<string, string>();
    const { rows } = await admin.query<{ name: string; src: string }>('SELECT proname AS name, prosrc AS src FROM pg_proc WHERE proname = ANY($1)', [HOT_FUNCTIONS.map((f) => f.name)]);
    for (const r of rows) held.set(r.name, r.src);
    const drifted = HOT_FUNCTIONS.filter((f) => held.get(f.name) !== functionSource(f)).map((f) => f.name);
    // A statement changed: add a migration (CREATE OR REPLACE) with hotFunctionsMigration()'s output (libs/orders/src/write/hot-functions.ts).
    expect({ drifted, migration: drifted.length ? hotFunctionsMigration() : '' }).toEqual({ drifted: [], migration: '' });
  });

  /** One order's life through the repositories of `pool`, as a transcript without ids and times. */
  async function life(pool: Pool, tag: string) {
    const orders = new IntakeRepository(pool);
    const steps = new StepsRepository(pool);
    const transitions = new TransitionsRepository(pool);
    const body = { gift_card_code: 'FAST-FREE', amount: 1234, mode: 'sync' as const };
    const key = `fn-${tag}-${randomUUID()}`;
    const input = { client: 'shop', idempotencyKey: key, requestHash: requestHash(body), mode: body.mode, giftCardCode: body.gift_card_code, amount: body.amount, metadata: { cart: 'c-1' }, callbackUrl: 'https://shop.example/hook', callbackSecrets: true };
    const created = await orders.create(input);
    const replay = await orders.create(input);
    const conflict = await orders.create({ ...input, requestHash: 'other' });
    if (created.kind !== 'created') throw new Error('expected a new order');
    const id = created.order.id;
    const early = await steps.take(id, 2, 'w/1', 30_000);
    const taken = await steps.take(id, 1, 'w/1', 30_000);
    const again = await steps.take(id, 1, 'w/2', 30_000);
    const card = (partnerCardId: string, amount = 1234): StoredCard => ({
      id: randomUUID(),
      requestId: created.requestId,
      partnerCardId,
      keyId: 'k1',
      codeEnc: Buffer.from('sealed'),
      pinEnc: null,
      expireAt: new Date('2030-01-01T00:00:00Z'),
      amount,
      giftCardCode: 'FAST-FREE',
      pdfEnc: null,
    });
    const first = `${tag}-card-1`;
    await pool.query("UPDATE attempts SET error_code = 'timeout', not_found_since = now() WHERE request_id = $1", [created.requestId]);
    const stored = [
      await transitions.storeCard(id, card(first), null, { state: 'succeeded' }, 'w'),
      await transitions.storeCard(id, card(first), null, { state: 'succeeded' }, 'w'),
      await transitions.storeCard(id, card(`${tag}-card-2`), null, { state: 'sent', partnerStatus: 'pending' }, 'w'),
      await transitions.storeCard(id, card(`${tag}-card-3`, 99), 'amount 99 <> 1234', { state: 'succeeded', partnerStatus: 'issued' }, 'w'),
      await transitions.storeCard(randomUUID(), card(`${tag}-card-4`), null, { state: 'succeeded' }, 'w'),
    ];
    const rows = await admin.query(
      `SELECT o.status, o.step_seq, o.error_code, o.lease_owner, o.metadata, (o.card_id IS NOT NULL) AS has_card, a.state, a.partner_status, a.error_code AS a_error, (a.not_found_since IS NULL) AS found, a.call_count,
              (SELECT array_agg(c.role || ':' || coalesce(c.mismatch, '') ORDER BY c.partner_card_id) FROM cards c WHERE c.order_id = o.id) AS cards,
              (SELECT array_agg(DISTINCT to_char(c.expire_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS')) FROM cards c WHERE c.order_id = o.id) AS expire_at,
              (SELECT array_agg(e.type ORDER BY e.at, e.id NULLS LAST) FROM order_timeline e WHERE e.order_id = o.id) AS events,
              (SELECT array_agg(cb.type ORDER BY cb.created_at) FROM callback_events cb WHERE cb.order_id = o.id) AS callbacks
       FROM orders o JOIN attempts a ON a.order_id = o.id WHERE o.id = $1`,
      [id],
    );
    const plain = (x: unknown) => JSON.parse(JSON.stringify(x, (k, v: unknown) => (['id', 'orderId', 'requestId', 'idempotencyKey', 'createdAt', 'updatedAt', 'nextStepAt', 'leaseExpiresAt', 'firstSentAt', 'lastSentAt', 'callbackEventIds', 'clock', 'sentAt'].includes(k) ? typeof v : v)));
    return plain({
      created: { kind: created.kind, order: created.order },
      replay: replay.kind,
      conflict: conflict.kind,
      early,
      taken: taken && taken !== 'held' ? { leased: taken.leased, previousState: taken.previousState, previousOwner: taken.previousOwner, order: taken.order, attempt: taken.attempt, dbNow: taken.clock instanceof Object } : taken,
      again: again && again !== 'held' ? { leased: again.leased, status: again.order.status } : again,
      stored: stored.map((s) => s && { role: s.role, status: s.status, callbacks: s.callbackEventIds.length }),
      rows: rows.rows,
    });
  }

  /** A pool of each kind, recording which functions each one called. */
  const pools = () => {
    const named = createPgPool(db.url, 2, { preparedStatements: true });
    const viaFunctions = createPgPool(db.url, 2, { preparedStatements: false });
    const calls = { named: new Set<string>(), viaFunctions: new Set<string>() };
    const record = (pool: Pool, into: Set<string>) =>
      pool.on('connect', (client) => {
        const query = client.query.bind(client) as (...a: unknown[]) => unknown;
        (client as unknown as { query: unknown }).query = (config: unknown, ...rest: unknown[]) => {
          const text = typeof config === 'string' ? config : (config as { text: string }).text;
          const fn = /FROM (cardpull_\w+)\(/.exec(text)?.[1];
          if (fn) into.add(fn);
          return query(config, ...rest);
        };
      });
    record(named, calls.named);
    record(viaFunctions, calls.viaFunctions);
    return { named, viaFunctions, calls, end: () => Promise.all([named.end(), viaFunctions.end()]) };
  };

  it('an order taken, given its card, a repeat, a surplus and a mismatch: the same answers and rows through the functions as through the statements', async () => {
    const { named, viaFunctions, calls, end } = pools();
    try {
      const withStatements = await life(named, 'stmt');
      const withFunctions = await life(viaFunctions, 'fn');
      expect(withFunctions).toEqual(withStatements);
      // What the life holds (so that equal does not mean empty).
      expect(withFunctions).toMatchObject({
        created: { kind: 'created', order: { status: 'pending', stepSeq: 1, nextStep: 'sync_call', metadata: { cart: 'c-1' } } },
        replay: 'replay',
        conflict: 'conflict',
        early: { leased: false },
        // The take changes no indexed column (its update is HOT): the order stays pending until an answer.
        taken: { leased: true, previousState: 'created', previousOwner: null, order: { status: 'pending', leaseOwner: 'w/1' }, attempt: { state: 'sent', callCount: 1 } },
        again: { leased: false, status: 'pending' },
        stored: [{ role: 'order', status: 'completed', callbacks: 1 }, { role: 'known' }, { role: 'surplus', status: 'completed' }, { role: 'surplus' }, null],
        // expire_at goes as ISO text (UTC): the instant the partner gave, whatever the session's time zone.
        rows: [{ status: 'completed', has_card: true, state: 'succeeded', partner_status: 'issued', a_error: null, found: true, events: ['created', 'completed', 'surplus_card', 'surplus_card'], expire_at: ['2030-01-01T00:00:00.000'] }],
      });
      // The functions were called by one pool only.
      expect({ named: [...calls.named], viaFunctions: [...calls.viaFunctions].sort() }).toEqual({ named: [], viaFunctions: ['cardpull_intake', 'cardpull_store_card', 'cardpull_take_step'] });
    } finally {
      await end();
    }
  });

  /** Every shape of transition() on one async order of `pool`, as a transcript without ids and times. */
  async function moves(pool: Pool, tag: string) {
    const orders = new IntakeRepository(pool);
    const steps = new StepsRepository(pool);
    const transitions = new TransitionsRepository(pool);
    const body = { gift_card_code: 'FAST-FREE', amount: 500, mode: 'async' as const };
    const created = await orders.create({ client: 'shop', idempotencyKey: `mv-${tag}-${randomUUID()}`, requestHash: requestHash(body), mode: 'async', giftCardCode: 'FAST-FREE', amount: 500, metadata: null, callbackUrl: 'https://shop.example/hook', callbackSecrets: false });
    if (created.kind !== 'created') throw new Error('expected a new order');
    const id = created.order.id;
    const first = created.requestId;
    await steps.take(id, 1, 'w/1', 30_000);
    const seq = async () => Number((await admin.query<{ s: number }>('SELECT step_seq AS s FROM orders WHERE id = $1', [id])).rows[0]!.s);
    const results = [];
    // A poll scheduled, the waiting deadline started, the attempt's outcome unknown and not found yet; no
    // status named: the order, pending and sent, becomes in_progress (KEPT_STATUS_SQL).
    results.push(await transitions.transition({ orderId: id, stepSeq: 1, actor: 'w', next: { step: 'async_poll', delayMs: 1500 }, waitDeadline: { startMs: 60_000 }, attempt: { requestId: first, state: 'sent', partnerStatus: 'pending', unknownSince: 'start', notFoundSince: 'start' }, event: { type: 'poll_scheduled', detail: { rule: 'r1' } } }));
    // The same job again: the order moved on.
    results.push(await transitions.transition({ orderId: id, stepSeq: 1, actor: 'w', next: null, event: { type: 'never' } }));
    // An operator's action while a lease is in force: not applied; once it ended: applied, an error set.
    await admin.query("UPDATE orders SET lease_owner = 'w/9', lease_expires_at = now() + interval '1 minute' WHERE id = $1", [id]);
    const operator = { orderId: id, actor: 'operator:alice', status: 'needs_attention' as const, next: null, whenNotLeased: true as const, error: { code: 'held', message: 'held by alice' }, event: { type: 'held', requestId: 'explicit-id' } };
    results.push(await transitions.transition({ ...operator, stepSeq: await seq() }));
    await admin.query('UPDATE orders SET lease_owner = NULL, lease_expires_at = NULL WHERE id = $1', [id]);
    results.push(await transitions.transition({ ...operator, stepSeq: await seq() }));
    // A new request ID while the old one is not dead: refused (invariant 2); killing it in the same statement: minted.
    results.push(await transitions.transition({ orderId: id, stepSeq: await seq(), actor: 'w', next: { step: 'async_create', delayMs: 0 }, newAttempt: { kind: 'async', replaces: first }, event: { type: 'new_id' } }));
    const minted = await transitions.transition({ orderId: id, stepSeq: await seq(), actor: 'w', status: 'pending', error: null, next: { step: 'async_create', delayMs: 0 }, attempt: { requestId: first, state: 'failed_definitive', error: { code: 'rejected', message: 'no' }, notFoundSince: 'clear', declaredDeadBy: 'operator:alice' }, newAttempt: { kind: 'async', replaces: first }, event: { type: 'new_id', detail: { rule: 'r2' } } });
    results.push(minted);
    // Unknown since a given time (kept when one runs), then restarted; the error cleared.
    results.push(await transitions.transition({ orderId: id, stepSeq: await seq(), actor: 'w', next: { step: 'async_poll', delayMs: 10 }, attempt: { requestId: minted.newRequestId!, unknownSince: new Date('2026-01-01T00:00:00Z'), error: null, partnerStatus: null } }));
    results.push(await transitions.transition({ orderId: id, stepSeq: await seq(), actor: 'w', next: { step: 'async_poll', delayMs: 10 }, attempt: { requestId: minted.newRequestId!, unknownSince: 'restart' } }));
    // Failed for good: completed_at, the callback.
    results.push(await transitions.transition({ orderId: id, stepSeq: await seq(), actor: 'w', status: 'failed', next: null, error: { code: 'out_of_stock', message: 'gone' }, event: { type: 'failed' } }));
    const label = (v: unknown) => (v === first ? 'first' : v === minted.newRequestId ? 'minted' : v);
    const order = await admin.query('SELECT status, step_seq, next_step, (next_step_at IS NULL) AS no_next_at, error_code, error_message, (completed_at IS NULL) AS open, (wait_deadline IS NULL) AS no_deadline, lease_owner FROM orders WHERE id = $1', [id]);
    const attempts = await admin.query(
      `SELECT request_id, seq, kind, state, partner_status, error_code, error_message, unknown_since = '2026-01-01T00:00:00Z' AS unknown_given, (unknown_since IS NULL) AS known, (not_found_since IS NULL) AS found, declared_dead_by, (declared_dead_at IS NULL) AS alive
       FROM attempts WHERE order_id = $1 ORDER BY seq`,
      [id],
    );
    const events = await admin.query('SELECT type, from_status, to_status, request_id, actor, detail FROM order_timeline WHERE order_id = $1 ORDER BY at, id NULLS LAST', [id]);
    const callbacks = await admin.query('SELECT type, snapshot FROM callback_events WHERE order_id = $1 ORDER BY created_at', [id]);
    return JSON.parse(
      JSON.stringify(
        {
          results: results.map((r) => ({ ...r, callbackEventIds: r.callbackEventIds.length, newRequestId: typeof r.newRequestId })),
          order: order.rows,
          attempts: attempts.rows,
          events: events.rows,
          callbacks: callbacks.rows,
        },
        (k, v: unknown) => (k === 'request_id' || k === 'previous_request_id' ? label(v) : v),
      ),
    );
  }

  it('every shape of transition (a poll, a stale job, an operator while leased and after, a new request ID refused and minted, unknown-since given and restarted, failed): the same through the function as through the statements', async () => {
    const { named, viaFunctions, calls, end } = pools();
    try {
      const withStatements = await moves(named, 'stmt');
      const withFunctions = await moves(viaFunctions, 'fn');
      expect(withFunctions).toEqual(withStatements);
      expect(withFunctions.results.map((r: { applied: boolean }) => r.applied)).toEqual([true, false, false, true, false, true, true, true, true]);
      expect(withFunctions.order).toEqual([{ status: 'failed', step_seq: 7, next_step: null, no_next_at: true, error_code: 'out_of_stock', error_message: 'gone', open: false, no_deadline: false, lease_owner: null }]);
      expect(withFunctions.attempts).toEqual([
        expect.objectContaining({ request_id: 'first', seq: 1, state: 'failed_definitive', partner_status: 'pending', error_code: 'rejected', known: false, found: true, declared_dead_by: 'operator:alice', alive: false }),
        expect.objectContaining({ request_id: 'minted', seq: 2, state: 'created', partner_status: null, error_code: null, unknown_given: false, known: false }),
      ]);
      expect(withFunctions.events.map((e: { type: string }) => e.type)).toEqual(['created', 'poll_scheduled', 'held', 'new_id', 'failed']);
      expect(withFunctions.events[1]).toEqual(expect.objectContaining({ from_status: 'pending', to_status: 'in_progress' }));
      expect(withFunctions.events[3]).toEqual(expect.objectContaining({ request_id: 'minted', detail: { rule: 'r2', previous_request_id: 'first' } }));
      expect(withFunctions.callbacks.map((c: { type: string }) => c.type)).toEqual(['order.needs_attention', 'order.failed']);
      expect([...calls.viaFunctions]).toContain('cardpull_transition');
      expect([...calls.named]).toEqual([]);
    } finally {
      await end();
    }
  });
});
