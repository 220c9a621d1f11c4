import { Inject, Injectable } from '@nestjs/common';
import type { Pool, PoolClient } from 'pg';
import { PG_POOL, TurnBatch, allOrEach, preparesStatements, withTransaction, type PullMode, type Queryable, type Waiter } from '@cardpull/db';
import { newRequestId, uuidv7 } from '../model/ids';
import { prepared, runStatement } from './prepared';
import { ORDER_RESULT, callOf, type ServerFunction } from './server-functions';
import { firstStep } from '../model/order-steps';
import { ORDER_COLUMNS, type OrderRow } from '../model/order.types';

export interface NewOrder {
  client: string;
  idempotencyKey: string;
  requestHash: string;
  mode: PullMode;
  giftCardCode: string;
  amount: number;
  metadata: unknown;
  /** Where the order's terminal events are posted (its own URL or its client's default), or null. */
  callbackUrl?: string | null;
  /** Whether the API key creating the order has cards:read (its callbacks may then carry the card's secrets). */
  callbackSecrets: boolean;
  /** The client's daily spend limit (SPEND_LIMITS), in minor units of cost: the order is recorded only under it. */
  dailyLimit?: number | null;
  /** The intake request's W3C traceparent (tracing on only), kept with the order: its jobs re-created later go on in its trace. */
  traceParent?: string | null;
  /**
   * Its price, fixed now (issue 24): the gift card's discount in force (ppm of the face value), the card's cost
   * at it (minor units) and the catalog snapshot it was accepted against. The order's "accepted" movement
   * (float to reserved, at this cost) is written by the intake statement itself (a trigger). Absent: the order
   * stays outside the ledger.
   */
  price?: { discountPpm: number; cost: number; catalogSnapshot: string } | null;
}

export type CreateResult =
  | { kind: 'created'; order: OrderRow; requestId: string }
  | { kind: 'replay'; order: OrderRow }
  | { kind: 'conflict'; order: OrderRow };


/** An order over its client's daily spend limit (SPEND_LIMITS): nothing was recorded. */
export class SpendLimitExceeded extends Error {
  constructor(
    readonly spentToday: number,
    readonly limit: number,
    /** What this order would reserve (its cost). */
    readonly cost: number,
  ) {
    super(`the client's orders of today (UTC) reserved ${spentToday} of its limit ${limit}`);
  }
}

/** At most this many orders in one intake statement (a batch is flushed earlier at the end of the event-loop turn). */
const MAX_INTAKE_BATCH = 64;
/**
 * The connections of the pool that intake statements leave free, for reads and replays: at most the pool's
 * size less these run at a time (at least one), and the orders that arrive while they run go in the next one
 * (group commit, see TurnBatch). Most of a statement's time is its commit's wait for the WAL flush: with 4 at
 * a time (before 2026-11-29), an order arriving while four waited for theirs waited for a slot and then for
 * a flush of its own; with 8 (a pool of 10) the paced p50 went from about 13 to 7.6 ms at 1,250/s, the same
 * CPU per order (docs/BENCHMARKS.md).
 */
const CONNECTIONS_LEFT_FREE = 2;

/** How many intake statements may run at once on `pool` (see CONNECTIONS_LEFT_FREE). */
export function intakesInFlight(pool: Pick<Pool, 'options'>): number {
  return Math.max(1, (pool.options.max ?? 10) - CONNECTIONS_LEFT_FREE);
}

/**
 * The intake statement: every order of the batch, its first attempt with its partner request ID, and its
 * "created" event, in one statement (one transaction). An order whose key exists already is skipped
 * (ON CONFLICT DO NOTHING, also between two orders of one batch) and not returned.
 */
const INTAKE_SQL = `WITH input AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, client text, idempotency_key text, request_hash text,
      mode "PullMode", gift_card_code text, amount int, metadata jsonb, next_step "OrderStep", request_id text, actor text, callback_url text, callback_secrets boolean, trace_parent text,
      discount_ppm int, cost int, catalog_snapshot text)
  ), ins AS (
    INSERT INTO orders (id, client, idempotency_key, request_hash, status, mode, gift_card_code, amount, metadata,
                        next_step, next_step_at, step_seq, callback_url, callback_secrets, trace_parent, created_at, updated_at,
                        discount_ppm, cost, catalog_snapshot)
    SELECT id, client, idempotency_key, request_hash, 'pending', mode, gift_card_code, amount, metadata, next_step, now(), 1, callback_url, callback_secrets, trace_parent, now(), now(),
           discount_ppm, cost, catalog_snapshot
    FROM input
    ON CONFLICT (client, idempotency_key) DO NOTHING
    RETURNING *
  ), att AS (
    INSERT INTO attempts (request_id, order_id, seq, kind, state, created_at, updated_at)
    SELECT i.request_id, ins.id, 1, ins.mode, 'created', now(), now() FROM ins JOIN input i ON i.id = ins.id
  ), ev AS (
    INSERT INTO order_events (order_id, type, to_status, request_id, actor, detail)
    SELECT ins.id, 'created', 'pending', i.request_id, i.actor, jsonb_build_object('mode', ins.mode) FROM ins JOIN input i ON i.id = ins.id
  )
  SELECT ${ORDER_COLUMNS} FROM ins o`;

/** INTAKE_SQL as a server-side function (server-functions.ts): ($1 the batch as JSON). */
export const INTAKE_FN: ServerFunction = { name: 'cardpull_intake', args: ['jsonb'], returns: ORDER_RESULT, body: INTAKE_SQL };

interface IntakeItem extends Waiter<OrderRow | null> {
  id: string;
  requestId: string;
  input: NewOrder;
}

