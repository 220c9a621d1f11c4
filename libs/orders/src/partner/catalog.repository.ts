import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '@cardpull/db';
import type { GiftCard } from '@cardpull/partner-client';

export interface StoredCatalog {
  cards: GiftCard[];
  /** When the oldest stored gift card was read from the partner (null when none is stored). */
  refreshedAt: Date | null;
}

/** The partner's catalog as last read, kept in Postgres so an API that starts while the partner is unreachable still validates orders. */
@Injectable()
export class CatalogRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** Replaces the stored catalog with `cards` (gift cards no longer listed are removed), in one statement. */
  async replace(cards: GiftCard[]): Promise<void> {
    await this.pool.query(
      `WITH incoming AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(code text, data jsonb)),
            upserted AS (INSERT INTO catalog_gift_cards (code, data, refreshed_at) SELECT code, data, now() FROM incoming
                         ON CONFLICT (code) DO UPDATE SET data = EXCLUDED.data, refreshed_at = EXCLUDED.refreshed_at)
       DELETE FROM catalog_gift_cards WHERE code NOT IN (SELECT code FROM incoming)`,
      [JSON.stringify(cards.map((c) => ({ code: c.code, data: c })))],
    );
  }

  async all(): Promise<StoredCatalog> {
    const { rows } = await this.pool.query<{ data: GiftCard; refreshed_at: Date }>('SELECT data, refreshed_at FROM catalog_gift_cards');
    const refreshedAt = rows.reduce<Date | null>((min, r) => (!min || r.refreshed_at < min ? r.refreshed_at : min), null);
    return { cards: rows.map((r) => r.data), refreshedAt };
  }
}
