import type { OrderStatus } from '@cardpull/db';
import type { Card, DefinitiveCode, UnknownReason } from '@cardpull/partner-client';
import type { AttemptFacts, DecisionInput, DecisionTimings, Step } from './decision.types';

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

/** An answer that settles nothing about the ID: its reason (a transport or HTTP reading, or a business code not taken as proof). */
export interface UnknownAnswer {
  reason: UnknownReason | 'interrupted' | (string & {});
  message: string;
  httpStatus?: number;
  retryAfterMs?: number;
}

/**
 * When, and by which step, a request ID whose POST settled nothing is asked again: always the SAME ID (the
 * money never depends on the wait), only the wait follows what the answer showed (README, "How soon the
 * same request ID is asked again"):
 *  - a timeout, or a call whose worker stopped (from when it was sent): the partner may still be working on
 *    it, so the spec's minute (SYNC_RETRY_FIRST_DELAY_MS);
 *  - an answer with Retry-After (a 429 or 503, "come back later"): exactly that, never before it (the client
 *    caps it at an hour; the fleet-wide pause of libs/traffic holds every call of its kind back meanwhile);
 *  - a call that never reached the partner (connection refused, DNS failure): RETRY_MIN_DELAY_MS, doubling
 *    with the time the ID has gone unanswered, up to SYNC_RETRY_INTERVAL_MS;
 *  - anything else that arrived (come back later, a 5xx, a reset, a 429 without Retry-After, an unreadable
 *    answer, a business error not taken as proof): the spec's ~10 s interval (SYNC_RETRY_INTERVAL_MS).
 * An async creation is followed by a poll (ASYNC_POLL_FIRST_DELAY_MS, never before a Retry-After), except
 * one that never reached the partner: created again, with the same ID, after the short wait.
 */
export function askAgain(i: Pick<DecisionInput, 'sent' | 'attempt' | 'now' | 'timings'>, u: UnknownAnswer, sentAt?: Date): Step {
  const { timings: t, now } = i;
  const interval = t.SYNC_RETRY_INTERVAL_MS;
  const min = Math.min(t.RETRY_MIN_DELAY_MS, interval);
  // No counter: how long the ID has gone unanswered doubles the wait (1, 1, 2, 4, 8 s... with the defaults).
  const notSent = (): number => Math.min(interval, Math.max(min, i.attempt.unknownSince ? now - i.attempt.unknownSince.getTime() : 0));
  if (i.sent === 'async_create') {
    if (u.reason === 'not_connected') return { step: 'async_create', delayMs: notSent() };
    return { step: 'async_poll', delayMs: Math.max(t.ASYNC_POLL_FIRST_DELAY_MS, u.retryAfterMs ?? 0) };
  }
  if (sentAt) return { step: 'sync_call', delayMs: Math.max(0, sentAt.getTime() + t.SYNC_RETRY_FIRST_DELAY_MS - now) };
  if (u.reason === 'timeout') return { step: 'sync_call', delayMs: t.SYNC_RETRY_FIRST_DELAY_MS };
  if (u.retryAfterMs !== undefined) return { step: 'sync_call', delayMs: Math.max(min, u.retryAfterMs) };
  if (u.reason === 'not_connected' || u.reason === 'held_back') return { step: 'sync_call', delayMs: notSent() };
  return { step: 'sync_call', delayMs: interval };
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