/**
 * The order's creation: the intake is one SQL statement: the
 * order, its first attempt with its partner request ID, and the "created" event commit together
 * (invariant 1: the request ID is in Postgres before any job can call the partner with it).
 *
 * Concurrent creations are batched: the orders that arrive in one turn of the event loop go to Postgres in
 * one statement (one round trip, one commit), which is what limited the intake on a small machine
 * (docs/BENCHMARKS.md). Each order's own commit still precedes its job. A batch that fails is retried order
 * by order, so one bad order never fails the others.
 */
@Injectable()
export class IntakeRepository {
  /** The orders that arrived in this turn of the event loop go together at its end (or at once when the batch is full). */
  private readonly intake: TurnBatch<IntakeItem>;

  /** The intake statement through its server-side function (behind a transaction pooler: see server-functions.ts). */
  private readonly viaFunctions: boolean;

  constructor(@Inject(PG_POOL) private readonly pool: Pool) {
    this.viaFunctions = !preparesStatements(pool);
    this.intake = new TurnBatch<IntakeItem>(MAX_INTAKE_BATCH, (batch) => this.insertEach(batch), intakesInFlight(pool));
  }

  async create(input: NewOrder): Promise<CreateResult> {
    if (input.dailyLimit != null) return this.createUnderLimit(input, input.dailyLimit);
    const id = uuidv7();
    const requestId = newRequestId();
    const row = await new Promise<OrderRow | null>((resolve, reject) => this.intake.push({ id, requestId, input, resolve, reject }));
    if (row) return { kind: 'created', order: row, requestId };
    const existing = await this.findByKey(input.client, input.idempotencyKey);
    if (!existing) throw new Error('order vanished between insert conflict and read'); // deletes do not happen
    return existing.requestHash === input.requestHash ? { kind: 'replay', order: existing } : { kind: 'conflict', order: existing };
  }

  /** One statement for the batch; if it fails, each order alone, so one bad order never fails the others. */
  private insertEach(batch: IntakeItem[]): Promise<void> {
    const rowOf = (rows: Map<string, OrderRow>, item: IntakeItem) => rows.get(item.id) ?? null;
    return allOrEach(
      batch,
      async (items) => {
        const rows = await this.insert(items);
        return items.map((item) => rowOf(rows, item));
      },
      async (item) => rowOf(await this.insert([item]), item),
    );
  }

  /**
   * The spend guard: the client's orders are serialised by a transaction-scoped advisory lock (it works
   * through a transaction pooler), then what the client's orders of the day (UTC) reserved in the ledger is
   * read, checked and, with this order, raised: its "accepted" movement is written by the intake statement
   * in this same transaction (a trigger), so the next order of the client, waiting on the lock, sees it. Every
   * accepted order counts at its cost, whatever its outcome; a replay spends nothing. Only clients with a
   * limit pay for this (one transaction per order instead of the batched statement).
   */
  private createUnderLimit(input: NewOrder, limit: number): Promise<CreateResult> {
    return withTransaction(this.pool, async (tx) => {
      await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('cardpull:spend:' || $1, 0))`, [input.client]);
      const existing = await this.findByKey(input.client, input.idempotencyKey, tx);
      if (existing) return existing.requestHash === input.requestHash ? { kind: 'replay', order: existing } : { kind: 'conflict', order: existing };
      const { rows: spend } = await tx.query<{ total: string }>(
        `SELECT coalesce(sum(e.amount), 0) AS total FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
          WHERE t.kind = 'accepted' AND t.client = $1 AND t.created_at >= (now() AT TIME ZONE 'UTC')::date::timestamp AT TIME ZONE 'UTC'
            AND e.account = 'reserved'`,
        [input.client],
      );
      const spentToday = Number(spend[0]!.total);
      const cost = input.price?.cost ?? input.amount;
      if (spentToday + cost > limit) throw new SpendLimitExceeded(spentToday, limit, cost);
      const id = uuidv7();
      const requestId = newRequestId();
      const rows = await this.insert([{ id, requestId, input }], tx);
      return { kind: 'created', order: rows.get(id)!, requestId };
    });
  }

  private async insert(items: Pick<IntakeItem, 'id' | 'requestId' | 'input'>[], db: Queryable = this.pool): Promise<Map<string, OrderRow>> {
    const input = items.map(({ id, requestId, input: o }) => ({
      id,
      client: o.client,
      idempotency_key: o.idempotencyKey,
      request_hash: o.requestHash,
      mode: o.mode,
      gift_card_code: o.giftCardCode,
      amount: o.amount,
      metadata: o.metadata ?? null,
      next_step: firstStep(o.mode),
      request_id: requestId,
      actor: `api:${o.client}`,
      callback_url: o.callbackUrl ?? null,
      callback_secrets: o.callbackSecrets,
      trace_parent: o.traceParent ?? null,
      discount_ppm: o.price?.discountPpm ?? null,
      cost: o.price?.cost ?? null,
      catalog_snapshot: o.price?.catalogSnapshot ?? null,
    }));
    const values = [JSON.stringify(input)];
    const { rows } = await runStatement<OrderRow>(db, this.viaFunctions ? callOf(INTAKE_FN, values) : prepared(INTAKE_SQL, values));
    return new Map(rows.map((r) => [r.id, r]));
  }

  /** The client's order under this Idempotency-Key, or null (a replay, or a key re-used with another body). */
  async findByKey(client: string, idempotencyKey: string, db: Queryable = this.pool): Promise<OrderRow | null> {
    const { rows } = await db.query<OrderRow>(
      `SELECT ${ORDER_COLUMNS} FROM orders o WHERE o.client = $1 AND o.idempotency_key = $2`,
      [client, idempotencyKey],
    );
    return rows[0] ?? null;
  }

}
