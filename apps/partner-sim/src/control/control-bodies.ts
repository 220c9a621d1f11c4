import { z } from 'zod';
import type { FastifyRequest } from 'fastify';
import { PartnerError } from '../common/partner-error';

export const balanceBodySchema = z.strictObject({ amount: z.number().finite().min(0) });
/** POST /_sim/charge: a charge without a card (a fee, a partner's mistake), in currency units. */
export const chargeBodySchema = z.strictObject({ amount: z.number().finite().positive(), reason: z.string().max(200).optional() });

export const stockBodySchema = z.strictObject({
  gift_card_code: z.string().min(1),
  facial_value: z.number().int().positive().optional(),
  quantity: z.union([z.number().int().min(0), z.literal('unlimited')]),
});
export type StockBody = z.output<typeof stockBodySchema>;

/** The control API's JSON body, validated; nonsense is answered 400 bad_request with what is wrong. */
export function parseControlBody<S extends z.ZodType>(req: FastifyRequest, schema: S): z.output<S> {
  if (req.sim.body.kind === 'invalid') throw PartnerError.badRequest('Request body is not valid JSON');
  const result = schema.safeParse(req.sim.body.kind === 'json' ? req.sim.body.value : undefined);
  if (!result.success) {
    throw PartnerError.badRequest(
      result.error.issues.map((i) => `${i.path.length ? i.path.join('.') : 'body'}: ${i.message}`).join('; '),
    );
  }
  return result.data;
}
