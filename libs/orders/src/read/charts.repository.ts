import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '@cardpull/db';

export const CHART_RANGES = {
  hour: { buckets: 60, stepS: 60, label: 'last hour, per minute' },
  day: { buckets: 48, stepS: 1_800, label: 'last day, per 30 minutes' },
  week: { buckets: 56, stepS: 10_800, label: 'last week, per 3 hours' },
} as const;
export type ChartRange = keyof typeof CHART_RANGES;

export interface ChartBucket {
  at: Date;
  completed: number;
  failed: number;
  needsAttention: number;
  /** Intake to card of the orders completed in the bucket, seconds (null: none). */
  p50: number | null;
  p95: number | null;
  p99: number | null;
  /** The partner's answer to the call that brought a sync order's card: its last send to its completion, seconds. */
  syncCallP50: number | null;
  syncCallP95: number | null;
  /** Unknown outcomes (timeouts, 5xx, resets, ...) and definitive refusals recorded in the bucket. */
  unknownOutcomes: number;
  partnerRefusals: number;
}

/** Money per bucket (issue 24), from the ledger, in currency units (minor units / 100). */
export interface MoneyBucket {
  at: Date;
  /** What the cards stored in the bucket cost, and their face value. */
  spent: number;
  faceValue: number;
  /** What the cards beyond their order's (surplus, mismatch) cost. */
  surplus: number;
}

export interface OpenAges {
  status: string;
  under1m: number;
  under10m: number;
  under1h: number;
  older: number;
}

/**
 * The operations page's charts, from Postgres. Every query reads only the window's orders: ids are UUIDv7,
 * so `id >=` the first id of (the window's start - 1 hour) walks the primary key from there, whatever the
 * table's size (an order completing in the window was created at most an hour before it, or it is counted
 * in a later bucket when its card comes).
 */
