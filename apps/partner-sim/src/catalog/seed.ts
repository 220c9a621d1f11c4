import type { GiftCard } from '@cardpull/partner-client';

/**
 * The simulator's catalog. The codes are fixed: tests, the chaos run and the benchmark rely on them.
 * Each entry fills every field of the spec's Gift card resource, with the variations the spec allows
 * (fixed and free amounts, PIN or not, single country, region, no country, empty and non-empty
 * next_discounts, HTML usage text or null).
 */

/** Stock seed: `unlimited`, or owned quantity per facial value (minor units). */
export type StockSeed = 'unlimited' | Record<number, number>;

export interface CatalogEntry {
  giftCard: GiftCard;
  stock: StockSeed;
}

/** Gift cards whose pulls never work (staging only, as the spec warns staging may do for some brands). */
export const BROKEN_GIFT_CARD_CODES: ReadonlySet<string> = new Set(['STG-BROKEN']);

const logo = (slug: string) => ({
  logo_url: `https://cdn.partner-sim.invalid/logos/${slug}.png`,
  logo_square_url: `https://cdn.partner-sim.invalid/logos/${slug}-square.png`,
});

const acmeBooks: CatalogEntry = {
  giftCard: {
    name: 'Acme Books gift card',
    code: 'ACME-BOOKS-FIXED',
    brand: 'Acme Books',
    barcode_symbology: 'code128',
    online_usable: true,
    offline_usable: true,
    validity_period: 365,
    cumulative_online: true,
    cumulative_online_limit: -1,
    cumulative_offline: true,
    cumulative_offline_limit: 3,
    splittable_online: true,
    splittable_offline: false,
    code_pin: true,
    how_to_use_online:
      '<p>Redeem your card at checkout on acme-books.example:</p><ul><li>Enter the card code</li><li>Enter the PIN</li></ul>',
    how_to_use_offline: 'Show the barcode at the till of any Acme Books store.',
    term_of_use: 'Valid for 12 months from issue.\nNot exchangeable for cash. <strong>No refunds.</strong>',
    discount: 3.5,
    next_discounts: [
      { value: 4, date: '2027-01-01T00:00:00.000+01:00' },
      { value: 3, date: '2027-03-01T00:00:00.000+01:00' },
    ],
    facial_values: { type: 'fixed', amounts: [1000, 2500, 5000, 10000] },
    ...logo('acme-books'),
    country_name: 'France',
    country_code: 'FR',
  },
  stock: { 1000: 500, 2500: 500, 5000: 200, 10000: 50 },
};

const novaGames: CatalogEntry = {
  giftCard: {
    name: 'Nova Games e-gift',
    code: 'NOVA-GAMES-FREE',
    brand: 'Nova Games',
    barcode_symbology: 'qrcode',
    online_usable: true,
    offline_usable: false,
    validity_period: 730,
    cumulative_online: false,
    cumulative_online_limit: 0,
    cumulative_offline: false,
    cumulative_offline_limit: 0,
    splittable_online: false,
    splittable_offline: false,
    code_pin: false,
    how_to_use_online: null,
    how_to_use_offline: null,
    term_of_use: 'Usable on the Nova Games store only.',
    discount: 2,
    next_discounts: [],
    facial_values: { type: 'free', min_amount: 500, max_amount: 50000, step_amount: 100 },
    ...logo('nova-games'),
    country_name: null,
    country_code: null,
  },
  stock: 'unlimited',
};

const euroTravel: CatalogEntry = {
  giftCard: {
    name: 'Euro Travel voucher',
    code: 'EURO-TRAVEL-REGION',
    brand: 'Euro Travel',
    barcode_symbology: 'ean13',
    online_usable: true,
    offline_usable: true,
    validity_period: 540,
    cumulative_online: true,
    cumulative_online_limit: 2,
    cumulative_offline: true,
    cumulative_offline_limit: -1,
    splittable_online: true,
    splittable_offline: true,
    code_pin: true,
    how_to_use_online: '<p>Book on euro-travel.example and pay with:</p><ul><li>the voucher code</li><li>its PIN</li></ul>',
    how_to_use_offline: 'Present the voucher at any Euro Travel agency.',
    term_of_use: '<p>Valid in France, Germany, Spain and Italy.</p>',
    discount: 5,
    next_discounts: [{ value: 6.5, date: '2027-06-01T00:00:00.000+02:00' }],
    facial_values: { type: 'fixed', amounts: [2000, 5000] },
    ...logo('euro-travel'),
    country_name: 'Europe',
    country_code: 'EU',
    countries: [
      { country_name: 'France', country_code: 'FR' },
      { country_name: 'Germany', country_code: 'DE' },
      { country_name: 'Spain', country_code: 'ES' },
      { country_name: 'Italy', country_code: 'IT' },
    ],
  },
  stock: 'unlimited',
};

