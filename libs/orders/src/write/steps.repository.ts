import { Inject, Injectable } from '@nestjs/common';
import type { Pool, PoolClient } from 'pg';
import { PG_POOL, TurnBatch, allOrEach, preparesStatements, type AttemptState, type PullMode, type Waiter } from '@cardpull/db';
import { DbClock } from './db-clock';
import { ATTEMPT_COLUMNS, ORDER_COLUMNS, STEP_ORDER_COLUMNS, type AttemptRow, type OrderRow, type ScheduledStep, type StepOrder } from '../model/order.types';
import { prepared, runStatement } from './prepared';
import { callOf, type ServerFunction } from './server-functions';
import { SEND_STEPS_SQL } from '../model/order-steps';
import { mayYieldCardSql, recheckIndexSql } from '../model/attempt-facts';
import { noteSets, type AttemptNote } from './attempt-note';
import { MAX_STEP_BATCH, byOrderId, stepStatementSlots } from './step-batch';

export interface CurrentStep<O extends StepOrder = OrderRow> {
  order: O;
  /** The order's latest attempt (the one whose request ID is in play). */
  attempt: AttemptRow;
  /** The database's clock as of the read (invariant: deadlines read by several processes use it). */
  clock: DbClock;
}

/** A step as take answers it: the order's columns a step reads (StepOrder), not the whole row. */
export interface TakenStep extends CurrentStep<StepOrder> {
  /** This run holds the lease of the order's sync_call / async_create step and may call the partner. */
  leased: boolean;
  /** The attempt's state before this lease: 'sent' means an earlier call's outcome was never recorded. */
  previousState: AttemptState;
  /** Who held the order's lease before this take (the worker run whose call was interrupted, when previousState is 'sent'). */
  previousOwner: string | null;
  /**
   * When the statement that took the lease was sent, on this process's monotonic clock (performance.now()):
   * the lease ends no sooner than this plus its length, whatever the clocks of Postgres and this process say.
   */
  sentAt: number;
}

/** A lease this process holds and renews (LeaseKeeper): the order, and the owner that took it. */
export interface HeldLease {
  orderId: string;
  owner: string;
}

type Row = OrderRow & { attempt: Record<string, unknown>; dbNow: Date };
/**
 * What the take answers: one JSON column (node-postgres builds a result's fields and rows per query, which for
 * the twenty columns this used to answer cost the worker more than the statement's own round trip's parsing;
 * docs/BENCHMARKS.md), its times as JSON text (reviveStepOrder).
 */
type TakeRow = { step: (Record<keyof StepOrder, unknown> & { attempt: Record<string, unknown>; dbNow: string; leased: boolean; previousState: AttemptState; previousOwner: string | null }) | null };

const CURRENT_STEP_SQL = `SELECT ${ORDER_COLUMNS}, row_to_json(a_sel) AS attempt, now() AS "dbNow"
  FROM orders o
  JOIN LATERAL (SELECT ${ATTEMPT_COLUMNS} FROM attempts a WHERE a.order_id = o.id ORDER BY a.seq DESC LIMIT 1) a_sel ON true
  WHERE o.id = $1`;

/**
 * One statement for every step job (the jobs of one turn share a round trip: TAKE_BATCH_SQL): takes the
 * lease of a due sync_call / async_create step (counting the call on its attempt, so two workers never send
 * one request ID at once) and answers the order and its attempt as they are after that, whether leased or
 * not (a poll, a waiting check, a stale or early job).
 * Which step runs is decided from this row, never from the job's name.
 *
 * The lease changes no column an index reads (not the status, not `updated_at`: a pending order stays
 * pending until its first answer, see KEPT_STATUS_SQL in transitions.repository.ts): with the room
 * `fillfactor` leaves in each page of `orders`, the update is HOT, one small heap record and no index entry
 * (migrations 20261126160000_hot_take and 20261130170000_batched_steps; test/orders/hot-take.e2e-spec.ts).
 * When the order was sent is the attempt's (first_sent_at, last_sent_at); the lease's owner is who holds the
 * call, and `previousOwner` who held it before this take (named on the timeline when its call was
 * interrupted).
 */
