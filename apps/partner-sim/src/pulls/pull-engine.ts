import type { GiftCard } from '@cardpull/partner-client';
import { checkAmount } from '@cardpull/partner-client';
import type { ParsedBody } from '../common/request-context';
import { PartnerError } from '../common/partner-error';
import { BROKEN_GIFT_CARD_CODES } from '../catalog/seed';
import type { SimWorld } from '../state/world';

export interface PullOrder {
  giftCard: GiftCard;
  amount: number;
}

/**
 * The body's wrapper object (`card` or `pull_request`). A body that is not JSON, or has no such object, is
 * answered 400 with the envelope, code and status `bad_request` (not in the spec's table; our choice).
 */
export function unwrapBody(body: ParsedBody, wrapper: 'card' | 'pull_request'): Record<string, unknown> {
  if (body.kind !== 'json') {
    throw PartnerError.badRequest(body.kind === 'none' ? 'Request body is missing' : 'Request body is not valid JSON');
  }
  const inner = (body.value as Record<string, unknown> | null)?.[wrapper];
  if (inner === null || typeof inner !== 'object' || Array.isArray(inner)) {
    throw PartnerError.badRequest(`Request body must be a JSON object with a "${wrapper}" object`);
  }
  return inner as Record<string, unknown>;
}

/**
 * Whether a pull can go ahead. The spec does not show the order of its checks; ours:
 *   gift card unknown or missing (404 gift_card_not_found, message names the code)
 *   -> amount missing, not an integer or not allowed (422 invalid_amount, message from checkAmount, shared
 *      with the API so both agree)
 *   -> out of stock (422 out_of_stock) -> balance too low (422 not_enough_funds).
 */
export function checkPull(world: SimWorld, giftCardCode: unknown, amount: unknown): PullOrder | PartnerError {
  const giftCard = typeof giftCardCode === 'string' ? world.giftCards.get(giftCardCode) : undefined;
  if (!giftCard) return PartnerError.giftCardNotFound(giftCardCode);
  if (typeof amount !== 'number') {
    return new PartnerError(422, 'invalid_amount', 'amount is required and must be an integer (minor units)');
  }
  const check = checkAmount(giftCard.code, giftCard.facial_values, amount);
  if (!check.ok) return new PartnerError(422, 'invalid_amount', check.message);
  if (!world.inStock(giftCard.code, amount)) {
    return new PartnerError(422, 'out_of_stock', `Gift card ${giftCard.code} is out of stock for amount ${amount}`);
  }
  const cost = world.costOf(giftCard.code, amount);
  if (world.balanceCents < cost) {
    return new PartnerError(
      422,
      'not_enough_funds',
      `Not enough funds: balance ${world.balance.toFixed(2)}, card ${(cost / 100).toFixed(2)}`,
    );
  }
  return { giftCard, amount };
}

/** Staging's brand whose pulls never work (spec: staging may have card-pulling that does not work for some brands). */
export const isBrokenBrand = (giftCard: GiftCard): boolean => BROKEN_GIFT_CARD_CODES.has(giftCard.code);

/** Sync pull of a broken brand: 503 with the envelope (a status the spec does not show; our choice). */
export const brokenBrandError = (giftCard: GiftCard): PartnerError =>
  new PartnerError(503, 'service_unavailable', `Pulling ${giftCard.brand} cards does not work at the moment`);

/** Base of the card's pdf_url: SIM_PUBLIC_BASE_URL when set, otherwise the address the caller used. */
export function publicBase(configured: string | undefined, host: string | undefined): string {
  return configured ? configured.replace(/\/$/, '') : `http://${host ?? 'localhost'}`;
}
