import { z } from 'zod';

/** What the simulator answers (401) to a Timestamp outside its window. */
export const STALE_TIMESTAMP_CODES = ['unauthorized', 'invalid_signature'] as const;
export type StaleTimestampCode = (typeof STALE_TIMESTAMP_CODES)[number];

/**
 * PUT /_sim/clock: the partner's clock as the simulator plays it, until the next reset (which restores
 * SIM_CLOCK_OFFSET_S, SIM_TIMESTAMP_WINDOW_S and SIM_STALE_TIMESTAMP_CODE). Fields left out keep their value.
 *  - offset_s: the partner's clock minus the machine's, in seconds (negative: behind). The Timestamp check
 *    and the Date header of every answer use it;
 *  - window_s: the accepted difference between a request's Timestamp and the partner's clock;
 *  - stale_timestamp_code: the 401 code for a Timestamp outside the window (`invalid_signature`: a partner
 *    that does not tell a stale Timestamp from a bad signature).
 */
export const simClockSchema = z.strictObject({
  offset_s: z.number().int().min(-86_400).max(86_400).optional(),
  window_s: z.number().int().min(1).max(86_400).optional(),
  stale_timestamp_code: z.enum(STALE_TIMESTAMP_CODES).optional(),
});
export type SimClockInput = z.input<typeof simClockSchema>;

/** GET (and PUT) /_sim/clock. */
export interface SimClockView {
  offset_s: number;
  window_s: number;
  stale_timestamp_code: StaleTimestampCode;
  /** The partner's now, ISO 8601. */
  now: string;
}
