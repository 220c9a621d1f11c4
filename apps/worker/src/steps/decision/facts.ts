import type { OrderStatus } from '@cardpull/db';
import type { Card, DefinitiveCode } from '@cardpull/partner-client';
import type { AttemptFacts, DecisionInput, DecisionTimings } from './decision.types';

// What the decision reads off an order and its attempt, and its clocks (pure helpers of decide.ts).

/** Business errors after which the order waits for the partner (a new request ID once the ID is dead). */
export const WAITING_STATUS: Partial<Record<DefinitiveCode, OrderStatus>> = { out_of_stock: 'awaiting_stock', not_enough_funds: 'awaiting_funds' };

/** The business errors of a pull (gift_card_not_found, invalid_amount, out_of_stock, not_enough_funds). */
export const BUSINESS_CODES: readonly string[] = ['gift_card_not_found', 'invalid_amount', 'out_of_stock', 'not_enough_funds'] satisfies DefinitiveCode[];

/**
 * The ID has had an unknown outcome: the partner may hold a pull under it, so no later answer to a re-send
 * of it is an answer to its FIRST send (the only send whose definitive answer is its fate).
 */
export const hadUnknown = (a: Pick<AttemptFacts, 'unknownSince'>): boolean => a.unknownSince !== null;

export { acknowledged, pullRequestSeen } from '@cardpull/orders';

export function pollDelay(t: DecisionTimings, random = Math.random()): number {
  return Math.round(t.ASYNC_POLL_INTERVAL_MIN_MS + random * (t.ASYNC_POLL_INTERVAL_MAX_MS - t.ASYNC_POLL_INTERVAL_MIN_MS));
}

export const windowExpired = (t: DecisionTimings, since: Date | null, now: number): boolean =>
  since !== null && now - since.getTime() >= t.UNKNOWN_OUTCOME_WINDOW_MS;

/**
 * The wait before the same request ID is asked again once UNKNOWN_OUTCOME_WINDOW_MS is over: as long as it
 * has been past the window (so each wait doubles the time asked so far), never shorter than the cadence's
 * `baseMs`, never longer than UNKNOWN_OUTCOME_MAX_INTERVAL_MS. No counter: the attempt's window start says it.
 */
export function backoffDelay(t: DecisionTimings, since: Date, now: number, baseMs: number): number {
  const past = now - since.getTime() - t.UNKNOWN_OUTCOME_WINDOW_MS;
  return Math.min(t.UNKNOWN_OUTCOME_MAX_INTERVAL_MS, Math.max(baseMs, past));
}

/** When the attempt's unknown-outcome window started: its first unknown outcome, else its first send. */
export const windowStart = (a: Pick<AttemptFacts, 'unknownSince' | 'firstSentAt' | 'createdAt'>): Date => a.unknownSince ?? a.firstSentAt ?? a.createdAt;

/** What differs between the card and the order, or null: a card that does not match is stored and shown, never taken as the order's. */
export function mismatchOf(order: DecisionInput['order'], card: Card): string | null {
  const diffs: string[] = [];
  if (card.gift_card_code !== order.giftCardCode) diffs.push(`gift card ${card.gift_card_code} instead of ${order.giftCardCode}`);
  if (card.amount !== order.amount) diffs.push(`amount ${card.amount} instead of ${order.amount}`);
  return diffs.length ? diffs.join('; ') : null;
}
