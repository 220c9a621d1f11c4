import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL, type AttemptState, type OrderStatus, type OrderStep, type PullMode } from '@cardpull/db';
import { ATTEMPT_COLUMNS, ORDER_COLUMNS, type AttemptRow, type CardRow, type OrderRow } from './order.types';
import { prepared } from './prepared';

export interface CurrentStep {
  order: OrderRow;
  /** The order's latest attempt (the one whose request ID is in play). */
  attempt: AttemptRow;
}

/** A card as the completing transition stores it (its order and time come from the transition). */
export type StoredCard = Omit<CardRow, 'orderId' | 'createdAt'>;

export interface Transition {
  orderId: string;
  /**
   * Invariant 5 (exactly-once effects): the change applies only while the order is still at the step the
   * handler worked on. Storing a card only needs the order not to be completed yet: a card that arrived
   * is kept whatever happened to the order meanwhile.
   */
  guard: { stepSeq: number } | 'not_completed';
  actor: string;
  status?: OrderStatus;
  /** The next step and when it is due; null ends scheduling (terminal or needs_attention, invariant 6). */
  next: { step: OrderStep; at: Date } | null;
  /** The order's error: set, cleared (null) or kept (undefined). */
  error?: { code: string; message: string } | null;
  waitDeadline?: Date | null;
  attempt?: {
    requestId: string;
    state?: AttemptState;
    partnerStatus?: string | null;
    error?: { code: string; message: string } | null;
    /**
     * Start of the window in which this attempt must reach a definitive answer (UNKNOWN_OUTCOME_WINDOW_MS):
     * 'start' keeps an earlier start, 'restart' starts it again now (an operator's re-drive), a Date is the
     * start when none was recorded (an interrupted call counts from when it was sent).
     */
    unknownSince?: 'start' | 'restart' | Date;
  };
  /** A new request ID, committed here before any call carries it (invariant 1). */
  newAttempt?: { requestId: string; kind: PullMode };
  /** Invariant 3: the card is stored in the same statement that completes the order. */
  card?: StoredCard;
  /** The timeline entry; omitted for repeats that add nothing (a retry scheduled like the one before). */
  event?: { type: string; requestId?: string; detail?: Record<string, unknown> };
}

export interface TransitionResult {
  applied: boolean;
  stepSeq: number;
  status: OrderStatus | null;
  cardStored: boolean;
  /** Callback events written by this transition (outbox), to deliver once it is committed. */
  callbackEventIds: string[];
}

export interface LeaseResult extends CurrentStep {
  /** The attempt's state before this lease: 'sent' means an earlier call's outcome was never recorded. */
  previousState: AttemptState;
}

const CURRENT_STEP_SQL = `SELECT ${ORDER_COLUMNS}, row_to_json(a_sel) AS attempt
  FROM orders o
  JOIN LATERAL (SELECT ${ATTEMPT_COLUMNS} FROM attempts a WHERE a.order_id = o.id ORDER BY a.seq DESC LIMIT 1) a_sel ON true
  WHERE o.id = $1`;

/**
 * The worker's writes: leasing a step and moving an order from one step to the next. Each is a single SQL
 * statement (one round trip, atomic), guarded so that re-running a job never applies a change twice.
 */
