import { Inject, Injectable } from '@nestjs/common';
import type { Pool, QueryConfig } from 'pg';
import { PG_POOL, TurnBatch, allOrEach, preparesStatements, type AttemptState, type OrderStatus, type OrderStep, type PullMode, type Waiter } from '@cardpull/db';
import type { CardRow } from '../model/order.types';
import { newRequestId } from '../model/ids';
import { prepared, runStatement } from './prepared';
import { callOf, type ServerFunction } from './server-functions';
import { noteSets, unknownWindow, type AttemptNote } from './attempt-note';
import { MAX_STEP_BATCH, byOrderId, stepStatementSlots } from './step-batch';

/**
 * A card as the store receives it: code, PIN and PDF link sealed (the clear pdf_url column is never written any
 * more). Its order, time, role, mismatch, who stored it and what it completed come from the statement.
 */
export type StoredCard = Omit<CardRow, 'orderId' | 'createdAt' | 'mismatch' | 'role' | 'pdfUrl' | 'storedBy' | 'completedFrom'>;

export interface Transition {
  orderId: string;
  /** Invariant 5 (exactly-once effects): the change applies only while the order is still at the step the handler worked on. */
  stepSeq: number;
  actor: string;
  /** The order's new status; none keeps it (but a pending order that was sent becomes in_progress: KEPT_STATUS_SQL). */
  status?: OrderStatus;
  /** The next step and how long from now (by the database's clock) it is due; null ends scheduling (invariant 6). */
  next: { step: OrderStep; delayMs: number } | null;
  /** The order's error: set, cleared (null) or kept (undefined). */
  error?: { code: string; message: string } | null;
  /** 'start': the waiting deadline starts now (this long from now) unless one runs. */
  waitDeadline?: { startMs: number };
  attempt?: AttemptNote & { requestId: string };
  /**
   * A new request ID, minted here and committed by this statement before any call carries it (invariant 1):
   * the one place after intake where request IDs are born. Only for an ID the partner's word (or an
   * operator's) killed (invariant 2); the timeline entry then names the new ID and the previous one.
   */
  newAttempt?: { kind: PullMode; replaces: string };
  /**
   * An operator's action: applies only while no lease is in force (no one is asking the partner about the
   * order's request ID right now: one sender per ID). A worker's own transition ends its own lease.
   */
  whenNotLeased?: true;
  /**
   * The timeline entry; omitted for repeats that add nothing (a retry scheduled like the one before). A
   * transition that moves the status without one still gets an entry, named by the new status.
   */
  event?: { type: string; requestId?: string; detail?: Record<string, unknown> };
}

export interface TransitionResult {
  applied: boolean;
  /** The request ID minted for `newAttempt`. */
  newRequestId?: string;
  stepSeq: number;
  status: OrderStatus | null;
  /** Callback events written by this transition (outbox), to deliver once it is committed. */
  callbackEventIds: string[];
}

/** What became of a card received: the order's, a surplus, a mismatch, or one stored before (a re-run). */
export type CardRole = 'order' | 'surplus' | 'mismatch' | 'known';

export interface CardStoreResult {
  role: CardRole;
  status: OrderStatus;
  callbackEventIds: string[];
}

/**
 * The status a transition that names none leaves: a pending order whose lease was taken (its first request
 * ID sent) leaves pending at its first answer, for in_progress; any other keeps its status. The take itself
 * leaves the status alone, so that its update stays HOT (steps.repository.ts, TAKE_STEP_SQL).
 */
const KEPT_STATUS_SQL = `CASE WHEN status = 'pending' AND lease_owner IS NOT NULL THEN 'in_progress'::"OrderStatus" ELSE status END`;

/**
 * The outbox: a callback for every transition into a terminal or needs_attention status, committed with it
 * (no event without its transition, and back). `o` is the order as written, `prev` as it was.
 */
const OUTBOX_CTE = `cb AS (INSERT INTO callback_events (id, order_id, client, type, url, snapshot)
    SELECT gen_random_uuid(), o.id, o.client, 'order.' || o.status, o.callback_url,
           jsonb_build_object('status', o.status, 'error', CASE WHEN o.error_code IS NULL THEN NULL
             ELSE jsonb_build_object('code', o.error_code, 'message', o.error_message) END)
    FROM o, prev
    WHERE o.callback_url IS NOT NULL AND o.status IN ('completed', 'failed', 'needs_attention')
      AND o.status IS DISTINCT FROM prev.status
    RETURNING id)`;

