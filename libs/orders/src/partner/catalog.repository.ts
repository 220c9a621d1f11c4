import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Pool, PoolClient } from 'pg';
import { PG_POOL, withTransaction } from '@cardpull/db';
import { catalogSnapshot, type GiftCard } from '@cardpull/partner-client';
import { CallbacksRepository, SubscriptionsRepository } from '../callbacks';
import { CATALOG_CHANGE_COLUMNS, catalogChangeView, type CatalogChangeRow } from './catalog-changes.repository';
import { diffCatalog, type StoredGiftCard } from './catalog-diff';

export interface StoredCatalog {
  cards: GiftCard[];
  /** When the oldest stored gift card was read from the partner (null when none is stored). */
  refreshedAt: Date | null;
}

export interface CatalogStoreOptions {
  /** CATALOG_DISCOUNT_CHANGE_THRESHOLD: a smaller move of a discount is not a change. */
  discountThreshold: number;
  /** CALLBACK_URLS: where each subscribed client's `catalog.changed` goes. */
  callbackUrls: ReadonlyMap<string, string>;
}

/** What one store recorded: its changes, the `catalog.changed` events written (to enqueue), the subscribers without a URL. */
export interface CatalogStored {
  changes: CatalogChangeRow[];
  eventIds: string[];
  withoutUrl: string[];
}

/**
 * Transaction-scoped: every store of the catalog (the worker's refresh, an API's read on a miss) takes it, so
 * two stores never compare against the same stored catalog and record one change twice.
 */
const STORE_LOCK = `SELECT pg_advisory_xact_lock(hashtextextended('cardpull:catalog-store', 0))`;

/** The partner's catalog as last read, kept in Postgres so an API that starts while the partner is unreachable still validates orders. */
@Injectable()
export class CatalogRepository {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly callbacks: CallbacksRepository,
    private readonly subscriptions: SubscriptionsRepository,
  ) {}

  /**
   * Replaces the stored catalog with `cards` (gift cards no longer listed are removed), keeps each gift card's
   * content as a catalog snapshot (once per distinct content: what orders are accepted against), and records
   * what changed since the stored catalog (issue 25, `diffCatalog`) with one signed `catalog.changed` event per
   * subscribed client in the callbacks' outbox: all in one transaction, under a lock that serialises stores.
   * The first store into an empty table records no change.
   */
  async replace(cards: GiftCard[], options: CatalogStoreOptions): Promise<CatalogStored> {
    // One entry per code (the last one read): a code twice in one answer is one gift card.
    const incoming = [...new Map(cards.map((c) => [c.code, c])).values()];
    return withTransaction(this.pool, async (tx) => {
      await tx.query(STORE_LOCK);
      const { rows: current } = await tx.query<{ code: string; data: GiftCard; announced: number | null }>(
        'SELECT code, data, announced_discount AS announced FROM catalog_gift_cards',
      );
      const stored = new Map<string, StoredGiftCard>(current.map((r) => [r.code, { giftCard: r.data, announcedDiscount: r.announced }]));
      const diff = diffCatalog(stored, incoming, options.discountThreshold);
      await tx.query(
        `WITH incoming AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(code text, data jsonb, announced float8)),
              snapshots AS (INSERT INTO catalog_snapshots (id, gift_card_code, name, brand, face_values, terms_digest, discount, next_discounts)
                            SELECT id, gift_card_code, name, brand, face_values, terms_digest, discount, next_discounts
                            FROM jsonb_to_recordset($2::jsonb) AS s(id text, gift_card_code text, name text, brand text, face_values jsonb,
                                                                    terms_digest text, discount float8, next_discounts jsonb)
                            ON CONFLICT (id) DO NOTHING),
              upserted AS (INSERT INTO catalog_gift_cards (code, data, refreshed_at, announced_discount) SELECT code, data, now(), announced FROM incoming
                           ON CONFLICT (code) DO UPDATE SET data = EXCLUDED.data, refreshed_at = EXCLUDED.refreshed_at, announced_discount = EXCLUDED.announced_discount)
         DELETE FROM catalog_gift_cards WHERE code NOT IN (SELECT code FROM incoming)`,
        [
          JSON.stringify(incoming.map((c) => ({ code: c.code, data: c, announced: diff.announced.get(c.code) ?? c.discount }))),
          JSON.stringify(incoming.map(snapshotRow)),
        ],
      );
      if (!diff.changes.length) return { changes: [], eventIds: [], withoutUrl: [] };
      const { rows: changes } = await tx.query<CatalogChangeRow>(
        `INSERT INTO catalog_changes (batch_id, gift_card_code, kind, before, after, detail)
         SELECT $1, x.code, x.kind, x.before, x.after, x.detail FROM jsonb_to_recordset($2::jsonb) AS x(n int, code text, kind text, before jsonb, after jsonb, detail jsonb)
         ORDER BY x.n
         RETURNING ${CATALOG_CHANGE_COLUMNS}`,
        [randomUUID(), JSON.stringify(diff.changes.map((c, n) => ({ n, code: c.giftCardCode, kind: c.kind, before: c.before, after: c.after, detail: c.detail })))],
      );
      changes.sort((a, b) => Number(a.id) - Number(b.id));
      return { changes, ...(await this.announce(tx, changes, options.callbackUrls)) };
    });
  }

  async all(): Promise<StoredCatalog> {
    const { rows } = await this.pool.query<{ data: GiftCard; refreshed_at: Date }>('SELECT data, refreshed_at FROM catalog_gift_cards');
    const refreshedAt = rows.reduce<Date | null>((min, r) => (!min || r.refreshed_at < min ? r.refreshed_at : min), null);
    return { cards: rows.map((r) => r.data), refreshedAt };
  }

  /** One `catalog.changed` per subscribed client with a callback URL, in the store's transaction (the outbox's rule). */
  private async announce(tx: PoolClient, changes: CatalogChangeRow[], urls: ReadonlyMap<string, string>): Promise<Omit<CatalogStored, 'changes'>> {
    const subscribers = await this.subscriptions.subscribers('catalog.changed', tx);
    const to = subscribers.flatMap((client) => (urls.has(client) ? [{ client, url: urls.get(client)! }] : []));
    const payload = { detected_at: changes[0]!.detectedAt.toISOString(), changes: changes.map(catalogChangeView) };
    const eventIds = await this.callbacks.addAccountEvents('catalog.changed', payload, to, tx);
    return { eventIds, withoutUrl: subscribers.filter((client) => !urls.has(client)) };
  }
}

function snapshotRow(giftCard: GiftCard) {
  const s = catalogSnapshot(giftCard);
  return { id: s.id, gift_card_code: s.giftCardCode, name: s.name, brand: s.brand, face_values: s.faceValues, terms_digest: s.termsDigest, discount: s.discount, next_discounts: s.nextDiscounts };
}
