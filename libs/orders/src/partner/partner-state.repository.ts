import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '@cardpull/db';

export interface CircuitState {
  state: 'open' | 'closed';
  openedAt: Date | null;
  closedAt: Date | null;
  lastErrorCode: string | null;
  lastErrorMessage: string | null;
  lastProbeAt: Date | null;
}

export interface PartnerErrorRow {
  at: Date;
  endpoint: string;
  outcome: string;
  code: string | null;
  httpStatus: number | null;
  message: string;
  requestId: string | null;
}

/** Partner errors of one kind (call, outcome, code, HTTP status): how many, when, and the latest as an example. */
export interface PartnerErrorGroup {
  endpoint: string;
  outcome: string;
  code: string | null;
  httpStatus: number | null;
  count: number;
  firstSeen: Date;
  lastSeen: Date;
  /** The latest error's message. */
  message: string;
  /** The latest request ID of the kind, and the order it belongs to (null when none, or not ours). */
  requestId: string | null;
  orderId: string | null;
}

/** The kinds of partner errors kept, latest first (at most the limit asked), and how many there are in all. */
export interface PartnerErrorGroups {
  groups: PartnerErrorGroup[];
  /** Kinds in all, and errors in all (the table keeps the latest few hundred). */
  kinds: number;
  errors: number;
}

export interface StoredSnapshot {
  data: unknown;
  fetchedAt: Date;
  /** Younger than the age asked for, by the database's clock (a worker's skew cannot make an old read pass). */
  fresh: boolean;
}

const CLOSED: CircuitState = { state: 'closed', openedAt: null, closedAt: null, lastErrorCode: null, lastErrorMessage: null, lastProbeAt: null };

/** The partner's state kept in Postgres (it must survive a Redis flush): the credentials circuit, recent errors, snapshots of balance and inventories. */
@Injectable()
export class PartnerStateRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** Opens the circuit; false when it was open already. */
  async openCircuit(code: string, message: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `INSERT INTO partner_circuit (id, state, opened_at, last_error_code, last_error_message, updated_at)
       VALUES (1, 'open', now(), $1, $2, now())
       ON CONFLICT (id) DO UPDATE SET state = 'open', opened_at = now(), last_error_code = $1, last_error_message = $2, updated_at = now()
       WHERE partner_circuit.state = 'closed'`,
      [code, message],
    );
    return !!rowCount;
  }

  /** Closes the circuit; false when it was not open. */
  async closeCircuit(): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `UPDATE partner_circuit SET state = 'closed', closed_at = now(), last_probe_at = now(), updated_at = now() WHERE id = 1 AND state = 'open'`,
    );
    return !!rowCount;
  }

  async noteProbe(code: string, message: string): Promise<void> {
    await this.pool.query(
      `UPDATE partner_circuit SET last_probe_at = now(), last_error_code = $1, last_error_message = $2, updated_at = now() WHERE id = 1`,
      [code, message],
    );
  }

  async circuit(): Promise<CircuitState> {
    const { rows } = await this.pool.query<CircuitState>(
      `SELECT state, opened_at AS "openedAt", closed_at AS "closedAt", last_error_code AS "lastErrorCode",
              last_error_message AS "lastErrorMessage", last_probe_at AS "lastProbeAt" FROM partner_circuit WHERE id = 1`,
    );
    return rows[0] ?? CLOSED;
  }

  async addError(e: Omit<PartnerErrorRow, 'at'>): Promise<void> {
    await this.pool.query(
      `INSERT INTO partner_errors (endpoint, outcome, code, http_status, message, request_id) VALUES ($1, $2, $3, $4, $5, $6)`,
      [e.endpoint, e.outcome, e.code, e.httpStatus, e.message, e.requestId],
    );
  }

  async recentErrors(limit: number): Promise<PartnerErrorRow[]> {
    const { rows } = await this.pool.query<PartnerErrorRow>(
      `SELECT at, endpoint, outcome, code, http_status AS "httpStatus", message, request_id AS "requestId" FROM partner_errors ORDER BY id DESC LIMIT $1`,
      [limit],
    );
    return rows;
  }

  /**
   * The errors kept, by kind (call, outcome, code, HTTP status): a partner failing the same way a thousand
   * times makes one row. Latest kind first; the example is each kind's latest error, with the order of its
   * latest request ID. The table is pruned to a few hundred rows: grouping it all is cheap.
   */
  async errorGroups(limit: number): Promise<PartnerErrorGroups> {
    const { rows } = await this.pool.query<PartnerErrorGroup & { kinds: number; errors: number }>(
      `WITH g AS (
         SELECT endpoint, outcome, code, http_status AS "httpStatus", count(*)::int AS count, min(at) AS "firstSeen", max(at) AS "lastSeen",
                (array_agg(message ORDER BY id DESC))[1] AS message,
                (array_agg(request_id ORDER BY id DESC) FILTER (WHERE request_id IS NOT NULL))[1] AS "requestId",
                max(id) AS latest, count(*) OVER ()::int AS kinds, (sum(count(*)) OVER ())::int AS errors
         FROM partner_errors GROUP BY endpoint, outcome, code, http_status
         ORDER BY latest DESC LIMIT $1)
       SELECT g.endpoint, g.outcome, g.code, g."httpStatus", g.count, g."firstSeen", g."lastSeen", g.message, g."requestId",
              a.order_id::text AS "orderId", g.kinds, g.errors
       FROM g LEFT JOIN attempts a ON a.request_id = g."requestId" ORDER BY g.latest DESC`,
      [limit],
    );
    return {
      groups: rows.map(({ kinds: _kinds, errors: _errors, ...group }) => group),
      kinds: rows[0]?.kinds ?? 0,
      errors: rows[0]?.errors ?? 0,
    };
  }

  /** Keeps the newest `keep` errors. */
  async pruneErrors(keep: number): Promise<void> {
    await this.pool.query('DELETE FROM partner_errors WHERE id < (SELECT min(id) FROM (SELECT id FROM partner_errors ORDER BY id DESC LIMIT $1) t)', [keep]);
  }

  async snapshot(key: string, maxAgeMs: number): Promise<StoredSnapshot | null> {
    const { rows } = await this.pool.query<StoredSnapshot>(
      `SELECT data, fetched_at AS "fetchedAt", now() - fetched_at <= make_interval(secs => $2::float8 / 1000) AS fresh FROM partner_snapshots WHERE key = $1`,
      [key, maxAgeMs],
    );
    return rows[0] ?? null;
  }

  /** Stores a snapshot read just now; returns when, by the database's clock. */
  async saveSnapshot(key: string, data: unknown): Promise<Date> {
    const { rows } = await this.pool.query<{ fetched_at: Date }>(
      `INSERT INTO partner_snapshots (key, data, fetched_at) VALUES ($1, $2::jsonb, now())
       ON CONFLICT (key) DO UPDATE SET data = EXCLUDED.data, fetched_at = EXCLUDED.fetched_at RETURNING fetched_at`,
      [key, JSON.stringify(data)],
    );
    return rows[0]!.fetched_at;
  }
}