/**
 * Invariant 3: every card received is stored, once (unique partner card id), in one statement with what it
 * does to its order (the order row is locked first, so two cards for one order are told apart):
 *  - the order has no card and the card matches it: the order's card; the order completes (also from
 *    `failed`: completed_after_failed; a card that arrives late is never turned away);
 *  - the order has its card already: a surplus card, kept for a refund or reuse; the order is unchanged;
 *  - the card differs from the order (gift card, amount): kept with the difference; a live order goes to
 *    needs_attention (card_mismatch);
 *  - a partner card id stored before: nothing (a step run twice). Read as of the statement's start, not with
 *    ON CONFLICT, whose speculative insert writes a second WAL record per card: a store of the same card that
 *    commits meanwhile (the order's lock makes the second wait for it) ends this one with a unique violation
 *    of cards_partner_card_id_key, and storeCard runs it again, which then finds the card (STORE_RACE_RETRIES).
 * The card records who stored it (stored_by). The card that completes a live order is that completion's entry on
 * the timeline: it records the status it completed the order from (completed_from), and the view
 * `order_timeline` shows it as the `completed` entry (migration 20261130160000_completion_on_card), so no
 * order_events row repeats it (a row and an index entry less per card). A late card for a failed order, a
 * surplus and a mismatch still write their entry (completed_after_failed, surplus_card, card_mismatch).
 */
const storeCardSql = (attemptSets: string) => `WITH prev AS (
    SELECT id, status, card_id FROM orders WHERE id = $1 FOR UPDATE
  ), kind AS (
    SELECT (CASE WHEN prev.card_id IS NOT NULL THEN 'surplus' WHEN $12::text IS NOT NULL THEN 'mismatch' ELSE 'order' END)::"CardRole" AS role
    FROM prev
  ), ins AS (
    INSERT INTO cards (id, order_id, request_id, partner_card_id, key_id, code_enc, pin_enc, expire_at, amount, gift_card_code, pdf_enc, mismatch, role, stored_by, completed_from)
    SELECT $2::uuid, prev.id, $3, $4, $5, $6, $7, $8::timestamptz, $9, $10, $11, $12, kind.role, $13,
           CASE WHEN kind.role = 'order' AND prev.status <> 'failed' THEN prev.status END
    FROM prev, kind
    WHERE NOT EXISTS (SELECT 1 FROM cards WHERE partner_card_id = $4)
    RETURNING id
  ), role AS (
    SELECT CASE WHEN EXISTS (SELECT 1 FROM ins) THEN kind.role::text ELSE 'known' END AS role FROM kind
  ), o AS (
    UPDATE orders SET
      status = CASE WHEN r.role = 'order' THEN 'completed'::"OrderStatus" ELSE 'needs_attention'::"OrderStatus" END,
      card_id = CASE WHEN r.role = 'order' THEN $2::uuid ELSE NULL END,
      completed_at = CASE WHEN r.role = 'order' THEN now() ELSE NULL END,
      error_code = CASE WHEN r.role = 'order' THEN NULL ELSE 'card_mismatch' END,
      error_message = CASE WHEN r.role = 'order' THEN NULL
        ELSE 'The partner''s card ' || $4 || ' for request ID ' || $3 || ' does not match the order: ' || $12 END,
      next_step = NULL, next_step_at = NULL, step_seq = step_seq + 1, lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
    FROM role r
    WHERE orders.id = $1 AND (r.role = 'order' OR (r.role = 'mismatch' AND orders.status NOT IN ('completed', 'failed')))
    RETURNING orders.id, orders.status, orders.client, orders.callback_url, orders.error_code, orders.error_message
  ), att AS (
    UPDATE attempts SET ${attemptSets} WHERE request_id = $3 AND EXISTS (SELECT 1 FROM ins)
  ), ev AS (
    INSERT INTO order_events (order_id, type, from_status, to_status, request_id, actor, detail)
    SELECT prev.id,
           CASE WHEN r.role = 'order' THEN 'completed_after_failed' WHEN r.role = 'surplus' THEN 'surplus_card' ELSE 'card_mismatch' END,
           prev.status, COALESCE((SELECT status FROM o), prev.status), $3, $13,
           jsonb_strip_nulls(jsonb_build_object('partner_card_id', $4::text, 'mismatch', $12::text))
    FROM prev, role r WHERE r.role <> 'known' AND NOT (r.role = 'order' AND prev.status <> 'failed')
  ), ${OUTBOX_CTE}
  SELECT r.role, COALESCE((SELECT status FROM o), prev.status) AS status, ARRAY(SELECT id::text FROM cb) AS callbacks FROM prev, role r`;

