import { Injectable, Logger } from '@nestjs/common';
import { PartnerClient, type GiftCard } from '@cardpull/partner-client';
import { CatalogRepository } from './catalog.repository';

/**
 * Reads the catalog from the partner and stores it (CatalogRepository). The worker does this every
 * CATALOG_REFRESH_INTERVAL_MS (CatalogRefresh); the API only when its Postgres copy is empty or misses a
 * gift card an order names (rate-limited there). Concurrent calls share one partner call.
 */
@Injectable()
export class CatalogSource {
  private readonly log = new Logger(CatalogSource.name);
  private inflight?: Promise<GiftCard[] | null>;

  constructor(
    private readonly partner: PartnerClient,
    private readonly catalog: CatalogRepository,
  ) {}

  /** The partner's catalog, now stored; null when the partner did not give it (the stored copy is kept). */
  refresh(): Promise<GiftCard[] | null> {
    this.inflight ??= this.load().finally(() => (this.inflight = undefined));
    return this.inflight;
  }

  private async load(): Promise<GiftCard[] | null> {
    const out = await this.partner.listGiftCards();
    if (out.kind !== 'success') {
      this.log.warn({ outcome: out.kind, message: out.message }, 'catalog refresh failed; keeping the stored catalog');
      return null;
    }
    await this.catalog.replace(out.value).catch((error: Error) => this.log.warn({ err: error.message }, 'could not store the catalog in Postgres'));
    return out.value;
  }
}