const TAKE_STEP_SQL = `WITH prev_attempt AS (
    SELECT a.request_id, a.state FROM attempts a WHERE a.order_id = $1 ORDER BY a.seq DESC LIMIT 1
  ), prev_order AS (
    SELECT lease_owner FROM orders WHERE id = $1
  ), leased AS (
    UPDATE orders SET lease_owner = $3, lease_expires_at = now() + make_interval(secs => $4::float8 / 1000)
    WHERE id = $1 AND step_seq = $2 AND next_step IN (${SEND_STEPS_SQL})
      AND next_step_at <= now() + interval '1 second'
      AND (lease_expires_at IS NULL OR lease_expires_at < now() OR lease_owner = $3)
    RETURNING *
  ), sent AS (
    UPDATE attempts SET state = 'sent', call_count = call_count + 1, first_sent_at = COALESCE(first_sent_at, now()),
           last_sent_at = now(), updated_at = now()
    FROM prev_attempt p
    WHERE attempts.request_id = p.request_id AND p.state <> 'sent' AND EXISTS (SELECT 1 FROM leased)
    RETURNING attempts.*
  )
  SELECT row_to_json(taken) AS step FROM (
    SELECT ${STEP_ORDER_COLUMNS}, EXISTS (SELECT 1 FROM leased) AS leased, (SELECT state FROM prev_attempt) AS "previousState",
           (SELECT lease_owner FROM prev_order) AS "previousOwner", now() AS "dbNow",
           (SELECT row_to_json(x) FROM (SELECT ${ATTEMPT_COLUMNS}
              FROM (SELECT * FROM sent UNION ALL SELECT attempts.* FROM attempts, prev_attempt p
                    WHERE attempts.request_id = p.request_id AND NOT EXISTS (SELECT 1 FROM sent)) a) x) AS attempt
    FROM (SELECT * FROM leased UNION ALL SELECT * FROM orders WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM leased)) o) taken`;

/** TAKE_STEP_SQL as a server-side function (server-functions.ts): ($1 order, $2 step seq, $3 owner, $4 lease ms). */
export const TAKE_STEP_FN: ServerFunction = {
  name: 'cardpull_take_step',
  args: ['uuid', 'integer', 'text', 'double precision'],
  returns: [['step', 'json']],
  body: TAKE_STEP_SQL,
};

/**
 * The takes of several steps in one statement (one round trip, one commit): TAKE_STEP_SQL for each, through
 * its server-side function, in the order given (the orders' ids: byOrderId). Each function call is a
 * statement of its own inside (it sees what the calls before it wrote), so each order is taken exactly as a
 * take of its own would take it; they commit together. One row per take, numbered as given; `step` is null
 * for an order that does not exist.
 */
const TAKE_BATCH_SQL = `SELECT i.n, t.step
  FROM unnest($1::uuid[], $2::integer[], $3::text[], $4::float8[]) WITH ORDINALITY AS i(order_id, step_seq, owner, lease_ms, n)
  LEFT JOIN LATERAL ${TAKE_STEP_FN.name}(i.order_id, i.step_seq, i.owner, i.lease_ms) t ON true
  ORDER BY i.n`;

/** A take waiting for the statement of its turn (StepsRepository.take's arguments). */
interface TakeItem extends Waiter<TakenStep | null | 'held'> {
  orderId: string;
  stepSeq: number;
  owner: string;
  leaseMs: number;
  ready?: () => boolean | Promise<boolean>;
}

/**
 * The worker's reads and the writes that do not move an order: taking a step (with its lease), notes on an
 * attempt, the reconciler's lease. Each is one SQL statement (atomic; the takes of one turn share one). Moving an order is
 * TransitionsRepository's.
 */
