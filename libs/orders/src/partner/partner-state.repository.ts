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
