import { z } from 'zod';

const facialValuesSchema = z.union([
  z.strictObject({ type: z.literal('fixed'), amounts: z.array(z.number().int().positive()).min(1) }),
  z.strictObject({ type: z.literal('free'), min_amount: z.number().int().positive(), max_amount: z.number().int().positive(), step_amount: z.number().int().positive() }),
]);
/** A discount of the simulator's catalog: a percentage (its world's unit; the `fraction` reading only writes it otherwise). */
const discountSchema = z.number().min(0).max(100);
const nextDiscountsSchema = z.array(z.strictObject({ value: discountSchema, date: z.iso.datetime({ offset: true }) }));

/**
 * The catalog's control (issue 25: what the catalog change feed is tested with), until the next reset, which
 * restores the seed. POST /_sim/catalog/gift-cards adds a gift card: `code` and `facial_values` are required,
 * the rest of the partner's Gift card resource is filled with plain values; `stock` is `unlimited` (the
 * default) or a quantity of each fixed amount.
 */
export const simGiftCardAddSchema = z.strictObject({
  code: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, "_" or "-"'),
  name: z.string().min(1).max(200).optional(),
  brand: z.string().min(1).max(200).optional(),
  facial_values: facialValuesSchema,
  code_pin: z.boolean().optional(),
  discount: discountSchema.optional(),
  next_discounts: nextDiscountsSchema.optional(),
  stock: z.union([z.literal('unlimited'), z.number().int().min(0)]).optional(),
});
export type SimGiftCardInput = z.input<typeof simGiftCardAddSchema>;

/**
 * PATCH /_sim/catalog/gift-cards/:code: what to change of a gift card (at least one field). New fixed amounts of
 * a gift card with limited stock start at 0 (PUT /_sim/stock sets them); withdrawn amounts leave the stock.
 */
export const simGiftCardChangeSchema = z
  .strictObject({
    name: z.string().min(1).max(200).optional(),
    facial_values: facialValuesSchema.optional(),
    code_pin: z.boolean().optional(),
    discount: discountSchema.optional(),
    next_discounts: nextDiscountsSchema.optional(),
  })
  .refine((c) => Object.keys(c).length > 0, 'name at least one field to change: name, facial_values, code_pin, discount, next_discounts');
export type SimGiftCardChange = z.input<typeof simGiftCardChangeSchema>;