@Injectable()
export class StepsRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async current(orderId: string): Promise<CurrentStep | null> {
    const { rows } = await this.pool.query<OrderRow & { attempt: Record<string, unknown> }>(prepared(CURRENT_STEP_SQL, [orderId]));
    return rows[0] ? splitAttempt(rows[0]) : null;
  }

  /**
   * Takes the lease of a due sync_call / async_create step and counts the call on its attempt, so two
   * workers never send one request ID at the same time. Null when the step is not due, has moved on or
   * is leased by a live worker.
   */
  async lease(orderId: string, stepSeq: number, owner: string, leaseMs: number): Promise<LeaseResult | null> {
    const { rows } = await this.pool.query<OrderRow & { attempt: Record<string, unknown>; previousState: AttemptState }>(
      prepared(
      `WITH prev_attempt AS (
         SELECT a.request_id, a.state FROM attempts a WHERE a.order_id = $1 ORDER BY a.seq DESC LIMIT 1
       ), prev_order AS (
         SELECT status FROM orders WHERE id = $1
       ), o AS (
         UPDATE orders SET lease_owner = $3, lease_expires_at = now() + make_interval(secs => $4::float8 / 1000),
                status = CASE WHEN status = 'pending' THEN 'in_progress'::"OrderStatus" ELSE status END,
                updated_at = now()
         WHERE id = $1 AND step_seq = $2 AND next_step IN ('sync_call', 'async_create')
           AND next_step_at <= now() + interval '1 second'
           AND (lease_expires_at IS NULL OR lease_expires_at < now() OR lease_owner = $3)
         RETURNING *
       ), a AS (
         UPDATE attempts SET state = 'sent', call_count = call_count + 1, first_sent_at = COALESCE(first_sent_at, now()),
                last_sent_at = now(), updated_at = now()
         FROM prev_attempt p
         WHERE attempts.request_id = p.request_id AND p.state <> 'sent' AND EXISTS (SELECT 1 FROM o)
         RETURNING attempts.*
       ), ev AS (
         INSERT INTO order_events (order_id, type, from_status, to_status, request_id, actor)
         SELECT o.id, 'in_progress', 'pending', 'in_progress', p.request_id, $5
         FROM o, prev_order po, prev_attempt p WHERE po.status = 'pending'
       )
       SELECT ${ORDER_COLUMNS}, (SELECT state FROM prev_attempt) AS "previousState",
              (SELECT row_to_json(x) FROM (SELECT ${ATTEMPT_COLUMNS}
                 FROM (SELECT * FROM a UNION ALL SELECT attempts.* FROM attempts, prev_attempt p
                       WHERE attempts.request_id = p.request_id AND NOT EXISTS (SELECT 1 FROM a)) a) x) AS attempt
       FROM o`,
      [orderId, stepSeq, owner, leaseMs, owner.split('/')[0]],
      ),
    );
    const row = rows[0];
    if (!row) return null;
    const { previousState, ...rest } = row;
    return { ...splitAttempt(rest), previousState };
  }

  /**
   * Lease of a needs_attention order for the reconciler's same-ID re-check (its step does not move: the
   * re-check either changes the order through a guarded transition, or leaves it as it was).
   */
  async leaseForReconcile(orderId: string, owner: string, leaseMs: number): Promise<CurrentStep | null> {
    const { rowCount } = await this.pool.query(
      `WITH o AS (
         UPDATE orders SET lease_owner = $2, lease_expires_at = now() + make_interval(secs => $3::float8 / 1000)
         WHERE id = $1 AND status = 'needs_attention' AND (lease_expires_at IS NULL OR lease_expires_at < now())
         RETURNING id
       )
       UPDATE attempts SET call_count = call_count + 1, last_sent_at = now(), updated_at = now()
       WHERE request_id = (SELECT request_id FROM attempts WHERE order_id = $1 ORDER BY seq DESC LIMIT 1)
         AND EXISTS (SELECT 1 FROM o)`,
      [orderId, owner, leaseMs],
    );
    return rowCount ? this.current(orderId) : null;
  }

  /** Ends a lease without moving the order, noting the attempt's latest unknown answer. */
  async releaseLease(orderId: string, owner: string, note?: { requestId: string; code: string; message: string }): Promise<void> {
    await this.pool.query(
      `WITH a AS (UPDATE attempts SET error_code = $3, error_message = $4, updated_at = now() WHERE request_id = $5 AND $5 IS NOT NULL)
       UPDATE orders SET lease_owner = NULL, lease_expires_at = NULL WHERE id = $1 AND lease_owner = $2`,
      [orderId, owner, note?.code ?? null, note?.message ?? null, note?.requestId ?? null],
    );
  }

  /** Records what a poll learned about an attempt without moving the order (no write when nothing changed). */
  async notePartnerStatus(requestId: string, partnerStatus: string, startUnknownWindow = false): Promise<void> {
    await this.pool.query(
      prepared(
        `UPDATE attempts SET partner_status = $2, updated_at = now(),
                unknown_since = CASE WHEN $3 THEN COALESCE(unknown_since, now()) ELSE unknown_since END
         WHERE request_id = $1`,
        [requestId, partnerStatus, startUnknownWindow],
      ),
    );
  }

  async transition(t: Transition): Promise<TransitionResult> {
    const params: unknown[] = [t.orderId];
    const p = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    const guard = t.guard === 'not_completed' ? `status <> 'completed'` : `step_seq = ${p(t.guard.stepSeq)}`;
    const sets = [
      'step_seq = step_seq + 1',
      'lease_owner = NULL',
      'lease_expires_at = NULL',
      'updated_at = now()',
      `next_step = ${p(t.next?.step ?? null)}::"OrderStep"`,
      `next_step_at = ${p(t.next?.at ?? null)}::timestamptz`,
    ];
    if (t.status) {
      sets.push(`status = ${p(t.status)}::"OrderStatus"`);
      if (t.status === 'completed' || t.status === 'failed') sets.push('completed_at = now()');
    }
    if (t.error !== undefined) sets.push(`error_code = ${p(t.error?.code ?? null)}`, `error_message = ${p(t.error?.message ?? null)}`);
    if (t.waitDeadline !== undefined) sets.push(`wait_deadline = ${p(t.waitDeadline)}::timestamptz`);

    const ctes = [
      `prev AS (SELECT status FROM orders WHERE id = $1)`,
      `o AS (UPDATE orders SET ${sets.join(', ')} WHERE id = $1 AND ${guard}
             RETURNING step_seq, status, client, callback_url, error_code, error_message)`,
      // The outbox: a callback for every transition into a terminal or needs_attention status, committed
      // with it (ARCHITECTURE invariant 3's spirit for callers: no event without its transition, and back).
      `cb AS (INSERT INTO callback_events (id, order_id, client, type, url, snapshot)
             SELECT gen_random_uuid(), $1, o.client, 'order.' || o.status, o.callback_url,
                    jsonb_build_object('status', o.status, 'error', CASE WHEN o.error_code IS NULL THEN NULL
                      ELSE jsonb_build_object('code', o.error_code, 'message', o.error_message) END)
             FROM o, prev
             WHERE o.callback_url IS NOT NULL AND o.status IN ('completed', 'failed', 'needs_attention')
               AND o.status IS DISTINCT FROM prev.status
             RETURNING id)`,
    ];
    if (t.attempt) {
      const a = t.attempt;
      const aSets = ['updated_at = now()'];
      if (a.state) aSets.push(`state = ${p(a.state)}::"AttemptState"`);
      if (a.partnerStatus !== undefined) aSets.push(`partner_status = ${p(a.partnerStatus)}`);
      if (a.error !== undefined) aSets.push(`error_code = ${p(a.error?.code ?? null)}`, `error_message = ${p(a.error?.message ?? null)}`);
      if (a.unknownSince === 'start') aSets.push('unknown_since = COALESCE(unknown_since, now())');
      else if (a.unknownSince === 'restart') aSets.push('unknown_since = now()');
      else if (a.unknownSince instanceof Date) aSets.push(`unknown_since = COALESCE(unknown_since, ${p(a.unknownSince)}::timestamptz)`);
      ctes.push(`att AS (UPDATE attempts SET ${aSets.join(', ')} WHERE request_id = ${p(a.requestId)} AND EXISTS (SELECT 1 FROM o))`);
    }
    if (t.newAttempt) {
      ctes.push(
        `new_att AS (INSERT INTO attempts (request_id, order_id, seq, kind, state, created_at, updated_at)
          SELECT ${p(t.newAttempt.requestId)}, $1, (SELECT COALESCE(max(seq), 0) + 1 FROM attempts WHERE order_id = $1),
                 ${p(t.newAttempt.kind)}::"PullMode", 'created', now(), now() FROM o)`,
      );
    }
    let cardSelect = 'false';
    if (t.card) {
      const c = t.card;
      ctes.push(
        `card AS (INSERT INTO cards (id, order_id, request_id, partner_card_id, key_id, code_enc, pin_enc, expire_at, amount, gift_card_code, pdf_url)
          SELECT ${p(c.id)}::uuid, $1, ${p(c.requestId)}, ${p(c.partnerCardId)}, ${p(c.keyId)}, ${p(c.codeEnc)}, ${p(c.pinEnc)},
                 ${p(c.expireAt)}::timestamptz, ${p(c.amount)}, ${p(c.giftCardCode)}, ${p(c.pdfUrl)} FROM o
          ON CONFLICT DO NOTHING RETURNING id)`,
      );
      cardSelect = 'EXISTS (SELECT 1 FROM card)';
    }
    if (t.event) {
      ctes.push(
        `ev AS (INSERT INTO order_events (order_id, type, from_status, to_status, request_id, actor, detail)
          SELECT $1, ${p(t.event.type)}, prev.status, o.status, ${p(t.event.requestId ?? t.attempt?.requestId ?? null)},
                 ${p(t.actor)}, ${p(t.event.detail ? JSON.stringify(t.event.detail) : null)}::jsonb FROM o, prev)`,
      );
    }
    const { rows } = await this.pool.query<{ step_seq: number; status: OrderStatus; card_stored: boolean; callbacks: string[] }>(
      prepared(
        `WITH ${ctes.join(',\n')}
       SELECT o.step_seq, o.status, ${cardSelect} AS card_stored, ARRAY(SELECT id::text FROM cb) AS callbacks FROM o`,
        params,
      ),
    );
    const row = rows[0];
    return row
      ? { applied: true, stepSeq: row.step_seq, status: row.status, cardStored: row.card_stored, callbackEventIds: row.callbacks }
      : { applied: false, stepSeq: -1, status: null, cardStored: false, callbackEventIds: [] };
  }
}

function splitAttempt(row: OrderRow & { attempt: Record<string, unknown> }): CurrentStep {
  const { attempt, ...order } = row;
  return { order: order as OrderRow, attempt: reviveAttempt(attempt) };
}

/** row_to_json turns timestamps into text: bring them back to Dates. */
function reviveAttempt(raw: Record<string, unknown>): AttemptRow {
  const date = (v: unknown) => (v == null ? null : new Date(String(v)));
  return {
    ...(raw as unknown as AttemptRow),
    firstSentAt: date(raw.firstSentAt),
    lastSentAt: date(raw.lastSentAt),
    unknownSince: date(raw.unknownSince),
    createdAt: date(raw.createdAt)!,
    updatedAt: date(raw.updatedAt)!,
  };
}
