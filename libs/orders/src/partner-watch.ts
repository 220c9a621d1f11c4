import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { Pool } from 'pg';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { PG_POOL } from '@cardpull/db';
import { PartnerCallListeners, PartnerClient, type Balance, type Inventory, type PartnerOutcome } from '@cardpull/partner-client';

/** Keep this many recent partner errors for the operations page. */
const KEEP_ERRORS = 500;

/**
 * Records every partner answer that was not a success (recent partner errors on the operations page).
 * Best effort: a failed insert never fails the call that reported it.
 */
@Injectable()
export class PartnerErrors implements OnModuleInit {
  private inserts = 0;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly listeners: PartnerCallListeners,
  ) {}

  onModuleInit(): void {
    this.listeners.add((e) => {
      if (e.outcome === 'success') return;
      void this.pool
        .query(
          `INSERT INTO partner_errors (endpoint, outcome, code, http_status, message, request_id) VALUES ($1, $2, $3, $4, $5, $6)`,
          [e.endpoint, e.reason ? `${e.outcome}:${e.reason}` : e.outcome, e.code ?? null, e.httpStatus ?? null, (e.message ?? '').slice(0, 500), e.requestId ?? null],
        )
        .then(() => (++this.inserts % 100 === 0 ? this.prune() : undefined))
        .catch(() => undefined);
    });
  }

  async recent(limit = 50): Promise<{ at: Date; endpoint: string; outcome: string; code: string | null; httpStatus: number | null; message: string; requestId: string | null }[]> {
    const { rows } = await this.pool.query(
      `SELECT at, endpoint, outcome, code, http_status AS "httpStatus", message, request_id AS "requestId" FROM partner_errors ORDER BY id DESC LIMIT $1`,
      [limit],
    );
    return rows;
  }

  private async prune(): Promise<void> {
    await this.pool.query('DELETE FROM partner_errors WHERE id < (SELECT min(id) FROM (SELECT id FROM partner_errors ORDER BY id DESC LIMIT $1) t)', [KEEP_ERRORS]);
  }
}

export interface Snapshot<T> {
  data: T;
  fetchedAt: Date;
  /** True when the partner could not be asked and this is an older copy. */
  stale: boolean;
}

/**
 * The partner's balance and inventories, cached in Postgres for PARTNER_CACHE_TTL_MS (shared by the API's
 * views, the health probe, the operations page and the balance watch), so dashboards and probes do not
 * hammer the partner.
 */
@Injectable()
export class PartnerSnapshots {
  private readonly log = new Logger(PartnerSnapshots.name);
  private readonly inflight = new Map<string, Promise<Snapshot<unknown> | null>>();

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly partner: PartnerClient,
  ) {}

  balance(maxAgeMs = this.config.PARTNER_CACHE_TTL_MS): Promise<Snapshot<Balance> | null> {
    return this.get('balance', maxAgeMs, () => this.partner.getBalance()) as Promise<Snapshot<Balance> | null>;
  }

  inventory(giftCardCode: string, maxAgeMs = this.config.PARTNER_CACHE_TTL_MS): Promise<Snapshot<Inventory> | null> {
    return this.get(`inventory:${giftCardCode}`, maxAgeMs, () => this.partner.getInventory(giftCardCode)) as Promise<Snapshot<Inventory> | null>;
  }

  /** Last outcome of a refresh that failed, for the health probe (null after a success). */
  lastFailure: { key: string; outcome: string; message: string; at: Date } | null = null;

  private get(key: string, maxAgeMs: number, fetch: () => Promise<PartnerOutcome<unknown>>): Promise<Snapshot<unknown> | null> {
    // maxAgeMs 0 wants a read made after this call (a proof): it never joins a read already under way.
    if (maxAgeMs === 0) return this.load(key, maxAgeMs, fetch);
    const existing = this.inflight.get(key);
    if (existing) return existing;
    const run = this.load(key, maxAgeMs, fetch).finally(() => this.inflight.delete(key));
    this.inflight.set(key, run);
    return run;
  }

  private async load(key: string, maxAgeMs: number, fetch: () => Promise<PartnerOutcome<unknown>>): Promise<Snapshot<unknown> | null> {
    // Fresh or not by the database's clock (fetched_at is the database's too): a worker's skew cannot make an old read pass.
    const { rows } = await this.pool.query<{ data: unknown; fetched_at: Date; fresh: boolean }>(
      `SELECT data, fetched_at, now() - fetched_at <= make_interval(secs => $2::float8 / 1000) AS fresh FROM partner_snapshots WHERE key = $1`,
      [key, maxAgeMs],
    );
    const cached = rows[0];
    if (cached?.fresh) return { data: cached.data, fetchedAt: cached.fetched_at, stale: false };
    const out = await fetch();
    if (out.kind === 'success') {
      this.lastFailure = null;
      const { rows: saved } = await this.pool.query<{ fetched_at: Date }>(
        `INSERT INTO partner_snapshots (key, data, fetched_at) VALUES ($1, $2::jsonb, now())
         ON CONFLICT (key) DO UPDATE SET data = EXCLUDED.data, fetched_at = EXCLUDED.fetched_at RETURNING fetched_at`,
        [key, JSON.stringify(out.value)],
      );
      return { data: out.value, fetchedAt: saved[0]!.fetched_at, stale: false };
    }
    this.lastFailure = { key, outcome: out.kind, message: out.message, at: new Date() };
    this.log.warn({ key, outcome: out.kind, message: out.message }, 'partner snapshot refresh failed');
    return cached ? { data: cached.data, fetchedAt: cached.fetched_at, stale: true } : null;
  }
}