@Injectable()
export class StepsRepository {
  /** The hot statements through their server-side functions (behind a transaction pooler: see server-functions.ts). */
  private readonly viaFunctions: boolean;

  /** The takes of this turn of the event loop, which go to Postgres together (take). */
  private readonly takes: TurnBatch<TakeItem>;

  constructor(@Inject(PG_POOL) private readonly pool: Pool) {
    this.viaFunctions = !preparesStatements(pool);
    this.takes = new TurnBatch<TakeItem>(MAX_STEP_BATCH, (batch) => this.takeEach(batch), stepStatementSlots(pool));
  }

  async current(orderId: string): Promise<CurrentStep | null> {
    const { rows } = await runStatement<Row>(this.pool, prepared(CURRENT_STEP_SQL, [orderId]));
    return rows[0] ? split(rows[0]) : null;
  }

  /**
   * The order's step as the job should see it; the lease is taken when it is a due call (see TAKE_STEP_SQL).
   * The takes of one turn of the event loop share one statement and its commit (TAKE_BATCH_SQL; at most
   * stepStatementSlots at a time, the takes that arrive meanwhile go in the next one); a statement that
   * fails is run again take by take, so one bad take never fails the others.
   *
   * `ready`: asked once a connection is at hand, right before the statement (which may record a call as
   * sent); false leaves everything as it was and answers 'held'. The wait for a connection happens before
   * it, so what it checks (the partner's pause) is as fresh as the call that follows.
   */
  take(orderId: string, stepSeq: number, owner: string, leaseMs: number, ready?: () => boolean | Promise<boolean>): Promise<TakenStep | null | 'held'> {
    return new Promise((resolve, reject) => this.takes.push({ orderId, stepSeq, owner, leaseMs, ready, resolve, reject }));
  }

  /** One statement for the takes of a turn; if it fails, each take alone (its own connection, its own check). */
  private takeEach(batch: TakeItem[]): Promise<void> {
    return allOrEach(batch, (items) => this.takeTogether(items), async (item) => (await this.takeTogether([item]))[0]!);
  }

  /**
   * The takes `items` on one connection, in one statement: each one's check once the connection is at hand,
   * then the statement for those that may go. What each take became, in their order ('held' when its check
   * held it back); a check or the statement that fails fails the whole call (nothing was taken).
   */
  private async takeTogether(items: TakeItem[]): Promise<(TakenStep | null | 'held')[]> {
    const client = await this.pool.connect();
    try {
      const checked = readyTakes(items);
      const ready = Array.isArray(checked) ? checked : await checked;
      const go = byOrderId(items.filter((_, i) => ready[i]));
      if (!go.length) return items.map(() => 'held');
      const sentAt = performance.now();
      const steps = await this.takeRows(client, go);
      const answers = new Map(go.map((item, i) => [item, taken(steps[i], sentAt)]));
      return items.map((item) => (answers.has(item) ? answers.get(item)! : 'held'));
    } finally {
      client.release();
    }
  }

  /** The rows of the takes `items` (in their order): one statement, which a single take keeps as it always was. */
  private async takeRows(client: PoolClient, items: TakeItem[]): Promise<(TakeRow['step'] | undefined)[]> {
    if (items.length === 1) {
      const { orderId, stepSeq, owner, leaseMs } = items[0]!;
      const values = [orderId, stepSeq, owner, leaseMs];
      const { rows } = await runStatement<TakeRow>(client, this.viaFunctions ? callOf(TAKE_STEP_FN, values) : prepared(TAKE_STEP_SQL, values));
      return [rows[0]?.step];
    }
    const values = [items.map((i) => i.orderId), items.map((i) => i.stepSeq), items.map((i) => i.owner), items.map((i) => i.leaseMs)];
    const { rows } = await runStatement<{ n: string; step: TakeRow['step'] }>(client, prepared(TAKE_BATCH_SQL, values));
    const byN = new Map(rows.map((r) => [Number(r.n), r.step]));
    return items.map((_, i) => byN.get(i + 1) ?? undefined);
  }

