import { z } from 'zod';

/**
 * PUT /_sim/readings: how the simulator reads the spec's silent points that are about the shape of its
 * answers rather than a fault on one request, until the next reset (which restores these defaults, the
 * readings cardpull assumes). The conformance probe (`npm run probe`) is tested against each of them:
 *  - signature_forms: which token forms a signature is accepted in (`both`, the default; `example`: with the
 *    identifier only; `formula`: without it only);
 *  - pull_request_not_found_code: the 404 code of GET /pull_requests/:id for an unknown request ID (the spec
 *    shows `pull_request_not_found`, one page of its guide `card_not_found`);
 *  - discount_unit: how the catalog writes `discount` and `next_discounts[].value` (`percent`: 3.5;
 *    `fraction`: 0.035). The cost drawn is the same either way;
 *  - balance_unit: how GET /balance writes `balance.amount` (`major`: 1000.5; `minor`: 100050).
 */
export const SIGNATURE_FORM_READINGS = ['both', 'example', 'formula'] as const;
export const PULL_REQUEST_NOT_FOUND_CODES = ['pull_request_not_found', 'card_not_found'] as const;

export const simReadingsSchema = z.strictObject({
  signature_forms: z.enum(SIGNATURE_FORM_READINGS).optional(),
  pull_request_not_found_code: z.enum(PULL_REQUEST_NOT_FOUND_CODES).optional(),
  discount_unit: z.enum(['percent', 'fraction']).optional(),
  balance_unit: z.enum(['major', 'minor']).optional(),
});
export type SimReadingsInput = z.input<typeof simReadingsSchema>;
export type SimReadings = Required<SimReadingsInput>;

export const DEFAULT_SIM_READINGS: SimReadings = {
  signature_forms: 'both',
  pull_request_not_found_code: 'pull_request_not_found',
  discount_unit: 'percent',
  balance_unit: 'major',
};
