import { Controller, Get, Inject, Param, UseGuards } from '@nestjs/common';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { PartnerSnapshots, type Snapshot } from '@cardpull/orders';
import { ApiError, ApiKeyGuard, ClientThrottlerGuard, RequireScope } from '@cardpull/platform';
import { CatalogDocs, GetBalanceDocs, GetGiftCardDocs, GetInventoryDocs, ListGiftCardsDocs } from '../docs/catalog.docs';
import { CatalogService } from './catalog.service';

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
    const { cards, refreshedAt } = this.catalog.list();
    return { gift_cards: cards, refreshed_at: refreshedAt?.toISOString() ?? null };
  }

  @Get('gift-cards/:code')
  @RequireScope('orders:read')
  @GetGiftCardDocs()
  async giftCard(@Param('code') code: string) {
    const card = await this.catalog.find(code);
    if (!card) throw new ApiError(404, 'gift_card_not_found', `Gift card ${code} not found`);
    return { gift_card: card, refreshed_at: this.catalog.list().refreshedAt?.toISOString() ?? null };
  }

  @Get('inventories/:code')
  @RequireScope('orders:read')
  @GetInventoryDocs()
  async inventory(@Param('code') code: string) {
    if (!(await this.catalog.find(code))) throw new ApiError(404, 'gift_card_not_found', `Gift card ${code} not found`);
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
}

function available<T>(snap: Snapshot<T> | null): Snapshot<T> {
  if (!snap) throw new ApiError(503, 'partner_unavailable', 'The partner did not answer and nothing is cached yet; try again shortly');
  return snap;
}