  /**
   * Renews the leases this process's calls hold, in one statement (LeaseKeeper): each for `leaseMs` more from
   * now, if its owner still holds it and it has not run out (a lease that ran out may have been taken over:
   * its call must stop). Answers the leases renewed, each as "<order id> <owner>". `via`: the keeper's own
   * connection, so a renewal never waits behind the steps' statements for a connection of the pool.
   *
   * The orders are locked in the order of their ids first, as the shared statements of takes and card stores
   * lock theirs (step-batch.ts, byOrderId): a renewal and such a statement that share two orders then wait
   * for each other instead of each holding one the other needs (a deadlock, which Postgres would break after
   * `deadlock_timeout` by failing one of them).
   */
  async renewLeases(leases: HeldLease[], leaseMs: number, via: Pool = this.pool): Promise<Set<string>> {
    if (!leases.length) return new Set();
    const { rows } = await via.query<{ id: string; owner: string }>(
      `WITH held AS (
         SELECT o.id, o.lease_owner AS owner FROM orders o JOIN unnest($1::uuid[], $2::text[]) AS h(id, owner) ON o.id = h.id
         WHERE o.lease_owner = h.owner AND o.lease_expires_at > now()
         ORDER BY o.id FOR NO KEY UPDATE OF o
       )
       UPDATE orders o SET lease_expires_at = now() + make_interval(secs => $3::float8 / 1000)
       FROM held
       WHERE o.id = held.id AND o.lease_owner = held.owner AND o.lease_expires_at > now()
       RETURNING o.id, o.lease_owner AS owner`,
      [leases.map((l) => l.orderId), leases.map((l) => l.owner), leaseMs],
    );
    return new Set(rows.map((r) => `${r.id} ${r.owner}`));
  }

  /**
   * Lease of an order that has no step of its own for the reconciler's re-send of one of its sync request
   * IDs (one sender per ID: the same lease the step runner and the operators' actions respect); its step
   * does not move unless the answer's own guarded transition moves it.
   */
  async leaseForReconcile(orderId: string, requestId: string, owner: string, leaseMs: number): Promise<CurrentStep | null> {
    const { rows } = await this.pool.query<Row>(
      `WITH o AS (
         UPDATE orders SET lease_owner = $3, lease_expires_at = now() + make_interval(secs => $4::float8 / 1000)
         WHERE id = $1 AND next_step IS NULL AND (lease_expires_at IS NULL OR lease_expires_at < now())
         RETURNING *
       ), a AS (
         -- updated_at is left alone: for an attempt declared dead it tells since when (see reconcileCandidates).
         UPDATE attempts SET call_count = call_count + 1, last_sent_at = now()
         WHERE request_id = $2 AND order_id = $1 AND EXISTS (SELECT 1 FROM o)
         RETURNING *
       )
       SELECT ${ORDER_COLUMNS}, (SELECT row_to_json(x) FROM (SELECT ${ATTEMPT_COLUMNS} FROM a) x) AS attempt, now() AS "dbNow"
       FROM o WHERE EXISTS (SELECT 1 FROM a)`,
      [orderId, requestId, owner, leaseMs],
    );
    return rows[0] ? split(rows[0]) : null;
  }

