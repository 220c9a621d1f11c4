import { PricingRefused, balanceMinor, catalogSnapshot, costOf, discountInForce, discountPpm } from './pricing';

/** Issue 24, item 1: the price of a card, in integers, with the units of the spec's silent points as settings. */
describe('pricing', () => {
  it('the cost is the face value less the discount, rounded half up, in minor units', () => {
    expect(costOf(2500, discountPpm(3.5, 'percent'))).toBe(2412); // 87.5 off rounds to 88
    expect(costOf(1000, discountPpm(2, 'percent'))).toBe(980);
    expect(costOf(999, 0)).toBe(999);
    expect(costOf(1, discountPpm(50, 'percent'))).toBe(0); // 0.5 off rounds to 1
    expect(costOf(2500, discountPpm(0.035, 'fraction'))).toBe(2412);
  });

  it('a discount that contradicts its unit is refused, naming the setting: above 100 %, negative, a fraction above 1', () => {
    for (const [value, unit] of [[101, 'percent'], [-1, 'percent'], [3.5, 'fraction'], [Number.NaN, 'percent']] as const) {
      expect(() => discountPpm(value, unit)).toThrow(PricingRefused);
    }
    try {
      discountPpm(150, 'percent');
    } catch (error) {
      expect(error).toMatchObject({ setting: 'PARTNER_DISCOUNT_UNIT', message: expect.stringMatching(/150 cannot be read as a percent/) });
    }
  });

  it('the discount in force: the latest scheduled discount whose date has come, else the current one', () => {
    const giftCard = { discount: 3.5, next_discounts: [{ value: 4, date: '2027-01-01T00:00:00.000+01:00' }, { value: 3, date: '2027-03-01T00:00:00.000+01:00' }] };
    expect(discountInForce(giftCard, new Date('2026-12-31T22:59:59Z'))).toBe(3.5);
    expect(discountInForce(giftCard, new Date('2026-12-31T23:00:00Z'))).toBe(4);
    expect(discountInForce(giftCard, new Date('2027-06-01T00:00:00Z'))).toBe(3);
    expect(discountInForce({ discount: 1, next_discounts: [{ value: 9, date: 'not a date' }] }, new Date())).toBe(1);
  });

  it('the balance in minor units: a decimal in currency units by default; a minor-unit balance with decimals is refused', () => {
    expect(balanceMinor(25.1, 'major')).toBe(2510);
    expect(balanceMinor(2510, 'minor')).toBe(2510);
    expect(() => balanceMinor(25.1, 'minor')).toThrow(PricingRefused);
  });

  it('a catalog snapshot has the same id for the same content, another for any change of price or terms', () => {
    const base = { code: 'G', name: 'G', brand: 'B', term_of_use: 'terms', discount: 1, next_discounts: [], facial_values: { type: 'fixed' as const, amounts: [1000] } };
    const id = catalogSnapshot(base as never).id;
    expect(catalogSnapshot({ ...base } as never).id).toBe(id);
    expect(catalogSnapshot({ ...base, discount: 2 } as never).id).not.toBe(id);
    expect(catalogSnapshot({ ...base, term_of_use: 'other terms' } as never).id).not.toBe(id);
    expect(id).toMatch(/^[0-9a-f]{32}$/);
  });
});