@Injectable()
export class ChartsRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** What cards cost per bucket, from the window's ledger movements (the created_at BRIN index). */
  async money(range: ChartRange): Promise<MoneyBucket[]> {
    const { buckets, stepS } = CHART_RANGES[range];
    const { rows } = await this.pool.query<{ at: Date; spent: string; face_value: string; surplus: string }>(
      `WITH w AS (SELECT to_timestamp(floor(extract(epoch FROM now()) / $2) * $2) - ($1::int - 1) * make_interval(secs => $2) AS start),
       m AS (SELECT floor(extract(epoch FROM t.created_at - (SELECT start FROM w)) / $2)::int AS k,
                    sum(e.amount) FILTER (WHERE e.account = 'spent') AS spent,
                    sum(c.amount) FILTER (WHERE e.account = 'spent') AS face_value,
                    sum(e.amount) FILTER (WHERE e.account = 'surplus') AS surplus
             FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id LEFT JOIN cards c ON c.id = t.card_id
             WHERE t.created_at >= (SELECT start FROM w) AND t.kind IN ('card_stored', 'surplus') AND e.account IN ('spent', 'surplus')
             GROUP BY 1)
       SELECT (SELECT start FROM w) + g.k * make_interval(secs => $2) AS at, coalesce(m.spent, 0) AS spent, coalesce(m.face_value, 0) AS face_value, coalesce(m.surplus, 0) AS surplus
       FROM generate_series(0, $1::int - 1) AS g(k) LEFT JOIN m ON m.k = g.k ORDER BY g.k`,
      [buckets, stepS],
    );
    return rows.map((r) => ({ at: r.at, spent: Number(r.spent) / 100, faceValue: Number(r.face_value) / 100, surplus: Number(r.surplus) / 100 }));
  }

  /**
   * One pass over the window's rows per source (orders, events, sync calls), grouped by bucket (k), then
   * joined to the window's buckets: the cost grows with the window's orders, not with buckets x orders.
   */
  async series(range: ChartRange): Promise<ChartBucket[]> {
    const { buckets, stepS } = CHART_RANGES[range];
    const { rows } = await this.pool.query<Record<string, unknown>>(
      `WITH w AS (SELECT to_timestamp(floor(extract(epoch FROM now()) / $2) * $2) - ($1::int - 1) * make_interval(secs => $2) AS start),
       floor_id AS (SELECT (lpad(to_hex((extract(epoch FROM (SELECT start FROM w) - interval '1 hour') * 1000)::bigint), 12, '0') || '7000' || '8000' || '000000000000')::uuid AS id),
       o AS (SELECT floor(extract(epoch FROM coalesce(o.completed_at, o.updated_at) - (SELECT start FROM w)) / $2)::int AS k, o.status, o.mode,
                    extract(epoch FROM coalesce(o.completed_at, o.updated_at) - o.created_at) AS took,
                    CASE WHEN o.status = 'completed' AND o.mode = 'sync' THEN extract(epoch FROM o.completed_at - a.last_sent_at) END AS sync_call
             FROM orders o
             LEFT JOIN LATERAL (SELECT last_sent_at FROM attempts WHERE order_id = o.id AND state = 'succeeded' AND o.status = 'completed' AND o.mode = 'sync'
                                ORDER BY seq DESC LIMIT 1) a ON true
             WHERE o.id >= (SELECT id FROM floor_id) AND o.status IN ('completed', 'failed', 'needs_attention')
               AND coalesce(o.completed_at, o.updated_at) >= (SELECT start FROM w)),
       by_k AS (SELECT k,
                  count(*) FILTER (WHERE status = 'completed')::int AS completed,
                  count(*) FILTER (WHERE status = 'failed')::int AS failed,
                  count(*) FILTER (WHERE status = 'needs_attention')::int AS "needsAttention",
                  percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY took) FILTER (WHERE status = 'completed') AS q,
                  percentile_cont(ARRAY[0.5, 0.95]) WITHIN GROUP (ORDER BY sync_call) FILTER (WHERE sync_call IS NOT NULL) AS sq
                FROM o GROUP BY k),
       ev AS (SELECT floor(extract(epoch FROM e.at - (SELECT start FROM w)) / $2)::int AS k,
                     count(*) FILTER (WHERE e.type = 'outcome_unknown')::int AS "unknownOutcomes",
                     count(*) FILTER (WHERE e.type <> 'outcome_unknown')::int AS "partnerRefusals"
              FROM order_events e JOIN orders x ON x.id = e.order_id
              WHERE x.id >= (SELECT id FROM floor_id) AND e.at >= (SELECT start FROM w) AND e.type IN ('outcome_unknown', 'failed', 'awaiting_funds', 'awaiting_stock')
              GROUP BY 1)
       SELECT (SELECT start FROM w) + b.k * make_interval(secs => $2) AS at,
              coalesce(by_k.completed, 0) AS completed, coalesce(by_k.failed, 0) AS failed, coalesce(by_k."needsAttention", 0) AS "needsAttention",
              by_k.q, by_k.sq, coalesce(ev."unknownOutcomes", 0) AS "unknownOutcomes", coalesce(ev."partnerRefusals", 0) AS "partnerRefusals"
       FROM generate_series(0, $1::int - 1) AS b(k) LEFT JOIN by_k ON by_k.k = b.k LEFT JOIN ev ON ev.k = b.k
       ORDER BY b.k`,
      [buckets, stepS],
    );
    return rows.map((r) => {
      const q = (r.q as number[] | null) ?? [null, null, null];
      const sq = (r.sq as number[] | null) ?? [null, null];
      return {
        at: r.at as Date,
        completed: r.completed as number,
        failed: r.failed as number,
        needsAttention: r.needsAttention as number,
        p50: q[0] ?? null,
        p95: q[1] ?? null,
        p99: q[2] ?? null,
        syncCallP50: sq[0] ?? null,
        syncCallP95: sq[1] ?? null,
        unknownOutcomes: r.unknownOutcomes as number,
        partnerRefusals: r.partnerRefusals as number,
      };
    });
  }

  /** Open orders by status and age (the (status, id) index: open statuses only). */
  async openAges(): Promise<OpenAges[]> {
    const { rows } = await this.pool.query<OpenAges>(
      `SELECT status::text AS status,
              count(*) FILTER (WHERE created_at > now() - interval '1 minute')::int AS under1m,
              count(*) FILTER (WHERE created_at <= now() - interval '1 minute' AND created_at > now() - interval '10 minutes')::int AS under10m,
              count(*) FILTER (WHERE created_at <= now() - interval '10 minutes' AND created_at > now() - interval '1 hour')::int AS under1h,
              count(*) FILTER (WHERE created_at <= now() - interval '1 hour')::int AS older
       FROM orders WHERE status IN ('pending', 'in_progress', 'awaiting_funds', 'awaiting_stock', 'needs_attention') GROUP BY 1 ORDER BY 1`,
    );
    return rows;
  }
}
