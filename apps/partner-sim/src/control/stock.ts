import { checkAmount } from '@cardpull/partner-client';
import { PartnerError } from '../common/partner-error';
import type { SimWorld } from '../state/world';
import type { StockBody } from './control-bodies';

/**
 * PUT /_sim/stock:
 *  - quantity 'unlimited' without facial_value: the gift card gets unlimited stock;
 *  - a number with facial_value: that facial value's owned quantity (a gift card with unlimited stock becomes
 *    limited: every other fixed amount at 0, a free gift card holds only that facial value);
 *  - a number without facial_value: every amount of a fixed gift card (a free one needs facial_value).
 */
export function setStock(world: SimWorld, body: StockBody): void {
  const giftCard = world.giftCards.get(body.gift_card_code);
  if (!giftCard) throw PartnerError.giftCardNotFound(body.gift_card_code);
  const { facial_values: facialValues } = giftCard;
  if (body.quantity === 'unlimited') {
    if (body.facial_value !== undefined) {
      throw PartnerError.badRequest("quantity 'unlimited' applies to the whole gift card: leave facial_value out");
    }
    world.stocks.set(giftCard.code, { unlimited: true });
    return;
  }
  if (body.facial_value !== undefined) {
    const check = checkAmount(giftCard.code, facialValues, body.facial_value);
    if (!check.ok) throw PartnerError.badRequest(check.message);
  } else if (facialValues.type === 'free') {
    throw PartnerError.badRequest(`gift card ${giftCard.code} has free amounts: facial_value is required`);
  }
  const current = world.stocks.get(giftCard.code);
  const quantities =
    current && !current.unlimited
      ? current.quantities
      : new Map(facialValues.type === 'fixed' ? facialValues.amounts.map((a) => [a, 0] as [number, number]) : []);
  const targets = body.facial_value !== undefined ? [body.facial_value] : facialValues.type === 'fixed' ? facialValues.amounts : [];
  for (const amount of targets) quantities.set(amount, body.quantity);
  world.stocks.set(giftCard.code, { unlimited: false, quantities });
}
