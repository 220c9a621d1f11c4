import type { GiftCard } from '@cardpull/partner-client';
import { amountWithdrawn, diffCatalog, faceValueChange, type StoredGiftCard } from './catalog-diff';

const card = (code: string, over: Partial<GiftCard> = {}): GiftCard =>
  ({
    code,
    name: `${code} card`,
    brand: code,
    code_pin: true,
    discount: 3.5,
    next_discounts: [{ value: 4, date: '2027-01-01T00:00:00.000+01:00' }],
    facial_values: { type: 'fixed', amounts: [1000, 2500, 5000] },
    term_of_use: 'terms',
    ...over,
  }) as GiftCard;

const stored = (...cards: (GiftCard | [GiftCard, number])[]): Map<string, StoredGiftCard> =>
  new Map(cards.map((c): [string, StoredGiftCard] => (Array.isArray(c) ? [c[0].code, { giftCard: c[0], announcedDiscount: c[1] }] : [c.code, { giftCard: c, announcedDiscount: null }])));

const kinds = (diff: ReturnType<typeof diffCatalog>) => diff.changes.map((c) => `${c.kind} ${c.giftCardCode}`);

describe('diffCatalog: what changed between the stored catalog and a new read (issue 25)', () => {
  it('the first store (nothing stored) is no change: every card is announced at its discount', () => {
    const diff = diffCatalog(new Map(), [card('A'), card('B', { discount: 2 })], 0.5);
    expect(diff.changes).toEqual([]);
    expect([...diff.announced]).toEqual([['A', 3.5], ['B', 2]]);
  });

  it('an unchanged read is no change, whatever the order of the cards, of their amounts, or another field', () => {
    const before = stored(card('A'), card('B'));
    expect(diffCatalog(before, [card('B', { term_of_use: 'other terms' }), card('A', { facial_values: { type: 'fixed', amounts: [5000, 1000, 2500] } })], 0.5).changes).toEqual([]);
  });

  it('added and removed, with a summary of the gift card on the side it exists', () => {
    const diff = diffCatalog(stored(card('A'), card('GONE')), [card('A'), card('NEW', { code_pin: false })], 0.5);
    expect(diff.changes).toEqual([
      { giftCardCode: 'NEW', kind: 'added', before: null, after: { name: 'NEW card', brand: 'NEW', facial_values: card('NEW').facial_values, discount: 3.5, code_pin: false }, detail: null },
      { giftCardCode: 'GONE', kind: 'removed', before: expect.objectContaining({ name: 'GONE card', discount: 3.5 }), after: null, detail: null },
    ]);
  });

  it('face values: the fixed amounts withdrawn and added are kept, both ways', () => {
    const diff = diffCatalog(stored(card('A')), [card('A', { facial_values: { type: 'fixed', amounts: [1000, 5000, 7500] } })], 0.5);
    expect(diff.changes).toEqual([
      {
        giftCardCode: 'A',
        kind: 'face_values_changed',
        before: { type: 'fixed', amounts: [1000, 2500, 5000] },
        after: { type: 'fixed', amounts: [1000, 5000, 7500] },
        detail: { withdrawn_amounts: [2500], added_amounts: [7500] },
      },
    ]);
  });

  it('face values between fixed and free: the fixed amounts the other side does not offer; a narrowed free range lists none (its bounds say it)', () => {
    expect(faceValueChange({ type: 'fixed', amounts: [500, 1000, 1050] }, { type: 'free', min_amount: 1000, max_amount: 5000, step_amount: 100 })).toEqual({ withdrawn_amounts: [500, 1050], added_amounts: [] });
    expect(faceValueChange({ type: 'free', min_amount: 500, max_amount: 5000, step_amount: 100 }, { type: 'free', min_amount: 1000, max_amount: 5000, step_amount: 100 })).toEqual({ withdrawn_amounts: [], added_amounts: [] });
    expect(amountWithdrawn({ type: 'free', min_amount: 500, max_amount: 5000, step_amount: 100 }, { type: 'free', min_amount: 1000, max_amount: 5000, step_amount: 100 }, 700)).toBe(true);
    expect(amountWithdrawn({ type: 'free', min_amount: 500, max_amount: 5000, step_amount: 100 }, { type: 'free', min_amount: 1000, max_amount: 5000, step_amount: 100 }, 1200)).toBe(false);
    expect(faceValueChange({ type: 'fixed', amounts: [1000, 2500] }, { type: 'fixed', amounts: [2500, 1000, 1000] })).toBeNull();
  });

  it('code_pin changed, either way', () => {
    expect(kinds(diffCatalog(stored(card('A'), card('B', { code_pin: false })), [card('A', { code_pin: false }), card('B', { code_pin: true })], 0.5))).toEqual([
      'code_pin_changed A',
      'code_pin_changed B',
    ]);
  });

  it('discount: a move below the threshold is no change; at or beyond it, one change from the discount last announced', () => {
    const before = stored(card('A'));
    expect(diffCatalog(before, [card('A', { discount: 3.9 })], 0.5).changes).toEqual([]);
    expect(diffCatalog(before, [card('A', { discount: 4 })], 0.5).changes).toEqual([{ giftCardCode: 'A', kind: 'discount_changed', before: 3.5, after: 4, detail: null }]);
    expect(diffCatalog(before, [card('A', { discount: 1 })], 0.5).changes).toEqual([{ giftCardCode: 'A', kind: 'discount_changed', before: 3.5, after: 1, detail: null }]);
    // Threshold 0: any move is a change.
    expect(kinds(diffCatalog(before, [card('A', { discount: 3.51 })], 0))).toEqual(['discount_changed A']);
  });

  it('discount: small moves add up against the discount last announced, and the announced one only moves with a recorded change', () => {
    // 3.5 announced; read at 3.8 (no change, still 3.5 announced), then at 4.1: a change from 3.5.
    const first = diffCatalog(stored(card('A')), [card('A', { discount: 3.8 })], 0.5);
    expect([first.changes, first.announced.get('A')]).toEqual([[], 3.5]);
    const second = diffCatalog(stored([card('A', { discount: 3.8 }), 3.5]), [card('A', { discount: 4.1 })], 0.5);
    expect(second.changes).toEqual([{ giftCardCode: 'A', kind: 'discount_changed', before: 3.5, after: 4.1, detail: null }]);
    expect(second.announced.get('A')).toBe(4.1);
  });

  it('discount_scheduled: a new entry of next_discounts, listed; an entry withdrawn or one the same at another offset is not one', () => {
    const before = stored(card('A'));
    const now = [{ value: 4, date: '2027-01-01T00:00:00.000+01:00' }, { value: 5, date: '2027-06-01T00:00:00.000Z' }];
    expect(diffCatalog(before, [card('A', { next_discounts: now })], 0.5).changes).toEqual([
      { giftCardCode: 'A', kind: 'discount_scheduled', before: card('A').next_discounts, after: now, detail: { scheduled: [{ value: 5, date: '2027-06-01T00:00:00.000Z' }] } },
    ]);
    expect(diffCatalog(before, [card('A', { next_discounts: [] })], 0.5).changes).toEqual([]);
    expect(diffCatalog(before, [card('A', { next_discounts: [{ value: 4, date: '2026-12-31T23:00:00.000Z' }] })], 0.5).changes).toEqual([]);
  });

  it('several changes of one gift card are each recorded, in a fixed order; the cards in code order, removals last', () => {
    const diff = diffCatalog(stored(card('B'), card('Z')), [card('B', { code_pin: false, discount: 10, facial_values: { type: 'fixed', amounts: [1000] } }), card('A')], 0.5);
    expect(kinds(diff)).toEqual(['added A', 'face_values_changed B', 'code_pin_changed B', 'discount_changed B', 'removed Z']);
  });
});