/** How many times storeCard runs its statement again after a store of the same card won a race with it. */
const STORE_RACE_RETRIES = 2;
const isCardStoredMeanwhile = (error: unknown): boolean => {
  const e = error as { code?: string; constraint?: string };
  return e.code === '23505' && e.constraint === 'cards_partner_card_id_key';
};

const storeCardTexts = new Map<string, string>();
/**
 * storeCardSql for one attempt note's shape, built once: the statement's text is then the same string each
 * time (prepared() finds its name without hashing 2 KB of new text per card).
 */
function storeCardText(attemptSets: string): string {
  let text = storeCardTexts.get(attemptSets);
  if (!text) storeCardTexts.set(attemptSets, (text = storeCardSql(attemptSets)));
  return text;
}

/**
 * storeCardSql as a server-side function (server-functions.ts), the attempt's note as parameters: $1-$13 as
 * storeCard passes them, $14 the attempt's state, $15 its partner status. A card that answered the asked ID
 * (state succeeded) also clears the attempt's error and its not-found run, as storeCard's note does; one that
 * leaves it unknown starts its unknown-outcome window, as noteSets does (unknownWindow in attempt-note.ts).
 */
export const STORE_CARD_FN: ServerFunction = {
  name: 'cardpull_store_card',
  args: ['uuid', 'uuid', 'text', 'text', 'text', 'bytea', 'bytea', 'timestamptz', 'integer', 'text', 'bytea', 'text', 'text', '"AttemptState"', 'text'],
  returns: [
    ['role', 'text'],
    ['status', '"OrderStatus"'],
    ['callbacks', 'text[]'],
  ],
  body: storeCardSql(
    `updated_at = now(), state = $14,
      unknown_since = CASE WHEN $14 = 'unknown' THEN COALESCE(unknown_since, now()) ELSE unknown_since END,
      partner_status = CASE WHEN $14 = 'succeeded' THEN $15 ELSE partner_status END,
      error_code = CASE WHEN $14 = 'succeeded' THEN NULL ELSE error_code END,
      error_message = CASE WHEN $14 = 'succeeded' THEN NULL ELSE error_message END,
      not_found_since = CASE WHEN $14 = 'succeeded' THEN NULL ELSE not_found_since END`,
  ),
};

/**
 * The card stores of several steps in one statement (one round trip, one commit): storeCardSql for each,
 * through its server-side function, in the order given (the orders' ids: byOrderId). Each call is a
 * statement of its own inside (it sees the cards the calls before it stored), so each card is stored exactly
 * as a store of its own would store it; they commit together. One row per card, numbered as given; `role` is
 * null for an order that does not exist (archived: the caller restores it).
 */
const STORE_BATCH_SQL = `SELECT i.n, s.role, s.status, s.callbacks
  FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::bytea[], $7::bytea[], $8::timestamptz[], $9::integer[],
              $10::text[], $11::bytea[], $12::text[], $13::text[], $14::"AttemptState"[], $15::text[])
       WITH ORDINALITY AS i(order_id, card_id, request_id, partner_card_id, key_id, code_enc, pin_enc, expire_at, amount,
                            gift_card_code, pdf_enc, mismatch, actor, state, partner_status, n)
  LEFT JOIN LATERAL ${STORE_CARD_FN.name}(i.order_id, i.card_id, i.request_id, i.partner_card_id, i.key_id, i.code_enc, i.pin_enc,
              i.expire_at, i.amount, i.gift_card_code, i.pdf_enc, i.mismatch, i.actor, i.state, i.partner_status) s ON true
  ORDER BY i.n`;

