import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '@cardpull/db';
import { filterSql, type OrderFilter } from '../read/order-filter';

export const BULK_ACTIONS = ['redrive', 'declare_dead', 'mark_failed'] as const;
export type BulkActionKind = (typeof BULK_ACTIONS)[number];
/** A bulk action takes at most this many orders (the filter must be narrower beyond). */
export const BULK_MAX_ORDERS = 10_000;

export interface BulkActionRow {
  id: string;
  action: BulkActionKind;
  filter: string;
  reason: string;
  createdBy: string;
  createdAt: Date;
  total: number;
  position: number;
  applied: number;
  skipped: number;
  state: 'running' | 'done';
  finishedAt: Date | null;
}

const COLUMNS = `id, action, filter, reason, created_by AS "createdBy", created_at AS "createdAt", coalesce(cardinality(order_ids), 0) AS total,
  position, applied, skipped, state, finished_at AS "finishedAt"`;

/** Bulk actions on orders (bulk_actions): what an operator started, and how far the worker got. */
@Injectable()
export class BulkActionsRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** The orders a bulk action's filter (bulkTarget) selects, oldest first, at most `limit`. */
  async eligible(target: OrderFilter | null, limit: number): Promise<string[]> {
    if (!target) return [];
    const { where, params } = filterSql(target, 2);
    const { rows } = await this.pool.query<{ id: string }>(`SELECT o.id FROM orders o WHERE ${where} ORDER BY o.id LIMIT $1`, [limit, ...params]);
    return rows.map((r) => r.id);
  }

  async create(b: { action: BulkActionKind; filter: string; reason: string; createdBy: string; orderIds: string[] }): Promise<string> {
    const id = randomUUID();
    await this.pool.query(
      `INSERT INTO bulk_actions (id, action, filter, reason, created_by, order_ids, state, finished_at)
       VALUES ($1, $2, $3, $4, $5, $6::uuid[], CASE WHEN cardinality($6::uuid[]) = 0 THEN 'done' ELSE 'running' END, CASE WHEN cardinality($6::uuid[]) = 0 THEN now() END)`,
      [id, b.action, b.filter, b.reason, b.createdBy, b.orderIds],
    );
    return id;
  }

  async get(id: string): Promise<BulkActionRow | null> {
    const { rows } = await this.pool.query<BulkActionRow>(`SELECT ${COLUMNS} FROM bulk_actions WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async recent(limit: number): Promise<BulkActionRow[]> {
    const { rows } = await this.pool.query<BulkActionRow>(`SELECT ${COLUMNS} FROM bulk_actions ORDER BY created_at DESC LIMIT $1`, [limit]);
    return rows;
  }

  /** Whether a bulk action is running (a read: the runner claims its tick only then). */
  async anyRunning(): Promise<boolean> {
    const { rows } = await this.pool.query<{ any: boolean }>(`SELECT EXISTS (SELECT 1 FROM bulk_actions WHERE state = 'running') AS any`);
    return rows[0]!.any;
  }

  /** The oldest running bulk action and its next `n` order ids. */
  async nextBatch(n: number): Promise<{ action: BulkActionRow; orderIds: string[] } | null> {
    const { rows } = await this.pool.query<BulkActionRow & { ids: string[] }>(
      `SELECT ${COLUMNS}, order_ids[position + 1 : position + $1] AS ids FROM bulk_actions WHERE state = 'running' ORDER BY created_at LIMIT 1`,
      [n],
    );
    const row = rows[0];
    if (!row) return null;
    const { ids, ...action } = row;
    return { action, orderIds: ids ?? [] };
  }

  /** Records a handled batch; guarded by the position it started from (one runner at a time moves it). */
  async advance(id: string, from: number, handled: number, applied: number, skipped: number): Promise<void> {
    await this.pool.query(
      `UPDATE bulk_actions SET position = position + $3, applied = applied + $4, skipped = skipped + $5,
              state = CASE WHEN position + $3 >= coalesce(cardinality(order_ids), 0) THEN 'done' ELSE state END,
              finished_at = CASE WHEN position + $3 >= coalesce(cardinality(order_ids), 0) THEN now() ELSE finished_at END
        WHERE id = $1 AND position = $2`,
      [id, from, handled, applied, skipped],
    );
  }
}
