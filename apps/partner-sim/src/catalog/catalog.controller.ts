import { Controller, Get, Param, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ok, type SimAnswer } from '../common/answer';
import { PartnerError } from '../common/partner-error';
import { SignatureGuard } from '../auth/signature.guard';
import { ResponderService } from '../faults/responder.service';
import { SimStateService } from '../state/sim-state.service';
import { FaultRegistry } from '../faults/fault-registry';
import { inventoryOf, unlimitedInventory } from './inventory';
import type { GiftCard } from '@cardpull/partner-client';

/**
 * The read-only partner endpoints. Their errors are not shown by the spec; our choice: an unknown gift card
 * code (the :id of both GET /gift_cards/:id and GET /inventories/:id) is 404 gift_card_not_found.
 */
@Controller('partners/v1')
@UseGuards(SignatureGuard)
export class CatalogController {
  constructor(
    private readonly state: SimStateService,
    private readonly responder: ResponderService,
    private readonly faults: FaultRegistry,
  ) {}

  @Get('gift_cards')
  list(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.responder.read(req, reply, { kind: 'read' }, () => ok([...this.state.world.giftCards.values()].map((g) => this.shown(g))));
  }

  @Get('gift_cards/:id')
  show(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('id') code: string): Promise<void> {
    return this.responder.read(req, reply, { kind: 'read', giftCardCode: code }, () => {
      const giftCard = this.state.world.giftCards.get(code);
      return giftCard ? ok(this.shown(giftCard)) : notFound(code);
    });
  }

  @Get('inventories/:id')
  inventory(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('id') code: string): Promise<void> {
    const ctx = { kind: 'read' as const, giftCardCode: code };
    return this.responder.read(req, reply, ctx, () => {
      const inventory = inventoryOf(this.state.world, code);
      if (!inventory) return notFound(code);
      // inventory_unlimited: the inventory says what unlimited stock says, whatever the stock holds (0 included).
      const limited = this.state.world.stocks.get(code)?.unlimited === false;
      if (limited && this.faults.reading(req, { ...ctx, newPull: true }, 'inventory_unlimited')) return ok(unlimitedInventory(inventory));
      return ok(inventory);
    });
  }

  @Get('balance')
  balance(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.responder.read(req, reply, { kind: 'read' }, () => {
      // balance_unit: a decimal in currency units (the default) or an integer in minor units.
      const world = this.state.world;
      return ok({ balance: { amount: this.state.readings.balance_unit === 'minor' ? world.balanceCents : world.balance } });
    });
  }

  /** discount_unit: the gift card as the catalog writes it, its discounts as fractions under the `fraction` reading. */
  private shown(giftCard: GiftCard): GiftCard {
    if (this.state.readings.discount_unit === 'percent') return giftCard;
    const fraction = (v: number) => Number((v / 100).toPrecision(12));
    return { ...giftCard, discount: fraction(giftCard.discount), next_discounts: giftCard.next_discounts.map((d) => ({ ...d, value: fraction(d.value) })) };
  }
}

const notFound = (code: string): SimAnswer => PartnerError.giftCardNotFound(code).toAnswer();