/** A card store waiting for the statement of its turn (TransitionsRepository.storeCard's arguments). */
interface StoreItem extends Waiter<CardStoreResult | null> {
  orderId: string;
  card: StoredCard;
  mismatch: string | null;
  attempt: { state: AttemptState; partnerStatus?: string | null };
  actor: string;
}

/**
 * Every shape of transition() as one statement, its options as parameters (for its server-side function,
 * server-functions.ts): $1 order, $2 step seq, $3 next step (null: none), $4 its delay in ms, $5 status (null:
 * kept, see KEPT_STATUS_SQL), $6 whether the error is set (to $7 code, $8 message; null clears it), $9 the waiting deadline's
 * length in ms (null: none started), $10 only while not leased, $11 the request ID the new one replaces
 * unless this statement kills it (null: no guard); the attempt's note: $12 its request ID (null: no note),
 * $13 state (null: kept), $14/$15 partner status set/value, $16/$17/$18 error set/code/message, $19
 * unknown_since ('start', 'restart', 'at' $20, null: kept), $21 not_found_since ('start', 'clear', null:
 * kept), $22 declared dead by (null: not); $23 a new request ID (null: none) of kind $24; the timeline's
 * entry: $25 type (null: none, unless the status moved: then named by the new status), $26 its request ID,
 * $27 actor, $28 detail. The same changes as the statement transition() builds for the shape at hand (test/orders/server-functions.e2e-spec.ts).
 */
const TRANSITION_ANY_SQL = `WITH prev AS (SELECT status FROM orders WHERE id = $1),
  o AS (UPDATE orders SET step_seq = step_seq + 1, lease_owner = NULL, lease_expires_at = NULL, updated_at = now(),
          next_step = $3,
          next_step_at = CASE WHEN $3 IS NULL THEN NULL ELSE now() + make_interval(secs => $4 / 1000) END,
          status = COALESCE($5, ${KEPT_STATUS_SQL}),
          completed_at = CASE WHEN $5 = 'failed' THEN now() ELSE completed_at END,
          error_code = CASE WHEN $6 THEN $7 ELSE error_code END,
          error_message = CASE WHEN $6 THEN $8 ELSE error_message END,
          wait_deadline = CASE WHEN $9 IS NULL THEN wait_deadline ELSE COALESCE(wait_deadline, now() + make_interval(secs => $9 / 1000)) END
        WHERE id = $1 AND step_seq = $2
          AND (NOT $10 OR lease_expires_at IS NULL OR lease_expires_at < now())
          AND ($11 IS NULL OR EXISTS (SELECT 1 FROM attempts WHERE request_id = $11 AND order_id = $1 AND state = 'failed_definitive'))
        RETURNING id, step_seq, status, client, callback_url, error_code, error_message),
  ${OUTBOX_CTE},
  att AS (UPDATE attempts SET updated_at = now(),
          state = COALESCE($13, state),
          partner_status = CASE WHEN $14 THEN $15 ELSE partner_status END,
          error_code = CASE WHEN $16 THEN $17 ELSE error_code END,
          error_message = CASE WHEN $16 THEN $18 ELSE error_message END,
          unknown_since = CASE $19 WHEN 'start' THEN COALESCE(unknown_since, now()) WHEN 'restart' THEN now()
                                   WHEN 'at' THEN COALESCE(unknown_since, $20) ELSE unknown_since END,
          not_found_since = CASE $21 WHEN 'start' THEN COALESCE(not_found_since, now()) WHEN 'clear' THEN NULL ELSE not_found_since END,
          declared_dead_at = CASE WHEN $22 IS NULL THEN declared_dead_at ELSE now() END,
          declared_dead_by = COALESCE($22, declared_dead_by)
        WHERE $12 IS NOT NULL AND request_id = $12 AND EXISTS (SELECT 1 FROM o)),
  new_att AS (INSERT INTO attempts (request_id, order_id, seq, kind, state, created_at, updated_at)
        SELECT $23, $1, (SELECT COALESCE(max(seq), 0) + 1 FROM attempts WHERE order_id = $1), $24, 'created', now(), now()
        FROM o WHERE $23 IS NOT NULL),
  ev AS (INSERT INTO order_events (order_id, type, from_status, to_status, request_id, actor, detail)
        SELECT $1, COALESCE($25, o.status::text), prev.status, o.status, $26, $27, $28 FROM o, prev
        WHERE $25 IS NOT NULL OR o.status IS DISTINCT FROM prev.status)
  SELECT o.step_seq, o.status, ARRAY(SELECT id::text FROM cb) AS callbacks FROM o`;

