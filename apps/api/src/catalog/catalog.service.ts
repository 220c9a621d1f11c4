import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { Pool } from 'pg';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { PG_POOL } from '@cardpull/db';
import { PartnerClient, type GiftCard } from '@cardpull/partner-client';

/** Minimum time between two refreshes caused by a cache miss (an unknown code must not hammer the partner). */
const MISS_REFRESH_MIN_INTERVAL_MS = 5_000;

/**
 * The partner's catalog, cached: in memory for validation on the request path, in Postgres so an API that
 * starts while the partner is unreachable can still validate orders. Refreshed at start, every
 * CATALOG_REFRESH_INTERVAL_MS, and once on a cache miss (rate-limited).
 */
@Injectable()
export class CatalogService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly log = new Logger(CatalogService.name);
  private cards = new Map<string, GiftCard>();
  private refreshedAt: Date | null = null;
  private lastMissRefresh = 0;
  private inflight?: Promise<boolean>;
  private timer?: NodeJS.Timeout;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly partner: PartnerClient,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!(await this.refresh())) await this.loadFromDatabase();
    this.timer = setInterval(() => void this.refresh(), this.config.CATALOG_REFRESH_INTERVAL_MS);
    this.timer.unref();
  }

  /** Stops refreshing, and lets a refresh under way finish before the database pool closes. */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.inflight?.catch(() => undefined);
  }

  /** A gift card by code; on a miss, refreshes once (rate-limited) before answering "unknown". */
  async find(code: string): Promise<GiftCard | undefined> {
    const hit = this.cards.get(code);
    if (hit) return hit;
    if (Date.now() - this.lastMissRefresh >= MISS_REFRESH_MIN_INTERVAL_MS) {
      this.lastMissRefresh = Date.now();
      await this.refresh();
    }
    return this.cards.get(code);
  }

  list(): { cards: GiftCard[]; refreshedAt: Date | null } {
    return { cards: [...this.cards.values()], refreshedAt: this.refreshedAt };
  }

  /** Fetches the catalog from the partner and stores it; false when the partner did not give it. */
  refresh(): Promise<boolean> {
    this.inflight ??= this.doRefresh().finally(() => (this.inflight = undefined));
    return this.inflight;
  }

  private async doRefresh(): Promise<boolean> {
    const out = await this.partner.listGiftCards();
    if (out.kind !== 'success') {
      this.log.warn({ outcome: out.kind, message: out.message }, 'catalog refresh failed; keeping the cached catalog');
      return false;
    }
    this.cards = new Map(out.value.map((c) => [c.code, c]));
    this.refreshedAt = new Date();
    await this.pool
      .query(
        `WITH incoming AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(code text, data jsonb)),
              upserted AS (INSERT INTO catalog_gift_cards (code, data, refreshed_at) SELECT code, data, now() FROM incoming
                           ON CONFLICT (code) DO UPDATE SET data = EXCLUDED.data, refreshed_at = EXCLUDED.refreshed_at)
         DELETE FROM catalog_gift_cards WHERE code NOT IN (SELECT code FROM incoming)`,
        [JSON.stringify(out.value.map((c) => ({ code: c.code, data: c })))],
      )
      .catch((error: Error) => this.log.warn({ err: error.message }, 'could not store the catalog in Postgres'));
    return true;
  }

  private async loadFromDatabase(): Promise<void> {
    const { rows } = await this.pool.query<{ data: GiftCard; refreshed_at: Date }>('SELECT data, refreshed_at FROM catalog_gift_cards');
    this.cards = new Map(rows.map((r) => [r.data.code, r.data]));
    this.refreshedAt = rows.reduce<Date | null>((min, r) => (!min || r.refreshed_at < min ? r.refreshed_at : min), null);
    this.log.warn({ cards: rows.length }, 'partner unreachable at start: validating orders against the catalog stored in Postgres');
  }
}