const goneShoes: CatalogEntry = {
  giftCard: {
    name: 'Gone Shoes gift card',
    code: 'SOLD-OUT-FIXED',
    brand: 'Gone Shoes',
    barcode_symbology: 'code128',
    online_usable: false,
    offline_usable: true,
    validity_period: 365,
    cumulative_online: false,
    cumulative_online_limit: 0,
    cumulative_offline: true,
    cumulative_offline_limit: -1,
    splittable_online: false,
    splittable_offline: false,
    code_pin: true,
    how_to_use_online: null,
    how_to_use_offline: 'In store only.',
    term_of_use: 'Not refundable.',
    discount: 1,
    next_discounts: [],
    facial_values: { type: 'fixed', amounts: [1000, 2000] },
    ...logo('gone-shoes'),
    country_name: 'Germany',
    country_code: 'DE',
  },
  stock: { 1000: 0, 2000: 0 },
};

const fastLane: CatalogEntry = {
  giftCard: {
    name: 'Fast Lane card',
    code: 'FAST-FREE',
    brand: 'Fast Lane',
    barcode_symbology: 'code128',
    online_usable: true,
    offline_usable: true,
    validity_period: 365,
    cumulative_online: true,
    cumulative_online_limit: -1,
    cumulative_offline: true,
    cumulative_offline_limit: -1,
    splittable_online: true,
    splittable_offline: true,
    code_pin: false,
    how_to_use_online: '<p>Enter the code at checkout.</p>',
    how_to_use_offline: null,
    term_of_use: 'Load-test gift card.',
    discount: 0,
    next_discounts: [],
    facial_values: { type: 'free', min_amount: 100, max_amount: 100000, step_amount: 1 },
    ...logo('fast-lane'),
    country_name: 'France',
    country_code: 'FR',
  },
  stock: 'unlimited',
};

/**
 * A gift card with the plainest values of every field the spec lists (online only, nothing cumulative or
 * splittable, no PIN, no usage text, no discount, no country) but those given: the last seed entry, and the
 * gift cards the control API adds (POST /_sim/catalog/gift-cards).
 */
export function plainGiftCard(given: Pick<GiftCard, 'code' | 'name' | 'brand' | 'facial_values' | 'term_of_use'> & Partial<GiftCard>): GiftCard {
  return {
    barcode_symbology: 'code128',
    online_usable: true,
    offline_usable: false,
    validity_period: 365,
    cumulative_online: false,
    cumulative_online_limit: 0,
    cumulative_offline: false,
    cumulative_offline_limit: 0,
    splittable_online: false,
    splittable_offline: false,
    code_pin: false,
    how_to_use_online: null,
    how_to_use_offline: null,
    discount: 0,
    next_discounts: [],
    ...logo(given.code.toLowerCase()),
    country_name: null,
    country_code: null,
    ...given,
  };
}

const brokenStaging: CatalogEntry = {
  giftCard: plainGiftCard({
    name: 'Brokenbrand gift card',
    code: 'STG-BROKEN',
    brand: 'Brokenbrand',
    term_of_use: 'Staging only: pulling this brand does not work.',
    facial_values: { type: 'fixed', amounts: [1000] },
    ...logo('brokenbrand'),
    country_name: 'France',
    country_code: 'FR',
  }),
  stock: 'unlimited',
};

/** A fresh copy of the seed (callers mutate stocks; the catalog itself is deep-copied too). */
export function seedCatalog(mode: 'staging' | 'production'): CatalogEntry[] {
  const entries = [acmeBooks, novaGames, euroTravel, goneShoes, fastLane];
  if (mode === 'staging') entries.push(brokenStaging);
  return structuredClone(entries);
}
