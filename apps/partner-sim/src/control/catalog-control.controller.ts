import { Controller, Delete, HttpCode, Param, Patch, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { GiftCard } from '@cardpull/partner-client';
import { simGiftCardAddSchema, simGiftCardChangeSchema, type SimGiftCardInput } from '@cardpull/sim-contract';
import { plainGiftCard } from '../catalog/seed';
import { PartnerError } from '../common/partner-error';
import type { SimWorld, Stock } from '../state/world';
import { SimStateService } from '../state/sim-state.service';
import { parseControlBody } from './control-bodies';

/**
 * The partner's catalog, changed at run time (issue 25: what cardpull's catalog change feed is tested with):
 * add a gift card, withdraw one, change one's face values, PIN, discount or scheduled discounts. Registered
 * with the rest of the control API (SIM_CONTROL only); a reset restores the seed catalog.
 */
@Controller('_sim/catalog')
export class CatalogControlController {
  constructor(private readonly state: SimStateService) {}

  /** Adds a gift card (409 `gift_card_exists` for a code listed already); answers it as the catalog shows it. */
  @Post('gift-cards')
  @HttpCode(201)
  add(@Req() req: FastifyRequest): GiftCard {
    const body = parseControlBody(req, simGiftCardAddSchema);
    const world = this.state.world;
    if (world.giftCards.has(body.code)) throw new PartnerError(409, 'gift_card_exists', `Gift card ${body.code} is in the catalog already: change it with PATCH`);
    const giftCard = newGiftCard(body);
    world.giftCards.set(giftCard.code, giftCard);
    world.stocks.set(giftCard.code, initialStock(giftCard, body.stock));
    return giftCard;
  }

  /** Changes the fields given; answers the gift card as it is now. */
  @Patch('gift-cards/:code')
  change(@Req() req: FastifyRequest, @Param('code') code: string): GiftCard {
    const body = parseControlBody(req, simGiftCardChangeSchema);
    const world = this.state.world;
    const giftCard = known(world, code);
    if (body.facial_values) restock(world, giftCard, body.facial_values);
    Object.assign(giftCard, body);
    return giftCard;
  }

  /** Withdraws a gift card from the catalog (its stock goes too; cards issued before stay in the ledger). */
  @Delete('gift-cards/:code')
  @HttpCode(204)
  remove(@Param('code') code: string): void {
    const world = this.state.world;
    known(world, code);
    world.giftCards.delete(code);
    world.stocks.delete(code);
  }
}

function known(world: SimWorld, code: string): GiftCard {
  const giftCard = world.giftCards.get(code);
  if (!giftCard) throw PartnerError.giftCardNotFound(code);
  return giftCard;
}

/** A whole Gift card resource from the few fields a test names; the rest plain (no country, no usage text). */
function newGiftCard(body: ReturnType<typeof simGiftCardAddSchema.parse>): GiftCard {
  return plainGiftCard({
    code: body.code,
    name: body.name ?? `${body.code} gift card`,
    brand: body.brand ?? body.code,
    facial_values: body.facial_values,
    term_of_use: 'Added through the simulator control API.',
    code_pin: body.code_pin ?? false,
    discount: body.discount ?? 0,
    next_discounts: body.next_discounts ?? [],
  });
}

function initialStock(giftCard: GiftCard, stock: SimGiftCardInput['stock']): Stock {
  if (stock === undefined || stock === 'unlimited' || giftCard.facial_values.type === 'free') return { unlimited: true };
  return { unlimited: false, quantities: new Map(giftCard.facial_values.amounts.map((a) => [a, stock])) };
}

/** Limited stock follows new fixed face values: withdrawn amounts leave it, new ones start at 0 (free amounts keep theirs). */
function restock(world: SimWorld, giftCard: GiftCard, facialValues: GiftCard['facial_values']): void {
  const stock = world.stocks.get(giftCard.code);
  if (!stock || stock.unlimited || facialValues.type === 'free') return;
  world.stocks.set(giftCard.code, { unlimited: false, quantities: new Map(facialValues.amounts.map((a) => [a, stock.quantities.get(a) ?? 0])) });
}
