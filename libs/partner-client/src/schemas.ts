import { z } from 'zod';
import type { Balance, Card, GiftCard, Inventory, PullRequest } from './types';

// Shape checks of successful answers. They check what we rely on and let every other field through
// unchanged (the spec may grow fields; we keep them).

export const cardSchema = z.looseObject({
  id: z.string().min(1),
  code: z.string().min(1),
  expire_at: z.string().nullable().optional(),
  pin_code: z.string().nullable().optional(),
  amount: z.number(),
  gift_card_code: z.string().min(1),
  pdf_url: z.string().nullable().optional(),
});

const facialValuesSchema = z.union([
  z.looseObject({ type: z.literal('fixed'), amounts: z.array(z.number()) }),
  z.looseObject({ type: z.literal('free'), min_amount: z.number(), max_amount: z.number(), step_amount: z.number() }),
]);

export const giftCardSchema = z.looseObject({
  code: z.string().min(1),
  name: z.string(),
  facial_values: facialValuesSchema,
});

export const pullRequestSchema = z
  .looseObject({
    id: z.string().optional(),
    status: z.string().min(1),
    request_id: z.string().min(1),
    card: cardSchema.nullable().optional(),
  })
  // A `success` without a readable card is not a success we can act on.
  .refine((pr) => pr.status !== 'success' || !!pr.card, 'success without a card');

export const inventorySchema = z.looseObject({
  inventories: z.looseObject({
    gift_card: z.looseObject({ code: z.string() }),
    stocks: z.array(z.looseObject({ facial_value: z.number(), owned_quantity: z.number() })).default([]),
  }),
});

export const balanceSchema = z.looseObject({ balance: z.looseObject({ amount: z.coerce.number() }) });

const parser =
  <T>(schema: z.ZodType) =>
  (body: unknown): T | undefined => {
    const r = schema.safeParse(body);
    return r.success ? (r.data as T) : undefined;
  };

export const parseCardEnvelope = parser<{ card: Card }>(z.looseObject({ card: cardSchema }));
export const parsePullRequestEnvelope = parser<{ pull_request: PullRequest }>(
  z.looseObject({ pull_request: pullRequestSchema }),
);
export const parseGiftCard = parser<GiftCard>(giftCardSchema);
export const parseGiftCards = parser<GiftCard[]>(z.array(giftCardSchema));
export const parseInventory = parser<Inventory>(inventorySchema);
export const parseBalance = parser<Balance>(balanceSchema);