/** TRANSITION_ANY_SQL as a server-side function (server-functions.ts). */
export const TRANSITION_FN: ServerFunction = {
  name: 'cardpull_transition',
  args: [
    'uuid', 'integer', '"OrderStep"', 'double precision', '"OrderStatus"', 'boolean', 'text', 'text', 'double precision', 'boolean', 'text',
    'text', '"AttemptState"', 'boolean', 'text', 'boolean', 'text', 'text', 'text', 'timestamptz', 'text', 'text',
    'text', '"PullMode"', 'text', 'text', 'text', 'jsonb',
  ],
  returns: [
    ['step_seq', 'integer'],
    ['status', '"OrderStatus"'],
    ['callbacks', 'text[]'],
  ],
  body: TRANSITION_ANY_SQL,
};

/**
 * The statements that move an order, each one SQL statement (one round trip, atomic) guarded so that
 * re-running a job never applies a change twice. Times are the database's (`now()`), never a worker's.
 */
@Injectable()
export class TransitionsRepository {
  /** The card store through its server-side function (behind a transaction pooler: see server-functions.ts). */
  private readonly viaFunctions: boolean;

  /** The card stores of this turn of the event loop, which go to Postgres together (storeCard). */
  private readonly stores: TurnBatch<StoreItem>;

  constructor(@Inject(PG_POOL) private readonly pool: Pool) {
    this.viaFunctions = !preparesStatements(pool);
    this.stores = new TurnBatch<StoreItem>(MAX_STEP_BATCH, (batch) => this.storeEach(batch), stepStatementSlots(pool));
  }

  async transition(t: Transition): Promise<TransitionResult> {
    const minted = t.newAttempt ? newRequestId() : undefined;
    const { rows } = await runStatement<{ step_seq: number; status: OrderStatus; callbacks: string[] }>(
      this.pool,
      this.viaFunctions ? callOf(TRANSITION_FN, transitionValues(t, minted)) : transitionStatement(t, minted),
    );
    const row = rows[0];
    return row
      ? { applied: true, stepSeq: row.step_seq, status: row.status, callbackEventIds: row.callbacks, ...(minted ? { newRequestId: minted } : {}) }
      : { applied: false, stepSeq: -1, status: null, callbackEventIds: [] };
  }

  /**
   * Stores a card received for `orderId` and applies what it means for the order (see storeCardSql). Null
   * when the order is not in the hot tables (archived meanwhile: the caller restores it and stores again).
   * The stores of one turn of the event loop share one statement and its commit (STORE_BATCH_SQL; at most
   * stepStatementSlots at a time, the stores that arrive meanwhile go in the next one).
   */
  storeCard(orderId: string, card: StoredCard, mismatch: string | null, attempt: { state: AttemptState; partnerStatus?: string | null }, actor: string): Promise<CardStoreResult | null> {
    return new Promise((resolve, reject) => this.stores.push({ orderId, card, mismatch, attempt, actor, resolve, reject }));
  }

  /** One statement for the card stores of a turn; if it fails, each store alone (with its own retries of a race). */
  private storeEach(batch: StoreItem[]): Promise<void> {
    return allOrEach(byOrderId(batch), (items) => this.storeRows(items), (item) => this.storeOne(item));
  }

