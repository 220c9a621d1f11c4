import { createHash } from 'node:crypto';
import type { GiftCard } from './types';

/**
 * What a card costs us: its face value less the gift card's discount in force when it is pulled. The spec
 * shows `discount` as a number and `balance.amount` as a decimal, without their units; these are settings
 * (PARTNER_DISCOUNT_UNIT, PARTNER_BALANCE_UNIT) with the readings below as defaults:
 *  - `percent` (default): 3.5 means 3.5 % off the face value; `fraction`: 0.035 means the same;
 *  - the balance: `major` (default), a decimal in currency units (25.00 is 2500 minor units); `minor`, an
 *    integer in minor units.
 * A value the partner sends that contradicts the unit (a discount above 100 %, a negative one, a fraction
 * above 1, a minor-unit balance with decimals) is refused (PricingRefused): no money is computed with it.
 *
 * Money is integers: the discount becomes parts per million (ppm, 3.5 % = 35 000), and the cost is the face
 * value less the discount rounded half up, `face - floor((face * ppm + 500000) / 1000000)`, the same
 * integer formula as the ledger's triggers in Postgres, so the two never differ by a rounding.
 */
export type DiscountUnit = 'percent' | 'fraction';
export type BalanceUnit = 'major' | 'minor';

/** A value that cannot be read in the configured unit: no money is computed with it. */
export class PricingRefused extends Error {
  constructor(
    message: string,
    /** The setting an operator should check. */
    readonly setting: 'PARTNER_DISCOUNT_UNIT' | 'PARTNER_BALANCE_UNIT',
  ) {
    super(message);
  }
}

const PPM = 1_000_000;

/** A discount as the partner sends it, in parts per million of the face value (throws PricingRefused). */
export function discountPpm(value: number, unit: DiscountUnit): number {
  const whole = unit === 'percent' ? 100 : 1;
  if (!Number.isFinite(value) || value < 0 || value > whole) {
    throw new PricingRefused(`a discount of ${value} cannot be read as a ${unit} (0 to ${whole}); check PARTNER_DISCOUNT_UNIT`, 'PARTNER_DISCOUNT_UNIT');
  }
  return Math.round(unit === 'percent' ? value * 10_000 : value * PPM);
}

/**
 * The discount in force at `at`: the latest of `next_discounts` whose date has come, else `discount` (a
 * catalog read before a scheduled change still prices a pull after it correctly).
 */
export function discountInForce(giftCard: Pick<GiftCard, 'discount' | 'next_discounts'>, at: Date): number {
  let value = giftCard.discount;
  let since = -Infinity;
  for (const next of giftCard.next_discounts ?? []) {
    const when = Date.parse(next.date);
    if (Number.isFinite(when) && when <= at.getTime() && when > since) {
      since = when;
      value = next.value;
    }
  }
  return value;
}

/** The cost of a card of `face` minor units at `ppm` discount, in minor units (rounded half up, integers only). */
export function costOf(face: number, ppm: number): number {
  return face - Math.floor((face * ppm + PPM / 2) / PPM);
}

/** A balance as the partner sends it, in minor units (throws PricingRefused). */
export function balanceMinor(amount: number, unit: BalanceUnit): number {
  if (!Number.isFinite(amount)) throw new PricingRefused(`a balance of ${amount} is not a number`, 'PARTNER_BALANCE_UNIT');
  if (unit === 'minor') {
    if (!Number.isInteger(amount)) throw new PricingRefused(`a balance of ${amount} has decimals: it cannot be in minor units; check PARTNER_BALANCE_UNIT`, 'PARTNER_BALANCE_UNIT');
    return amount;
  }
  return Math.round(amount * 100);
}

/** A gift card's catalog snapshot: what an order was accepted against (kept once per distinct content). */
export interface CatalogSnapshot {
  /** sha-256 of the content below (hex, 32 characters): the same gift card content always has the same id. */
  id: string;
  giftCardCode: string;
  name: string;
  brand: string;
  faceValues: GiftCard['facial_values'];
  /** sha-256 of the terms of use (hex): the terms are long, what they were is provable by this. */
  termsDigest: string;
  discount: number;
  nextDiscounts: GiftCard['next_discounts'];
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export function catalogSnapshot(giftCard: GiftCard): CatalogSnapshot {
  const content = {
    giftCardCode: giftCard.code,
    name: giftCard.name,
    brand: giftCard.brand,
    faceValues: giftCard.facial_values,
    termsDigest: sha256(giftCard.term_of_use ?? ''),
    discount: giftCard.discount,
    nextDiscounts: giftCard.next_discounts ?? [],
  };
  return { id: sha256(JSON.stringify(content)).slice(0, 32), ...content };
}
