import { Controller, Get, Param, UseGuards } from '@nestjs/common';
import { PartnerClient, type PartnerOutcome } from '@cardpull/partner-client';
import { ApiError } from '@cardpull/platform';
import { ApiKeyGuard, RequireScope } from '../auth/api-key.guard';
import { CatalogService } from './catalog.service';

/** The partner's catalog, inventories and balance, through our cache (catalog) or a direct read. */
@Controller('v1')
@UseGuards(ApiKeyGuard)
export class CatalogController {
  constructor(
    private readonly catalog: CatalogService,
    private readonly partner: PartnerClient,
  ) {}

  @Get('gift-cards')
  @RequireScope('orders:read')
  giftCards() {
    const { cards, refreshedAt } = this.catalog.list();
    return { gift_cards: cards, refreshed_at: refreshedAt?.toISOString() ?? null };
  }

  @Get('gift-cards/:code')
  @RequireScope('orders:read')
  async giftCard(@Param('code') code: string) {
    const card = await this.catalog.find(code);
    if (!card) throw new ApiError(404, 'gift_card_not_found', `Gift card ${code} not found`);
    return { gift_card: card };
  }

  @Get('inventories/:code')
  @RequireScope('orders:read')
  async inventory(@Param('code') code: string) {
    return unwrap(await this.partner.getInventory(code));
  }

  @Get('balance')
  @RequireScope('orders:read')
  async balance() {
    return unwrap(await this.partner.getBalance());
  }
}

function unwrap<T>(out: PartnerOutcome<T>): T {
  if (out.kind === 'success') return out.value;
  if (out.kind === 'definitive' && out.code === 'gift_card_not_found') throw new ApiError(404, out.code, out.message);
  throw new ApiError(503, 'partner_unavailable', `The partner did not answer usefully (${out.kind}): ${out.message}`);
}