  /**
   * A page of the attempts the reconciler asks about, after `afterRequestId` (a cursor: each pass pages
   * through all of them, so asking about one never keeps it at the head of the line): the IDs that may still
   * yield a card (mayYieldCardSql) and that no step of their order asks about. An open ID (sent, unknown) is
   * its order's step's to ask while the order has one; an ID declared dead is asked (read, for a card) by
   * the reconciler alone, whatever its order does meanwhile. An ID never sent (created) has nothing to ask.
   */
  async reconcileCandidates(afterRequestId: string, limit: number, recheckMs: number): Promise<{ orderId: string; requestId: string; kind: PullMode; state: AttemptState }[]> {
    const { rows } = await this.pool.query<{ orderId: string; requestId: string; kind: PullMode; state: AttemptState }>(
      `SELECT a.order_id AS "orderId", a.request_id AS "requestId", a.kind, a.state
       FROM attempts a JOIN orders o ON o.id = a.order_id
       WHERE a.request_id > $1 AND ${recheckIndexSql('a')} AND a.state <> 'created' AND ${mayYieldCardSql('a', '$3')}
         AND (a.state = 'failed_definitive' OR o.next_step IS NULL)
       ORDER BY a.request_id LIMIT $2`,
      [afterRequestId, limit, recheckMs],
    );
    return rows;
  }

  /** The order of a request ID of ours, with that attempt (null when the ID is not ours). */
  async byRequestId(requestId: string): Promise<CurrentStep | null> {
    const { rows } = await this.pool.query<Row>(
      `SELECT ${ORDER_COLUMNS}, row_to_json(x) AS attempt, now() AS "dbNow"
       FROM (SELECT ${ATTEMPT_COLUMNS} FROM attempts a WHERE a.request_id = $1) x JOIN orders o ON o.id = x."orderId"`,
      [requestId],
    );
    return rows[0] ? split(rows[0]) : null;
  }

  /** An order and one of its attempts (not necessarily its latest), without a lease: for a read of a pull request. */
  async attemptOf(orderId: string, requestId: string): Promise<CurrentStep | null> {
    const { rows } = await this.pool.query<Row>(
      `SELECT ${ORDER_COLUMNS}, (SELECT row_to_json(x) FROM (SELECT ${ATTEMPT_COLUMNS} FROM attempts a WHERE a.request_id = $2 AND a.order_id = o.id) x) AS attempt, now() AS "dbNow"
       FROM orders o WHERE o.id = $1 AND EXISTS (SELECT 1 FROM attempts WHERE request_id = $2 AND order_id = $1)`,
      [orderId, requestId],
    );
    return rows[0] ? split(rows[0]) : null;
  }

  /**
   * Every order with a next step, and how long until that step is due by the database's clock (no worker's
   * clock decides it): what the sweeper makes sure has a job. `next_step_at IS NOT NULL` (the CHECK
   * orders_next_step_has_time makes it the same as a next step) reads the next_step_at index: the sweep
   * costs the open orders, not the table's size.
   */
  async pendingSteps(): Promise<ScheduledStep[]> {
    const { rows } = await this.pool.query<ScheduledStep>(
      `SELECT id AS "orderId", step_seq AS "stepSeq", next_step AS step,
              GREATEST(0, extract(epoch FROM next_step_at - now()) * 1000)::float8 AS "delayMs"
       FROM orders WHERE next_step_at IS NOT NULL`,
    );
    return rows;
  }

  /**
   * Of these steps read by pendingSteps, the ones still due as they were read (same step, still open), with
   * their order's trace (tracing on only, else null): a step that moved on since (its job finished, the
   * order completed) is not the sweeper's to re-create. One statement for the whole list.
   */
  async stillDue(steps: Pick<ScheduledStep, 'orderId' | 'stepSeq'>[]): Promise<Map<string, string | null>> {
    if (!steps.length) return new Map();
    const { rows } = await this.pool.query<{ id: string; trace: string | null }>(
      `SELECT o.id, o.trace_parent AS trace FROM orders o
       JOIN unnest($1::uuid[], $2::int[]) AS s(id, seq) ON o.id = s.id AND o.step_seq = s.seq
       WHERE o.next_step_at IS NOT NULL`,
      [steps.map((s) => s.orderId), steps.map((s) => s.stepSeq)],
    );
    return new Map(rows.map((r) => [r.id, r.trace]));
  }

