import { Controller, Get, Inject, Param, UseGuards } from '@nestjs/common';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { PartnerSnapshots, type Snapshot } from '@cardpull/orders';
import type { GiftCard } from '@cardpull/partner-client';
import { ApiError, ApiKeyGuard, ClientThrottlerGuard, RequireScope } from '@cardpull/platform';
import { CatalogDocs, GetBalanceDocs, GetGiftCardDocs, GetInventoryDocs, ListGiftCardsDocs } from '../docs/catalog.docs';
import { CatalogService, catalogUnavailable, giftCardNotFound } from './catalog.service';

/**
 * The partner's catalog, inventories and balance through our caches: the catalog (refreshed every
 * CATALOG_REFRESH_INTERVAL_MS), the balance and inventories (PARTNER_CACHE_TTL_MS). Each answer says when
 * the data was fetched and whether it is a stale copy (the partner could not be asked).
 */
@Controller('v1')
@UseGuards(ApiKeyGuard, ClientThrottlerGuard)
@CatalogDocs()
export class CatalogController {
  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: Pick<ServiceConfig, 'LOW_BALANCE_THRESHOLD'>,
    private readonly catalog: CatalogService,
    private readonly snapshots: PartnerSnapshots,
  ) {}

  @Get('gift-cards')
  @RequireScope('orders:read')
  @ListGiftCardsDocs()
  giftCards() {
    // No catalog read yet: an empty list would tell a checkout there is nothing to sell (issue 25).
    const catalog = this.catalog.list();
    if (!catalog) throw catalogUnavailable();
    return { gift_cards: catalog.cards, refreshed_at: catalog.refreshedAt?.toISOString() ?? null };
  }

  @Get('gift-cards/:code')
  @RequireScope('orders:read')
  @GetGiftCardDocs()
  async giftCard(@Param('code') code: string) {
    const giftCard = await this.known(code);
    return { gift_card: giftCard, refreshed_at: this.catalog.list()?.refreshedAt?.toISOString() ?? null };
  }

  @Get('inventories/:code')
  @RequireScope('orders:read')
  @GetInventoryDocs()
  async inventory(@Param('code') code: string) {
    await this.known(code);
    const snap = available(await this.snapshots.inventory(code));
    return { ...snap.data, fetched_at: snap.fetchedAt.toISOString(), stale: snap.stale };
  }

  @Get('balance')
  @RequireScope('orders:read')
  @GetBalanceDocs()
  async balance() {
    const snap = available(await this.snapshots.balance());
    return {
      ...snap.data,
      fetched_at: snap.fetchedAt.toISOString(),
      stale: snap.stale,
      low: snap.data.balance.amount < this.config.LOW_BALANCE_THRESHOLD,
      low_balance_threshold: this.config.LOW_BALANCE_THRESHOLD,
    };
  }

  /** The gift card, or 404 (with when it was withdrawn), or 503 catalog_unavailable when the catalog could not be read. */
  private async known(code: string): Promise<GiftCard> {
    const answer = await this.catalog.find(code);
    if (answer.kind !== 'found') throw giftCardNotFound(code, answer);
    return answer.giftCard;
  }
}

function available<T>(snap: Snapshot<T> | null): Snapshot<T> {
  if (!snap) throw new ApiError(503, 'partner_unavailable', 'The partner did not answer and nothing is cached yet; try again shortly');
  return snap;
}
