import type { OrderStatus } from '@cardpull/db';
import type { Card, DefinitiveCode } from '@cardpull/partner-client';
import type { AttemptFacts, DecisionInput, DecisionTimings } from './decision.types';

// What the decision reads off an order and its attempt, and its clocks (pure helpers of decide.ts).

/** Business errors after which the order waits for the partner (a new request ID once the ID is dead). */
export const WAITING_STATUS: Partial<Record<DefinitiveCode, OrderStatus>> = { out_of_stock: 'awaiting_stock', not_enough_funds: 'awaiting_funds' };

/** For a sync re-send's business error: which of the partner's reads can prove the ID dead (see `conditionCleared`). */
export function conditionToCheck(input: DecisionInput): 'stock' | 'funds' | null {
  const { answer, attempt, sent } = input;
  if (sent !== 'sync_call' || answer.kind !== 'definitive' || !hadUnknown(attempt) || attempt.errorCode !== answer.code) return null;
  return answer.code === 'out_of_stock' ? 'stock' : answer.code === 'not_enough_funds' ? 'funds' : null;
}

/** The ID has had an unknown outcome: the partner may hold a pull under it. */
export const hadUnknown = (a: Pick<AttemptFacts, 'unknownSince'>): boolean => a.unknownSince !== null;

export { acknowledged, pullRequestSeen } from '@cardpull/orders';

export function pollDelay(t: DecisionTimings, random = Math.random()): number {
  return Math.round(t.ASYNC_POLL_INTERVAL_MIN_MS + random * (t.ASYNC_POLL_INTERVAL_MAX_MS - t.ASYNC_POLL_INTERVAL_MIN_MS));
}

export const windowExpired = (t: DecisionTimings, since: Date | null, now: number): boolean =>
  since !== null && now - since.getTime() >= t.UNKNOWN_OUTCOME_WINDOW_MS;

/** What differs between the card and the order, or null: a card that does not match is stored and shown, never taken as the order's. */
export function mismatchOf(order: DecisionInput['order'], card: Card): string | null {
  const diffs: string[] = [];
  if (card.gift_card_code !== order.giftCardCode) diffs.push(`gift card ${card.gift_card_code} instead of ${order.giftCardCode}`);
  if (card.amount !== order.amount) diffs.push(`amount ${card.amount} instead of ${order.amount}`);
  return diffs.length ? diffs.join('; ') : null;
}
