import type { Decision, DecisionInput } from './decision.types';
import { askingPastWindow } from './endings';
import { acknowledged } from '@cardpull/orders';
import { BUSINESS_CODES, pollDelay, windowStart } from './facts';

/**
 * 404 on GET /pull_requests/:request_id. Never proof that the ID is dead (a read copy may lag behind a
 * creation, for longer than any window we could pick): what it changes depends on what the partner showed
 * of this ID before.
 *  - The partner acknowledged it (showed its pull request, or answered 422 "already used" to a re-create):
 *    a lagging read, or a partner that lost it. Keep reading the same ID; only the partner's word (or an
 *    operator's, after asking the partner) ends it.
 *  - Never acknowledged: the creation may never have arrived. Create it again with the SAME request ID
 *    (which cannot issue a second card: the partner answers 422 "already used" if it has it). After a
 *    business error answered to such a re-create, that only once 404s have lasted PULL_REQUEST_SETTLE_MS.
 */
export function notFound(i: DecisionInput, code: string, message: string): Decision {
  const { attempt: att, timings: t, now } = i;
  const since = windowStart(att);
  const last = { code, message };
  const settling: Decision = { kind: 'stay', rule: 'not_found_settling', delayMs: pollDelay(t, i.random), ...(att.notFoundSince ? {} : { note: { notFoundSince: 'start' } }) };
  if (acknowledged(att)) {
    return askingPastWindow(i, { ...settling, rule: 'not_found_after_seen' }, since, { code, message: `${message} (after the partner had shown it: ${att.partnerStatus})` });
  }
  if (att.errorCode && BUSINESS_CODES.includes(att.errorCode)) {
    const settled = att.notFoundSince !== null && now - att.notFoundSince.getTime() >= t.PULL_REQUEST_SETTLE_MS;
    if (!settled) return askingPastWindow(i, settling, since, last);
    const again: Decision = {
      kind: 'transition',
      rule: 'create_again',
      next: { step: 'async_create', delayMs: 0 },
      // A new run of 404s starts after this creation: each re-create waits a whole settle window.
      attempt: { notFoundSince: 'clear' },
      event: { type: 'create_again', detail: { code, after_business_error: att.errorCode, same_request_id: true } },
    };
    return askingPastWindow(i, again, since, last);
  }
  const never: Decision = {
    kind: 'transition',
    rule: 'never_reached',
    next: { step: 'async_create', delayMs: 0 },
    attempt: { error: { code, message }, notFoundSince: 'start' },
    event: att.errorCode === code ? undefined : { type: 'create_again', detail: { code, same_request_id: true } },
  };
  return askingPastWindow(i, never, since, last);
}
