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

  async series(range: ChartRange): Promise<ChartBucket[]> {
    const { buckets, stepS } = CHART_RANGES[range];
    const { rows } = await this.pool.query<Record<string, unknown>>(
      `WITH w AS (SELECT to_timestamp(floor(extract(epoch FROM now()) / $2) * $2) - ($1::int - 1) * make_interval(secs => $2) AS start),
       floor_id AS (SELECT (lpad(to_hex((extract(epoch FROM (SELECT start FROM w) - interval '1 hour') * 1000)::bigint), 12, '0') || '7000' || '8000' || '000000000000')::uuid AS id),
       b AS (SELECT generate_series((SELECT start FROM w), (SELECT start FROM w) + ($1::int - 1) * make_interval(secs => $2), make_interval(secs => $2)) AS t),
       o AS (SELECT o.id, o.status, o.mode, o.created_at, coalesce(o.completed_at, o.updated_at) AS ended_at
             FROM orders o WHERE o.id >= (SELECT id FROM floor_id) AND o.status IN ('completed', 'failed', 'needs_attention')
               AND coalesce(o.completed_at, o.updated_at) >= (SELECT start FROM w)),
       ev AS (SELECT e.at, e.type, e.detail FROM order_events e JOIN orders x ON x.id = e.order_id
              WHERE x.id >= (SELECT id FROM floor_id) AND e.at >= (SELECT start FROM w) AND e.type IN ('outcome_unknown', 'failed', 'awaiting_funds', 'awaiting_stock')),
       sync AS (SELECT coalesce(x.completed_at, x.updated_at) AS ended_at, extract(epoch FROM x.completed_at - a.last_sent_at) AS s
                FROM orders x JOIN attempts a ON a.order_id = x.id AND a.state = 'succeeded'
                WHERE x.id >= (SELECT id FROM floor_id) AND x.status = 'completed' AND x.mode = 'sync' AND x.completed_at >= (SELECT start FROM w))
       SELECT b.t AS at,
              (SELECT count(*) FROM o WHERE o.status = 'completed' AND o.ended_at >= b.t AND o.ended_at < b.t + make_interval(secs => $2))::int AS completed,
              (SELECT count(*) FROM o WHERE o.status = 'failed' AND o.ended_at >= b.t AND o.ended_at < b.t + make_interval(secs => $2))::int AS failed,
              (SELECT count(*) FROM o WHERE o.status = 'needs_attention' AND o.ended_at >= b.t AND o.ended_at < b.t + make_interval(secs => $2))::int AS "needsAttention",
              (SELECT percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY extract(epoch FROM o.ended_at - o.created_at))
                 FROM o WHERE o.status = 'completed' AND o.ended_at >= b.t AND o.ended_at < b.t + make_interval(secs => $2)) AS q,
              (SELECT percentile_cont(ARRAY[0.5, 0.95]) WITHIN GROUP (ORDER BY s) FROM sync WHERE sync.ended_at >= b.t AND sync.ended_at < b.t + make_interval(secs => $2)) AS sq,
              (SELECT count(*) FROM ev WHERE ev.type = 'outcome_unknown' AND ev.at >= b.t AND ev.at < b.t + make_interval(secs => $2))::int AS "unknownOutcomes",
              (SELECT count(*) FROM ev WHERE ev.type <> 'outcome_unknown' AND ev.at >= b.t AND ev.at < b.t + make_interval(secs => $2))::int AS "partnerRefusals"
       FROM b ORDER BY b.t`,
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
