import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL, type Queryable } from '@cardpull/db';

export interface CallbackEventRow {
  id: string;
  /** Null for an event about the account (balance.low, catalog.changed), whose body is its snapshot. */
  orderId: string | null;
  client: string;
  type: string;
  url: string;
  snapshot: { status: string; error: { code: string; message: string } | null } | Record<string, unknown>;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt: Date;
  createdAt: Date;
  deliveredAt: Date | null;
}

export interface CallbackDeliveryRow {
  eventId: string;
  at: Date;
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
}

const EVENT_COLUMNS = `id, order_id AS "orderId", client, type, url, snapshot, state, attempts, next_attempt_at AS "nextAttemptAt",
  created_at AS "createdAt", delivered_at AS "deliveredAt"`;

/** The callback outbox: claim an event for one delivery attempt, record the attempt's result. */
@Injectable()
export class CallbacksRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /**
   * Account events (issue 24: `balance.low`; issue 25: `catalog.changed`): one per subscribed client, to its
   * default callback URL, with the body's payload as the snapshot, written on `db` (the transaction of what they
   * announce, or the pool). Answers their ids (to enqueue after this commit).
   */
  async addAccountEvents(type: string, payload: Record<string, unknown>, to: { client: string; url: string }[], db: Queryable = this.pool): Promise<string[]> {
    if (!to.length) return [];
    const { rows } = await db.query<{ id: string }>(
      `INSERT INTO callback_events (id, order_id, client, type, url, snapshot)
       SELECT gen_random_uuid(), NULL, x.client, $1, x.url, $2::jsonb FROM jsonb_to_recordset($3::jsonb) AS x(client text, url text)
       RETURNING id`,
      [type, JSON.stringify(payload), JSON.stringify(to)],
    );
    return rows.map((r) => r.id);
  }

  /**
   * Claims a due pending event for one attempt (a lease of `leaseMs`: another worker will not deliver it
   * meanwhile). Null when it is not due, already delivered or given up.
   */
  async claim(eventId: string, leaseMs: number): Promise<CallbackEventRow | null> {
    const { rows } = await this.pool.query<CallbackEventRow>(
      `UPDATE callback_events SET attempts = attempts + 1, next_attempt_at = now() + make_interval(secs => $2::float8 / 1000)
       WHERE id = $1 AND state = 'pending' AND next_attempt_at <= now() + interval '1 second'
       RETURNING ${EVENT_COLUMNS}`,
      [eventId, leaseMs],
    );
    return rows[0] ?? null;
  }

  /** An event, with how long until its next attempt is due (by the database's clock). */
  async find(eventId: string): Promise<(CallbackEventRow & { dueInMs: number }) | null> {
    const { rows } = await this.pool.query<CallbackEventRow & { dueInMs: number }>(
      `SELECT ${EVENT_COLUMNS}, GREATEST(0, extract(epoch FROM next_attempt_at - now()) * 1000)::float8 AS "dueInMs" FROM callback_events WHERE id = $1`,
      [eventId],
    );
    return rows[0] ?? null;
  }

  /**
   * Records one attempt; `retryInMs` is how long until the next try (by the database's clock: the sweeper of
   * another worker reads it), or null when delivered (ok) or given up (not ok).
   */
  async record(eventId: string, attempt: { ok: boolean; httpStatus: number | null; error: string | null; durationMs: number; retryInMs: number | null }): Promise<void> {
    await this.pool.query(
      `WITH d AS (INSERT INTO callback_deliveries (event_id, http_status, error, duration_ms) VALUES ($1, $2, $3, $4))
       UPDATE callback_events SET
         state = CASE WHEN $5 THEN 'delivered' WHEN $6::float8 IS NULL THEN 'failed' ELSE 'pending' END,
         delivered_at = CASE WHEN $5 THEN now() ELSE delivered_at END,
         next_attempt_at = COALESCE(now() + make_interval(secs => $6::float8 / 1000), next_attempt_at)
       WHERE id = $1`,
      [eventId, attempt.httpStatus, attempt.error, Math.round(attempt.durationMs), attempt.ok, attempt.retryInMs],
    );
  }

  /** Pending events and how long until each is due, by the database's clock. */
  async pending(): Promise<{ id: string; delayMs: number }[]> {
    const { rows } = await this.pool.query<{ id: string; delayMs: number }>(
      `SELECT id, GREATEST(0, extract(epoch FROM next_attempt_at - now()) * 1000)::float8 AS "delayMs" FROM callback_events WHERE state = 'pending'`,
    );
    return rows;
  }

  /** The order page: its callbacks and every delivery attempt. */
  async forOrder(orderId: string): Promise<{ events: CallbackEventRow[]; deliveries: CallbackDeliveryRow[] }> {
    const [events, deliveries] = await Promise.all([
      this.pool.query<CallbackEventRow>(`SELECT ${EVENT_COLUMNS} FROM callback_events WHERE order_id = $1 ORDER BY created_at`, [orderId]),
      this.pool.query<CallbackDeliveryRow>(
        `SELECT d.event_id AS "eventId", d.at, d.http_status AS "httpStatus", d.error, d.duration_ms AS "durationMs"
         FROM callback_deliveries d JOIN callback_events e ON e.id = d.event_id WHERE e.order_id = $1 ORDER BY d.id`,
        [orderId],
      ),
    ]);
    return { events: events.rows, deliveries: deliveries.rows };
  }
}
