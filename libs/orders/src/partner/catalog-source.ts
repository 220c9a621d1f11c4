import { Inject, Injectable, Logger } from '@nestjs/common';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { PartnerClient, type GiftCard } from '@cardpull/partner-client';
import { CallbackQueue } from '../callbacks';
import { CatalogRepository } from './catalog.repository';

/**
 * Reads the catalog from the partner and stores it (CatalogRepository), recording what changed since the
 * stored one (issue 25). The worker does this every CATALOG_REFRESH_INTERVAL_MS (CatalogRefresh); the API
 * only when its Postgres copy is empty or misses a gift card an order names (rate-limited there). Concurrent
 * calls share one partner call.
 */
@Injectable()
export class CatalogSource {
  private readonly log = new Logger(CatalogSource.name);
  private inflight?: Promise<GiftCard[] | null>;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: Pick<ServiceConfig, 'CATALOG_DISCOUNT_CHANGE_THRESHOLD' | 'CALLBACK_URLS'>,
    private readonly partner: PartnerClient,
    private readonly catalog: CatalogRepository,
    private readonly callbackQueue: CallbackQueue,
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
    if (!out.value.length) {
      // A partner that lists nothing is far likelier broken than out of business: storing it would record
      // every gift card as withdrawn and refuse every order. It counts as a failed read.
      this.log.warn('catalog refresh: the partner listed no gift card; taken for a failed read, keeping the stored catalog');
      return null;
    }
    await this.store(out.value).catch((error: Error) => this.log.warn({ err: error.message }, 'could not store the catalog in Postgres'));
    return out.value;
  }

  private async store(cards: GiftCard[]): Promise<void> {
    const stored = await this.catalog.replace(cards, { discountThreshold: this.config.CATALOG_DISCOUNT_CHANGE_THRESHOLD, callbackUrls: this.config.CALLBACK_URLS });
    if (!stored.changes.length) return;
    this.log.log(
      { catalogChanges: stored.changes.map((c) => `${c.kind} ${c.giftCardCode}`), batchId: stored.changes[0]!.batchId, events: stored.eventIds.length },
      `the partner's catalog changed: ${stored.changes.length} change(s)`,
    );
    if (stored.withoutUrl.length) {
      this.log.warn({ clients: stored.withoutUrl }, 'clients subscribed to catalog.changed have no CALLBACK_URLS entry any more: not sent to them');
    }
    // After the commit (the events are in the outbox already): a lost enqueue only waits for the sweeper.
    await this.callbackQueue.enqueue(stored.eventIds.map((id) => ({ id })));
  }
}