  /** The stores `items` in one statement (STORE_BATCH_SQL): what each card became, in their order. */
  private async storeRows(items: StoreItem[]): Promise<(CardStoreResult | null)[]> {
    const column = <T>(value: (item: StoreItem) => T): T[] => items.map(value);
    const { rows } = await runStatement<{ n: string; role: CardRole | null; status: OrderStatus; callbacks: string[] }>(
      this.pool,
      prepared(STORE_BATCH_SQL, [
        column((i) => i.orderId), column((i) => i.card.id), column((i) => i.card.requestId), column((i) => i.card.partnerCardId),
        column((i) => i.card.keyId), column((i) => i.card.codeEnc), column((i) => i.card.pinEnc), column((i) => i.card.expireAt?.toISOString() ?? null),
        column((i) => i.card.amount), column((i) => i.card.giftCardCode), column((i) => i.card.pdfEnc), column((i) => i.mismatch), column((i) => i.actor),
        column((i) => i.attempt.state), column((i) => i.attempt.partnerStatus ?? 'issued'),
      ]),
    );
    const byN = new Map(rows.map((r) => [Number(r.n), r]));
    return items.map((_, i) => {
      const row = byN.get(i + 1);
      return row?.role ? { role: row.role, status: row.status, callbackEventIds: row.callbacks } : null;
    });
  }

  /** One card's store, as it always was: its own statement, run again when a store of the same card won a race with it. */
  private async storeOne({ orderId, card, mismatch, attempt, actor }: StoreItem): Promise<CardStoreResult | null> {
    const params: unknown[] = [
      orderId, card.id, card.requestId, card.partnerCardId, card.keyId, card.codeEnc, card.pinEnc,
      // As text (ISO 8601, UTC): pg would format a Date through its local-time path, per card.
      card.expireAt?.toISOString() ?? null, card.amount, card.giftCardCode, card.pdfEnc, mismatch, actor,
    ];
    // A card under another request ID than the one asked leaves ours open: only its state is kept.
    const partnerStatus = attempt.partnerStatus ?? 'issued';
    let statement: QueryConfig;
    if (this.viaFunctions) {
      statement = callOf(STORE_CARD_FN, [...params, attempt.state, partnerStatus]);
    } else {
      const note: AttemptNote = attempt.state === 'succeeded' ? { state: 'succeeded', partnerStatus, error: null, notFoundSince: 'clear' } : { state: attempt.state };
      const { sets } = noteSets(note, params);
      statement = prepared(storeCardText(sets), params);
    }
    for (let run = 0; ; run++) {
      try {
        const { rows } = await runStatement<{ role: CardRole; status: OrderStatus; callbacks: string[] }>(this.pool, statement);
        const row = rows[0];
        return row ? { role: row.role, status: row.status, callbackEventIds: row.callbacks } : null;
      } catch (error) {
        // The same partner card stored by another statement since this one started: run again, it is 'known' now.
        if (run < STORE_RACE_RETRIES && isCardStoredMeanwhile(error)) continue;
        throw error;
      }
    }
  }
}

