import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '@cardpull/db';
import { catalogSnapshot, type GiftCard } from '@cardpull/partner-client';

export interface StoredCatalog {
  cards: GiftCard[];
  /** When the oldest stored gift card was read from the partner (null when none is stored). */
  refreshedAt: Date | null;
}

/** The partner's catalog as last read, kept in Postgres so an API that starts while the partner is unreachable still validates orders. */
@Injectable()
export class CatalogRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /**
   * Replaces the stored catalog with `cards` (gift cards no longer listed are removed), and keeps each gift
   * card's content as a catalog snapshot (once per distinct content: what orders are accepted against), in
   * one statement.
   */
  async replace(cards: GiftCard[]): Promise<void> {
    await this.pool.query(
      `WITH incoming AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(code text, data jsonb)),
            snapshots AS (INSERT INTO catalog_snapshots (id, gift_card_code, name, brand, face_values, terms_digest, discount, next_discounts)
                          SELECT id, gift_card_code, name, brand, face_values, terms_digest, discount, next_discounts
                          FROM jsonb_to_recordset($2::jsonb) AS s(id text, gift_card_code text, name text, brand text, face_values jsonb,
                                                                  terms_digest text, discount float8, next_discounts jsonb)
                          ON CONFLICT (id) DO NOTHING),
            upserted AS (INSERT INTO catalog_gift_cards (code, data, refreshed_at) SELECT code, data, now() FROM incoming
                         ON CONFLICT (code) DO UPDATE SET data = EXCLUDED.data, refreshed_at = EXCLUDED.refreshed_at)
       DELETE FROM catalog_gift_cards WHERE code NOT IN (SELECT code FROM incoming)`,
      [JSON.stringify(cards.map((c) => ({ code: c.code, data: c }))), JSON.stringify(cards.map(snapshotRow))],
    );
  }

  async all(): Promise<StoredCatalog> {
    const { rows } = await this.pool.query<{ data: GiftCard; refreshed_at: Date }>('SELECT data, refreshed_at FROM catalog_gift_cards');
    const refreshedAt = rows.reduce<Date | null>((min, r) => (!min || r.refreshed_at < min ? r.refreshed_at : min), null);
    return { cards: rows.map((r) => r.data), refreshedAt };
  }
}

function snapshotRow(giftCard: GiftCard) {
  const s = catalogSnapshot(giftCard);
  return { id: s.id, gift_card_code: s.giftCardCode, name: s.name, brand: s.brand, face_values: s.faceValues, terms_digest: s.termsDigest, discount: s.discount, next_discounts: s.nextDiscounts };
}
