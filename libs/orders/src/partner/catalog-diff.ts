import { checkAmount, type FacialValues, type GiftCard } from '@cardpull/partner-client';

/** What the change feed records (issue 25); the migration's CHECK lists the same. */
export const CATALOG_CHANGE_KINDS = ['added', 'removed', 'face_values_changed', 'code_pin_changed', 'discount_changed', 'discount_scheduled'] as const;
export type CatalogChangeKind = (typeof CATALOG_CHANGE_KINDS)[number];

/** A gift card in a change of kind added or removed: what a checkout needs to know of it, not its whole text. */
export interface GiftCardSummary {
  name: string;
  brand: string;
  facial_values: FacialValues;
  discount: number;
  code_pin: boolean;
}

export type ScheduledDiscount = GiftCard['next_discounts'][number];

/** One change, before it is stored (its id and time come from the statement that records it). */
export type CatalogChangeInput = { giftCardCode: string } & (
  | { kind: 'added'; before: null; after: GiftCardSummary; detail: null }
  | { kind: 'removed'; before: GiftCardSummary; after: null; detail: null }
  | { kind: 'face_values_changed'; before: FacialValues; after: FacialValues; detail: { withdrawn_amounts: number[]; added_amounts: number[] } }
  | { kind: 'code_pin_changed'; before: boolean; after: boolean; detail: null }
  | { kind: 'discount_changed'; before: number; after: number; detail: null }
  | { kind: 'discount_scheduled'; before: ScheduledDiscount[]; after: ScheduledDiscount[]; detail: { scheduled: ScheduledDiscount[] } }
);

/** A gift card as stored: the partner's data, and the discount last announced (null: stored before the feed). */
export interface StoredGiftCard {
  giftCard: GiftCard;
  announcedDiscount: number | null;
}

export interface CatalogDiff {
  changes: CatalogChangeInput[];
  /** Each incoming gift card's discount as announced after this store (what the next one is compared with). */
  announced: Map<string, number>;
}

/**
 * What changed between the stored catalog and a new read of it, gift card by gift card, in code order:
 *  - added / removed: a code that appears or disappears;
 *  - face_values_changed: facial_values differ (the amount lists compared as sets); the fixed amounts it
 *    withdrew and added are listed (a free range's bounds are in before and after);
 *  - code_pin_changed;
 *  - discount_changed: `discount` moved by at least `discountThreshold` (its own unit) from the discount last
 *    announced, not from the previous read: a creep of small moves is recorded once it adds up;
 *  - discount_scheduled: an entry of next_discounts (value and date) that was not there before.
 * An empty stored catalog is the first store: nothing to compare with, so no change (every card is announced
 * at its discount).
 */
export function diffCatalog(stored: ReadonlyMap<string, StoredGiftCard>, incoming: readonly GiftCard[], discountThreshold: number): CatalogDiff {
  const changes: CatalogChangeInput[] = [];
  const announced = new Map<string, number>();
  const first = stored.size === 0;
  const codes = new Set(incoming.map((g) => g.code));
  for (const giftCard of [...incoming].sort(byCode)) {
    const before = stored.get(giftCard.code);
    if (!before) {
      announced.set(giftCard.code, giftCard.discount);
      if (!first) changes.push({ giftCardCode: giftCard.code, kind: 'added', before: null, after: giftCardSummary(giftCard), detail: null });
      continue;
    }
    changes.push(...changesOf(before, giftCard, discountThreshold));
    const last = before.announcedDiscount ?? before.giftCard.discount;
    announced.set(giftCard.code, movedEnough(last, giftCard.discount, discountThreshold) ? giftCard.discount : last);
  }
  for (const [code, { giftCard }] of [...stored].sort(([a], [b]) => a.localeCompare(b))) {
    if (!codes.has(code)) changes.push({ giftCardCode: code, kind: 'removed', before: giftCardSummary(giftCard), after: null, detail: null });
  }
  return { changes, announced };
}

function changesOf(stored: StoredGiftCard, now: GiftCard, threshold: number): CatalogChangeInput[] {
  const was = stored.giftCard;
  const code = now.code;
  const out: CatalogChangeInput[] = [];
  const faces = faceValueChange(was.facial_values, now.facial_values);
  if (faces) out.push({ giftCardCode: code, kind: 'face_values_changed', before: was.facial_values, after: now.facial_values, detail: faces });
  if (Boolean(was.code_pin) !== Boolean(now.code_pin)) out.push({ giftCardCode: code, kind: 'code_pin_changed', before: Boolean(was.code_pin), after: Boolean(now.code_pin), detail: null });
  const last = stored.announcedDiscount ?? was.discount;
  if (movedEnough(last, now.discount, threshold)) out.push({ giftCardCode: code, kind: 'discount_changed', before: last, after: now.discount, detail: null });
  const known = new Set((was.next_discounts ?? []).map(scheduleKey));
  const scheduled = (now.next_discounts ?? []).filter((d) => !known.has(scheduleKey(d)));
  if (scheduled.length) {
    out.push({ giftCardCode: code, kind: 'discount_scheduled', before: was.next_discounts ?? [], after: now.next_discounts ?? [], detail: { scheduled } });
  }
  return out;
}

/** The fixed amounts one facial_values withdrew and added against another; null when they are the same. */
export function faceValueChange(before: FacialValues, after: FacialValues): { withdrawn_amounts: number[]; added_amounts: number[] } | null {
  if (canonical(before) === canonical(after)) return null;
  const listed = (f: FacialValues) => (f.type === 'fixed' ? [...new Set(f.amounts)].sort((a, b) => a - b) : []);
  return {
    withdrawn_amounts: listed(before).filter((a) => !checkAmount('', after, a).ok),
    added_amounts: listed(after).filter((a) => !checkAmount('', before, a).ok),
  };
}

/** Whether `amount` was offered by `before` and is not by `after` (a face value change withdrew it). */
export function amountWithdrawn(before: FacialValues, after: FacialValues, amount: number): boolean {
  return checkAmount('', before, amount).ok && !checkAmount('', after, amount).ok;
}

function canonical(f: FacialValues): string {
  return f.type === 'fixed' ? `fixed:${[...new Set(f.amounts)].sort((a, b) => a - b).join(',')}` : `free:${f.min_amount}:${f.max_amount}:${f.step_amount}`;
}

/** A move of `threshold` or more; a tiny epsilon keeps 3.5 -> 4.0 at a threshold of 0.5 a move (floating point). */
function movedEnough(from: number, to: number, threshold: number): boolean {
  const delta = Math.abs(to - from);
  return delta > 0 && delta >= threshold - 1e-9;
}

const scheduleKey = (d: ScheduledDiscount) => `${d.value}@${Date.parse(d.date) || d.date}`;

const byCode = (a: GiftCard, b: GiftCard) => a.code.localeCompare(b.code);

export function giftCardSummary(giftCard: GiftCard): GiftCardSummary {
  return { name: giftCard.name, brand: giftCard.brand, facial_values: giftCard.facial_values, discount: giftCard.discount, code_pin: Boolean(giftCard.code_pin) };
}