/** The statement of transition() for the shape of `t`: only the changes it asks for (named: planned once per shape and connection). */
function transitionStatement(t: Transition, minted: string | undefined): QueryConfig {
  const params: unknown[] = [t.orderId];
  const p = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const sets = [
    'step_seq = step_seq + 1',
    'lease_owner = NULL',
    'lease_expires_at = NULL',
    'updated_at = now()',
    `next_step = ${p(t.next?.step ?? null)}::"OrderStep"`,
    t.next ? `next_step_at = now() + make_interval(secs => ${p(t.next.delayMs)}::float8 / 1000)` : 'next_step_at = NULL',
  ];
  if (t.status) {
    sets.push(`status = ${p(t.status)}::"OrderStatus"`);
    if (t.status === 'failed') sets.push('completed_at = now()');
  } else {
    sets.push(`status = ${KEPT_STATUS_SQL}`);
  }
  if (t.error !== undefined) sets.push(`error_code = ${p(t.error?.code ?? null)}`, `error_message = ${p(t.error?.message ?? null)}`);
  if (t.waitDeadline) sets.push(`wait_deadline = COALESCE(wait_deadline, now() + make_interval(secs => ${p(t.waitDeadline.startMs)}::float8 / 1000))`);

  const guards = [];
  if (t.whenNotLeased) guards.push('AND (lease_expires_at IS NULL OR lease_expires_at < now())');
  // Invariant 2 by construction: a new request ID only replaces one that is dead, already or by this very statement.
  const killsNow = t.newAttempt && t.attempt?.requestId === t.newAttempt.replaces && t.attempt.state === 'failed_definitive';
  if (t.newAttempt && !killsNow) guards.push(`AND EXISTS (SELECT 1 FROM attempts WHERE request_id = ${p(t.newAttempt.replaces)} AND order_id = $1 AND state = 'failed_definitive')`);
  const ctes = [
    `prev AS (SELECT status FROM orders WHERE id = $1)`,
    `o AS (UPDATE orders SET ${sets.join(', ')} WHERE id = $1 AND step_seq = ${p(t.stepSeq)} ${guards.join(' ')}
           RETURNING id, step_seq, status, client, callback_url, error_code, error_message)`,
    OUTBOX_CTE,
  ];
  if (t.attempt) {
    const { requestId, ...note } = t.attempt;
    const { sets: aSets } = noteSets(note, params);
    ctes.push(`att AS (UPDATE attempts SET ${aSets} WHERE request_id = ${p(requestId)} AND EXISTS (SELECT 1 FROM o))`);
  }
  if (t.newAttempt) {
    ctes.push(
      `new_att AS (INSERT INTO attempts (request_id, order_id, seq, kind, state, created_at, updated_at)
        SELECT ${p(minted)}, $1, (SELECT COALESCE(max(seq), 0) + 1 FROM attempts WHERE order_id = $1),
               ${p(t.newAttempt.kind)}::"PullMode", 'created', now(), now() FROM o)`,
    );
  }
  // The timeline's entry: the one asked for, or else one named by the new status whenever the status moved
  // (a pending order's first answer, KEPT_STATUS_SQL): no status change without its entry.
  const detail = t.event && (t.newAttempt ? { ...t.event.detail, previous_request_id: t.newAttempt.replaces } : t.event.detail);
  ctes.push(
    `ev AS (INSERT INTO order_events (order_id, type, from_status, to_status, request_id, actor, detail)
      SELECT $1, ${t.event ? p(t.event.type) : 'o.status::text'}, prev.status, o.status, ${p(t.event?.requestId ?? minted ?? t.attempt?.requestId ?? null)},
             ${p(t.actor)}, ${p(detail ? JSON.stringify(detail) : null)}::jsonb FROM o, prev${t.event ? '' : ' WHERE o.status IS DISTINCT FROM prev.status'})`,
  );
  return prepared(`WITH ${ctes.join(',\n')} SELECT o.step_seq, o.status, ARRAY(SELECT id::text FROM cb) AS callbacks FROM o`, params);
}

/** transition()'s parameters for TRANSITION_FN (see TRANSITION_ANY_SQL). */
function transitionValues(t: Transition, minted: string | undefined): unknown[] {
  const killsNow = t.newAttempt && t.attempt?.requestId === t.newAttempt.replaces && t.attempt.state === 'failed_definitive';
  const note = t.attempt;
  const unknown = note && unknownWindow(note);
  const detail = t.event && (t.newAttempt ? { ...t.event.detail, previous_request_id: t.newAttempt.replaces } : t.event.detail);
  return [
    t.orderId,
    t.stepSeq,
    t.next?.step ?? null,
    t.next?.delayMs ?? null,
    t.status ?? null,
    t.error !== undefined,
    t.error?.code ?? null,
    t.error?.message ?? null,
    t.waitDeadline?.startMs ?? null,
    !!t.whenNotLeased,
    t.newAttempt && !killsNow ? t.newAttempt.replaces : null,
    note?.requestId ?? null,
    note?.state ?? null,
    note?.partnerStatus !== undefined,
    note?.partnerStatus ?? null,
    note?.error !== undefined,
    note?.error?.code ?? null,
    note?.error?.message ?? null,
    unknown instanceof Date ? 'at' : (unknown ?? null),
    unknown instanceof Date ? unknown : null,
    note?.notFoundSince ?? null,
    note?.declaredDeadBy || null,
    minted ?? null,
    t.newAttempt?.kind ?? null,
    t.event?.type ?? null,
    t.event?.requestId ?? minted ?? t.attempt?.requestId ?? null,
    t.actor,
    detail ? JSON.stringify(detail) : null,
  ];
}