  /**
   * The traces of these orders (the W3C traceparent of each intake, tracing on only; orders without one are
   * left out): a job re-created from the row goes on in its order's trace. Read only for the jobs to
   * re-create, not with every sweep's list of open orders.
   */
  async traceParents(orderIds: string[]): Promise<Map<string, string>> {
    if (!orderIds.length) return new Map();
    const { rows } = await this.pool.query<{ id: string; trace: string }>(
      'SELECT id, trace_parent AS trace FROM orders WHERE id = ANY($1::uuid[]) AND trace_parent IS NOT NULL',
      [orderIds],
    );
    return new Map(rows.map((r) => [r.id, r.trace]));
  }

  /** Ends a lease without moving the order (harmless when a transition ended it already). */
  async releaseLease(orderId: string, owner: string): Promise<void> {
    await this.pool.query(`UPDATE orders SET lease_owner = NULL, lease_expires_at = NULL WHERE id = $1 AND lease_owner = $2`, [orderId, owner]);
  }

  /** Records what a poll learned about an attempt without moving the order (the caller skips empty notes). */
  async note(requestId: string, note: AttemptNote): Promise<void> {
    const { sets, params } = noteSets(note, [requestId]);
    await runStatement(this.pool, prepared(`UPDATE attempts SET ${sets} WHERE request_id = $1`, params));
  }
}

function split<O extends StepOrder = OrderRow>(row: O & { attempt: Record<string, unknown>; dbNow: Date }): CurrentStep<O> {
  const { attempt, dbNow, ...order } = row;
  return { order: order as unknown as O, attempt: reviveAttempt(attempt), clock: new DbClock(dbNow) };
}

/**
 * Each take's check, once its connection is at hand: a check answered at once is not awaited (an await would
 * put the statement behind every callback already queued, with the connection held meanwhile).
 */
function readyTakes(items: TakeItem[]): boolean[] | Promise<boolean[]> {
  const checks = items.map((item) => item.ready?.() ?? true);
  return checks.every((c): c is boolean => typeof c === 'boolean') ? checks : Promise.all(checks);
}

/** A take's row as the step runner reads it: the order and its attempt revived, the lease's start on this process's clock. */
function taken(row: TakeRow['step'] | undefined, sentAt: number): TakenStep | null {
  if (!row) return null;
  // One pass over the row (each rest or spread of its twenty fields is a copy, per card).
  const { leased, previousState, previousOwner, attempt, dbNow, ...order } = row;
  return { order: reviveStepOrder(order), attempt: reviveAttempt(attempt), clock: new DbClock(date(dbNow)!), leased, previousState, previousOwner, sentAt };
}

/** A time as JSON has it (text, or null): a Date again. */
const date = (v: unknown) => (v == null ? null : new Date(String(v)));

/** The take's order as JSON has it (times as text): with Dates again. */
function reviveStepOrder(raw: Record<string, unknown>): StepOrder {
  return {
    ...(raw as unknown as StepOrder),
    nextStepAt: date(raw.nextStepAt),
    leaseExpiresAt: date(raw.leaseExpiresAt),
    waitDeadline: date(raw.waitDeadline),
    createdAt: date(raw.createdAt)!,
  };
}

/** row_to_json turns timestamps into text: bring them back to Dates. */
function reviveAttempt(raw: Record<string, unknown>): AttemptRow {
  return {
    ...(raw as unknown as AttemptRow),
    firstSentAt: date(raw.firstSentAt),
    lastSentAt: date(raw.lastSentAt),
    unknownSince: date(raw.unknownSince),
    notFoundSince: date(raw.notFoundSince),
    declaredDeadAt: date(raw.declaredDeadAt),
    createdAt: date(raw.createdAt)!,
    updatedAt: date(raw.updatedAt)!,
  };
}
