import type { DefinitiveCode } from '@cardpull/partner-client';
import type { Decision, DecisionInput } from './decision.types';
import { definitiveForThisId, needsAttention, proven } from './endings';
import { pullRequestSeen } from '@cardpull/orders';
import { pollDelay } from './facts';

/**
 * 404 on GET /pull_requests/:request_id. Never proof on its own (a read copy may lag behind a creation):
 * what it means depends on what the partner showed of this ID before, and how long the 404s have lasted.
 */
export function notFound(i: DecisionInput, code: string, message: string): Decision {
  const { attempt: att, timings: t, now } = i;
  const streak = att.notFoundSince ?? new Date(now);
  const settled = att.notFoundSince !== null && now - att.notFoundSince.getTime() >= t.PULL_REQUEST_SETTLE_MS;
  const settling: Decision = { kind: 'stay', rule: 'not_found_settling', delayMs: pollDelay(t, i.random), ...(att.notFoundSince ? {} : { note: { notFoundSince: 'start' } }) };
  if (pullRequestSeen(att)) {
    // The partner showed it, and now says it has none: a read copy that lags, or the partner lost it. Never proof.
    if (now - streak.getTime() >= t.UNKNOWN_OUTCOME_WINDOW_MS) {
      return needsAttention(i, { code, message: `${message} (after the partner had shown it ${att.partnerStatus})` }, streak, 'not_found_after_seen');
    }
    return { ...settling, rule: 'not_found_after_seen' };
  }
  if (att.partnerStatus === 'exists') {
    // 422 "already used", yet no pull request to read, over the settle window: it can yield no card.
    return settled ? proven(i, 'used_without_pull_request', `request ID used at the partner, but ${code} since ${streak.toISOString()}`) : settling;
  }
  const business = att.errorCode as DefinitiveCode | null;
  if (business && (['gift_card_not_found', 'invalid_amount', 'out_of_stock', 'not_enough_funds'] as string[]).includes(business)) {
    // A re-create answered a business error; the pull request proven absent makes that answer its fate.
    return settled ? definitiveForThisId(i, business, att.errorMessage ?? business, 'not_found_settled') : settling;
  }
  // Never acknowledged: the creation never reached the partner (or a read copy lags: a re-create then gets
  // 422 "already used"). Create it again with the SAME request ID.
  return {
    kind: 'transition',
    rule: 'never_reached',
    next: { step: 'async_create', delayMs: 0 },
    attempt: { error: { code, message }, notFoundSince: 'start' },
    event: att.errorCode === code ? undefined : { type: 'create_again', detail: { code } },
  };
}
