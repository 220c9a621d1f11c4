import type { Card, PullRequest, UnknownReason } from '@cardpull/partner-client';
import { decide } from './decide';
import { backoffDelay, mismatchOf } from './facts';
import type { AttemptFacts, Decision, DecisionInput, DecisionTimings, OrderFacts, Sent } from './decision.types';
import { redriveStep } from '@cardpull/orders';
import { decideResume } from './resume';

const T: DecisionTimings = {
  SYNC_RETRY_FIRST_DELAY_MS: 60_000,
  SYNC_RETRY_INTERVAL_MS: 10_000,
  RETRY_MIN_DELAY_MS: 1_000,
  ASYNC_POLL_FIRST_DELAY_MS: 2_000,
  ASYNC_POLL_INTERVAL_MIN_MS: 5_000,
  ASYNC_POLL_INTERVAL_MAX_MS: 5_000,
  UNKNOWN_OUTCOME_WINDOW_MS: 1_800_000,
  UNKNOWN_OUTCOME_MAX_INTERVAL_MS: 3_600_000,
  PULL_REQUEST_SETTLE_MS: 180_000,
  ASYNC_MAX_ATTEMPTS: 3,
  AWAIT_RECHECK_INTERVAL_MS: 60_000,
  AWAIT_DEADLINE_MS: 86_400_000,
  CIRCUIT_RETRY_MS: 5_000,
};
const NOW = Date.parse('2026-11-24T12:00:00.000Z');
const ago = (ms: number) => new Date(NOW - ms);

const order = (o: Partial<OrderFacts> = {}): OrderFacts => ({
  mode: 'sync',
  giftCardCode: 'ACME',
  amount: 1000,
  status: 'in_progress',
  errorCode: null,
  errorMessage: null,
  waitDeadline: null,
  ...o,
});
/** A request ID sent once, nothing known yet. */
const fresh = (a: Partial<AttemptFacts> = {}): AttemptFacts => ({
  requestId: 'X',
  seq: 1,
  state: 'created',
  partnerStatus: null,
  errorCode: null,
  errorMessage: null,
  unknownSince: null,
  notFoundSince: null,
  firstSentAt: null,
  createdAt: ago(1_000),
  ...a,
});
/** A request ID whose earlier send had an unknown outcome (a timeout, 60 s ago). */
const afterUnknown = (a: Partial<AttemptFacts> = {}) => fresh({ state: 'unknown', unknownSince: ago(60_000), errorCode: 'timeout', firstSentAt: ago(70_000), ...a });

const card = (c: Partial<Card> = {}): Card => ({ id: 'card-1', code: 'CODE', expire_at: '2027-01-01T00:00:00.000+00:00', pin_code: '1234', amount: 1000, gift_card_code: 'ACME', pdf_url: 'u', ...c });
const pr = (status: string, c: Card | null = null): PullRequest => ({ id: 'p', status, request_id: 'X', created_at: '', updated_at: '', card: c });

const business = (code: 'gift_card_not_found' | 'invalid_amount' | 'out_of_stock' | 'not_enough_funds') => ({ kind: 'definitive' as const, code, message: `msg ${code}`, httpStatus: code === 'gift_card_not_found' ? 404 : 422 });
const timeout = { kind: 'unknown' as const, reason: 'timeout' as const, message: 'timed out' };

function run(sent: Sent, answer: DecisionInput['answer'], o: Partial<DecisionInput> = {}): Decision {
  return decide({ order: order(o.order ?? {}), attempt: fresh(), sent, answer, now: NOW, timings: T, random: 0, ...o } as DecisionInput);
}
const step = (d: Decision) => (d.kind === 'transition' ? d.next : undefined);

describe('the classification table (docs/ARCHITECTURE.md), as one pure decision', () => {
  describe('200 with a card -> stored (the order’s, a surplus or a mismatch is the store’s call)', () => {
    it('sync card and async success', () => {
      expect(run('sync_call', { kind: 'success', value: card(), httpStatus: 200 })).toMatchObject({ kind: 'store_card', mismatch: null, attempt: { state: 'succeeded' } });
      expect(run('async_poll', { kind: 'success', value: pr('success', card()), httpStatus: 200 }, { order: order({ mode: 'async' }) })).toMatchObject({ kind: 'store_card', attempt: { partnerStatus: 'success' } });
    });
    it('a card that differs from the order (gift card, amount) is stored with the difference named', () => {
      expect(mismatchOf(order(), card({ amount: 1100 }))).toBe('amount 1100 instead of 1000');
      expect(run('sync_call', { kind: 'success', value: card({ gift_card_code: 'OTHER' }), httpStatus: 200 })).toMatchObject({ kind: 'store_card', mismatch: 'gift card OTHER instead of ACME' });
    });
  });

  describe('the partner’s first proof of death: a business error answered to the FIRST send of an ID', () => {
    it.each(['gift_card_not_found', 'invalid_amount'] as const)('%s -> order failed, attempt failed_definitive', (code) => {
      for (const sent of ['sync_call', 'async_create'] as const) {
        expect(run(sent, business(code))).toMatchObject({ kind: 'transition', rule: 'business_error', status: 'failed', error: { code }, next: null, attempt: { state: 'failed_definitive' } });
      }
    });
    it.each([
      ['out_of_stock', 'awaiting_stock'],
      ['not_enough_funds', 'awaiting_funds'],
    ] as const)('%s -> %s, a NEW request ID once the partner can serve it', (code, status) => {
      expect(run('sync_call', business(code))).toMatchObject({ status, waitDeadline: 'start', next: { step: 'resume_check' }, attempt: { state: 'failed_definitive' } });
    });
    it('at the waiting deadline -> failed', () => {
      expect(run('sync_call', business('out_of_stock'), { order: order({ waitDeadline: ago(1) }) })).toMatchObject({ status: 'failed', error: { code: 'out_of_stock' } });
    });
    it('a 401 before does not make a send "after an unknown outcome"', () => {
      const afterRefusal = run('sync_call', business('invalid_amount'), { attempt: fresh({ errorCode: 'unauthorized', state: 'created' }) });
      expect(afterRefusal).toMatchObject({ status: 'failed' });
    });
  });

  describe('the partner’s second proof of death: async status error for that ID', () => {
    const async = (o: Partial<DecisionInput> = {}) => ({ order: order({ mode: 'async' }), ...o });
    it('status error -> a NEW request ID, up to ASYNC_MAX_ATTEMPTS, then failed', () => {
      expect(run('async_poll', { kind: 'success', value: pr('error'), httpStatus: 200 }, async())).toMatchObject({ rule: 'pull_request_error', newAttempt: true, next: { step: 'async_create' }, attempt: { state: 'failed_definitive', partnerStatus: 'error' } });
      expect(run('async_poll', { kind: 'success', value: pr('error'), httpStatus: 200 }, async({ attempt: fresh({ seq: 3 }) }))).toMatchObject({ status: 'failed', error: { code: 'pull_request_error' } });
    });
    it('status error of a pull request with ANOTHER request_id is not about ours: no new ID, the order needs attention', () => {
      const other = { ...pr('error'), request_id: 'Y' };
      const d = run('async_poll', { kind: 'success', value: other, httpStatus: 200 }, async({ attempt: afterUnknown() }));
      expect(d).toMatchObject({ rule: 'request_id_mismatch', status: 'needs_attention', next: { step: 'async_poll' }, error: { code: 'request_id_mismatch' } });
      expect(d).not.toHaveProperty('newAttempt');
    });
    it('a card in a pull request with another request_id is stored as a mismatch; our ID stays open', () => {
      const other = { ...pr('success', card()), request_id: 'Y' };
      expect(run('async_poll', { kind: 'success', value: other, httpStatus: 200 }, async({ attempt: afterUnknown() }))).toMatchObject({
        kind: 'store_card',
        mismatch: 'request ID Y instead of X',
        attempt: { state: 'unknown' },
        // The card is Y's: stored as Y's answer when Y is ours; our order needs attention and X is asked again.
        answeredFor: { requestId: 'Y', then: { status: 'needs_attention', next: { step: 'async_poll' } } },
      });
    });
  });

  describe('nothing else kills an ID: a business error on a RE-SEND after an unknown outcome is not proof', () => {
    it.each(['out_of_stock', 'not_enough_funds', 'invalid_amount', 'gift_card_not_found'] as const)('sync %s -> the SAME ID again on the cadence, the attempt stays open', (code) => {
      const d = run('sync_call', business(code), { attempt: afterUnknown() });
      expect(d).toMatchObject({ rule: 'business_error_not_proof', next: { step: 'sync_call', delayMs: T.SYNC_RETRY_INTERVAL_MS }, attempt: { state: 'unknown', error: { code } } });
      expect(d).not.toHaveProperty('newAttempt');
      expect(d).not.toHaveProperty('status');
    });
    it('the same error again and again changes nothing (no "stored answer" inference, whatever a read would say)', () => {
      const again = run('sync_call', business('out_of_stock'), { attempt: afterUnknown({ errorCode: 'out_of_stock' }) });
      expect(again).toMatchObject({ rule: 'business_error_not_proof', next: { step: 'sync_call' }, attempt: { state: 'unknown' } });
      expect(again).not.toHaveProperty('newAttempt');
    });
    it('async: any business error on a re-create -> keep reading the same pull request', () => {
      const d = run('async_create', business('out_of_stock'), { attempt: afterUnknown(), order: order({ mode: 'async' }) });
      expect(d).toMatchObject({ rule: 'business_error_not_proof', next: { step: 'async_poll' }, attempt: { state: 'unknown', error: { code: 'out_of_stock' } } });
      expect(d).not.toHaveProperty('status');
    });
    it('past the window -> needs_attention (outcome_unknown), and the same ID is still asked', () => {
      const d = run('sync_call', business('out_of_stock'), { attempt: afterUnknown({ unknownSince: ago(T.UNKNOWN_OUTCOME_WINDOW_MS + 60_000) }) });
      expect(d).toMatchObject({ status: 'needs_attention', error: { code: 'outcome_unknown' }, next: { step: 'sync_call' } });
      expect(d).not.toHaveProperty('newAttempt');
    });
  });

  describe('unknown outcomes: the SAME ID later, never before a Retry-After; past the window needs_attention, still asked', () => {
    // How soon the SAME ID is sent again follows what the answer showed (README, "How soon the same request ID is asked again").
    const unknown = (reason: UnknownReason, o: { httpStatus?: number; retryAfterMs?: number } = {}) => ({ kind: 'unknown' as const, reason, message: reason, ...o });
    it.each([
      ['a timeout (the partner may still be working): the spec’s minute', unknown('timeout'), T.SYNC_RETRY_FIRST_DELAY_MS, false],
      ['a timeout after earlier unknowns: the minute again', unknown('timeout'), T.SYNC_RETRY_FIRST_DELAY_MS, true],
      ['429 with Retry-After 3 s: exactly 3 s, not the minute', unknown('rate_limited', { httpStatus: 429, retryAfterMs: 3_000 }), 3_000, false],
      ['503 with Retry-After 2 min: exactly that, longer than the minute', unknown('server_error', { httpStatus: 503, retryAfterMs: 120_000 }), 120_000, false],
      ['come back later (409) with Retry-After 10 s: 10 s', unknown('in_progress', { httpStatus: 409, retryAfterMs: 10_000 }), 10_000, false],
      ['Retry-After 0: RETRY_MIN_DELAY_MS, never a tight loop', unknown('rate_limited', { httpStatus: 429, retryAfterMs: 0 }), T.RETRY_MIN_DELAY_MS, false],
      ['come back later without Retry-After (202 processing): the interval', unknown('in_progress', { httpStatus: 202 }), T.SYNC_RETRY_INTERVAL_MS, false],
      ['429 without Retry-After: the interval', unknown('rate_limited', { httpStatus: 429 }), T.SYNC_RETRY_INTERVAL_MS, false],
      ['a 500 (may have started work): the interval, not the minute', unknown('server_error', { httpStatus: 500 }), T.SYNC_RETRY_INTERVAL_MS, false],
      ['a reset after the request was sent: the interval', unknown('network'), T.SYNC_RETRY_INTERVAL_MS, false],
      ['an unreadable 200: the interval', unknown('unparseable', { httpStatus: 200 }), T.SYNC_RETRY_INTERVAL_MS, false],
      ['an unexpected status (418): the interval', unknown('unexpected', { httpStatus: 418 }), T.SYNC_RETRY_INTERVAL_MS, false],
      ['connection refused / DNS failure (nothing reached the partner): RETRY_MIN_DELAY_MS', unknown('not_connected'), T.RETRY_MIN_DELAY_MS, false],
    ] as const)('sync, %s', (_name, answer, delayMs, earlier) => {
      const d = run('sync_call', answer, earlier ? { attempt: afterUnknown() } : {});
      expect(d).toMatchObject({ kind: 'transition', rule: 'unknown_outcome', next: { step: 'sync_call', delayMs }, attempt: { state: 'unknown' } });
      expect(d).not.toHaveProperty('newAttempt');
    });
    it('sync, not reached again and again: the wait doubles with the time the ID has gone unanswered, up to the interval', () => {
      const refused = (unansweredMs: number) => step(run('sync_call', unknown('not_connected'), { attempt: afterUnknown({ unknownSince: ago(unansweredMs), errorCode: 'not_connected' }) }))!.delayMs;
      expect([0, 1_000, 2_000, 4_000, 8_000, 16_000, 600_000].map(refused)).toEqual([1_000, 1_000, 2_000, 4_000, 8_000, 10_000, 10_000]);
    });
    it('async creation: polled after ASYNC_POLL_FIRST_DELAY_MS (never before a Retry-After); never reached: created again with the SAME ID, soon', () => {
      const async = { order: order({ mode: 'async' }) };
      expect(step(run('async_create', unknown('server_error', { httpStatus: 500 }), async))).toEqual({ step: 'async_poll', delayMs: T.ASYNC_POLL_FIRST_DELAY_MS });
      expect(step(run('async_create', unknown('timeout'), async))).toEqual({ step: 'async_poll', delayMs: T.ASYNC_POLL_FIRST_DELAY_MS });
      expect(step(run('async_create', unknown('rate_limited', { httpStatus: 429, retryAfterMs: 3_000 }), async))).toEqual({ step: 'async_poll', delayMs: 3_000 });
      const refused = run('async_create', unknown('not_connected'), async);
      expect(refused).toMatchObject({ next: { step: 'async_create', delayMs: T.RETRY_MIN_DELAY_MS }, attempt: { state: 'unknown' } });
      expect(refused).not.toHaveProperty('newAttempt');
    });
    it('polls keep their cadence whatever the answer, never before a Retry-After', () => {
      const async = { order: order({ mode: 'async' }) };
      for (const answer of [unknown('timeout'), unknown('not_connected'), unknown('server_error', { httpStatus: 500 }), unknown('rate_limited', { httpStatus: 429, retryAfterMs: 1_000 })]) {
        expect(run('async_poll', answer, async)).toMatchObject({ kind: 'stay', delayMs: 5_000 });
      }
    });
    it('a Retry-After longer than the usual delay wins (429, 503, come back later)', () => {
      const limited = { kind: 'unknown' as const, reason: 'rate_limited' as const, message: '429', httpStatus: 429, retryAfterMs: 120_000 };
      expect(step(run('sync_call', limited))).toEqual({ step: 'sync_call', delayMs: 120_000 });
      expect(step(run('async_create', limited, { order: order({ mode: 'async' }) }))).toEqual({ step: 'async_poll', delayMs: 120_000 });
      expect(run('async_poll', limited, { order: order({ mode: 'async' }) })).toMatchObject({ kind: 'stay', delayMs: 120_000 });
    });
    it('past the window, a short wait is stretched by the backoff (a Retry-After or a refusal does not undo it)', () => {
      const past = (answer: ReturnType<typeof unknown>) =>
        step(run('sync_call', answer, { order: order({ status: 'needs_attention' }), attempt: afterUnknown({ unknownSince: ago(T.UNKNOWN_OUTCOME_WINDOW_MS + 5 * 60_000) }) }));
      expect(past(unknown('not_connected'))).toEqual({ step: 'sync_call', delayMs: 5 * 60_000 });
      expect(past(unknown('rate_limited', { httpStatus: 429, retryAfterMs: 3_000 }))).toEqual({ step: 'sync_call', delayMs: 5 * 60_000 });
    });
    it('an interrupted call counts from when it was sent', () => {
      const d = run('sync_call', { kind: 'interrupted', sentAt: ago(20_000) });
      expect(d).toMatchObject({ rule: 'unknown_outcome', next: { delayMs: T.SYNC_RETRY_FIRST_DELAY_MS - 20_000 }, attempt: { unknownSince: ago(20_000) } });
    });
    it('past UNKNOWN_OUTCOME_WINDOW_MS -> needs_attention with outcome_unknown, its step kept, never a new request ID', () => {
      const d = run('sync_call', timeout, { attempt: afterUnknown({ unknownSince: ago(T.UNKNOWN_OUTCOME_WINDOW_MS) }) });
      expect(d).toMatchObject({ status: 'needs_attention', next: { step: 'sync_call' }, error: { code: 'outcome_unknown' }, event: { type: 'needs_attention' } });
      expect(d).not.toHaveProperty('newAttempt');
    });
    it('already in needs_attention: asked again, ever slower (doubling, up to UNKNOWN_OUTCOME_MAX_INTERVAL_MS), no new transition of status', () => {
      const waiting = (pastMs: number) => run('sync_call', timeout, { order: order({ status: 'needs_attention' }), attempt: afterUnknown({ unknownSince: ago(T.UNKNOWN_OUTCOME_WINDOW_MS + pastMs) }) });
      expect(waiting(5 * 60_000)).toMatchObject({ next: { step: 'sync_call', delayMs: 5 * 60_000 } });
      expect(waiting(5 * 60_000)).not.toHaveProperty('status');
      expect(step(waiting(10 * 3600_000))).toEqual({ step: 'sync_call', delayMs: T.UNKNOWN_OUTCOME_MAX_INTERVAL_MS });
      expect(backoffDelay(T, ago(T.UNKNOWN_OUTCOME_WINDOW_MS + 1), NOW, T.SYNC_RETRY_INTERVAL_MS)).toBe(T.SYNC_RETRY_INTERVAL_MS);
      const poll = run('async_poll', timeout, { order: order({ mode: 'async', status: 'needs_attention' }), attempt: afterUnknown({ unknownSince: ago(T.UNKNOWN_OUTCOME_WINDOW_MS + 120_000) }) });
      expect(poll).toMatchObject({ kind: 'stay', delayMs: 120_000 });
    });
    it('a poll that learns nothing stays (no write but the start of the window)', () => {
      expect(run('async_poll', timeout, { order: order({ mode: 'async' }) })).toEqual({ kind: 'stay', rule: 'unknown_outcome', delayMs: 5_000, note: { unknownSince: 'start' } });
    });
  });

  describe('async pull requests', () => {
    const async = (o: Partial<DecisionInput> = {}) => ({ order: order({ mode: 'async' }), ...o });
    it('created (waiting) -> first poll after ASYNC_POLL_FIRST_DELAY_MS', () => {
      expect(run('async_create', { kind: 'success', value: pr('waiting'), httpStatus: 200 }, async())).toMatchObject({ next: { step: 'async_poll', delayMs: 2_000 }, attempt: { partnerStatus: 'waiting' } });
    });
    it('still pending -> stay; past the window -> needs_attention, still polled', () => {
      expect(run('async_poll', { kind: 'success', value: pr('processing'), httpStatus: 200 }, async({ attempt: fresh({ partnerStatus: 'processing' }) }))).toEqual({ kind: 'stay', rule: 'pull_request_pending', delayMs: 5_000 });
      const long = fresh({ partnerStatus: 'processing', firstSentAt: ago(T.UNKNOWN_OUTCOME_WINDOW_MS + 1) });
      expect(run('async_poll', { kind: 'success', value: pr('processing'), httpStatus: 200 }, async({ attempt: long }))).toMatchObject({ status: 'needs_attention', next: { step: 'async_poll' } });
    });
    it('422 request_id already used -> poll that ID', () => {
      expect(run('async_create', { kind: 'request_id_used', message: 'used', httpStatus: 422 }, async())).toMatchObject({ rule: 'request_id_used', next: { step: 'async_poll', delayMs: 0 }, attempt: { partnerStatus: 'exists' } });
    });
    const notFound = { kind: 'not_found' as const, code: 'pull_request_not_found', message: 'not found', httpStatus: 404 };
    it('404 on an ID the partner never acknowledged -> create again with the SAME ID', () => {
      const d = run('async_poll', notFound, async({ attempt: afterUnknown() }));
      expect(d).toMatchObject({ rule: 'never_reached', next: { step: 'async_create', delayMs: 0 }, attempt: { notFoundSince: 'start' } });
      expect(d).not.toHaveProperty('newAttempt');
    });
    it('404 after a business error on the re-create -> keep reading; 404s over PULL_REQUEST_SETTLE_MS -> create again, SAME ID (never believed)', () => {
      const waiting = afterUnknown({ errorCode: 'out_of_stock', errorMessage: 'no stock' });
      expect(run('async_poll', notFound, async({ attempt: waiting }))).toMatchObject({ kind: 'stay', rule: 'not_found_settling', note: { notFoundSince: 'start' } });
      expect(run('async_poll', notFound, async({ attempt: { ...waiting, notFoundSince: ago(T.PULL_REQUEST_SETTLE_MS - 1) } }))).toMatchObject({ kind: 'stay' });
      const settled = run('async_poll', notFound, async({ attempt: { ...waiting, notFoundSince: ago(T.PULL_REQUEST_SETTLE_MS) } }));
      expect(settled).toMatchObject({ rule: 'create_again', next: { step: 'async_create', delayMs: 0 }, attempt: { notFoundSince: 'clear' } });
      expect(settled).not.toHaveProperty('newAttempt');
      expect(settled).not.toHaveProperty('status');
    });
    it('422 "already used" then 404s for as long as you like -> a lagging read: keep reading the SAME ID (needs_attention past the window)', () => {
      const used = afterUnknown({ partnerStatus: 'exists', notFoundSince: ago(10 * T.PULL_REQUEST_SETTLE_MS) });
      const d = run('async_poll', notFound, async({ attempt: used }));
      expect(d).toMatchObject({ kind: 'stay', rule: 'not_found_after_seen' });
      const old = { ...used, unknownSince: ago(T.UNKNOWN_OUTCOME_WINDOW_MS + 1) };
      const late = run('async_poll', notFound, async({ attempt: old }));
      expect(late).toMatchObject({ status: 'needs_attention', next: { step: 'async_poll' } });
      expect(late).not.toHaveProperty('newAttempt');
    });
    it('404 after the partner showed the pull request (a lagging read) -> keep reading; never a new ID', () => {
      const seen = fresh({ partnerStatus: 'waiting', firstSentAt: ago(1_000) });
      expect(run('async_poll', notFound, async({ attempt: seen }))).toMatchObject({ kind: 'stay', rule: 'not_found_after_seen' });
    });
  });

  describe('credentials refused -> the circuit opens; nothing is failed; the attempt is as before the call', () => {
    it('sync_call', () => {
      const refused = { kind: 'credentials' as const, code: 'invalid_signature' as const, message: 'bad', httpStatus: 401 };
      expect(run('sync_call', refused)).toMatchObject({ rule: 'credentials', circuit: { code: 'invalid_signature' }, next: { step: 'sync_call', delayMs: 5_000 }, attempt: { state: 'created' } });
      expect(run('async_poll', refused, { order: order({ mode: 'async' }) })).toMatchObject({ kind: 'stay', circuit: { code: 'invalid_signature' } });
    });
  });

  describe('the reconciler (IDs no step asks about) uses the same table', () => {
    const rec = (o: Partial<DecisionInput>) => ({ reconciling: true, ...o });
    it('a card is stored whatever the order’s status, also for an ID declared dead', () => {
      for (const status of ['needs_attention', 'failed', 'completed'] as const) {
        expect(run('sync_call', { kind: 'success', value: card(), httpStatus: 200 }, rec({ order: order({ status }), attempt: afterUnknown() }))).toMatchObject({ kind: 'store_card' });
      }
      const declared = fresh({ state: 'failed_definitive', errorCode: 'declared_dead' });
      expect(run('async_poll', { kind: 'success', value: pr('success', card()), httpStatus: 200 }, rec({ order: order({ mode: 'async', status: 'failed' }), attempt: declared }))).toMatchObject({ kind: 'store_card' });
      expect(run('async_poll', { kind: 'success', value: pr('error'), httpStatus: 200 }, rec({ order: order({ mode: 'async', status: 'failed' }), attempt: declared }))).toMatchObject({ kind: 'stay', rule: 'reconcile_unchanged' });
    });
    it('a card of another request ID, met while reading an ID declared dead of a failed order: stored as that ID’s, the failed order does not move', () => {
      const declared = fresh({ state: 'failed_definitive', errorCode: 'declared_dead' });
      const other = { ...pr('success', card()), request_id: 'Y' };
      expect(run('async_poll', { kind: 'success', value: other, httpStatus: 200 }, rec({ order: order({ mode: 'async', status: 'failed' }), attempt: declared }))).toMatchObject({
        kind: 'store_card',
        answeredFor: { requestId: 'Y', then: { kind: 'stay', rule: 'reconcile_unchanged' } },
      });
    });
    it('credentials refused opens the circuit here too', () => {
      expect(run('sync_call', { kind: 'credentials', code: 'unauthorized', message: 'no', httpStatus: 401 }, rec({ order: order({ status: 'needs_attention' }), attempt: afterUnknown() }))).toMatchObject({ kind: 'stay', circuit: { code: 'unauthorized' } });
    });
    it('an order without a step + pending pull request -> polling resumes with a fresh window', () => {
      expect(run('async_poll', { kind: 'success', value: pr('waiting'), httpStatus: 200 }, rec({ order: order({ mode: 'async', status: 'needs_attention' }), attempt: afterUnknown({ partnerStatus: 'waiting' }) }))).toMatchObject({
        rule: 'reconcile_resumed',
        status: 'in_progress',
        attempt: { unknownSince: 'restart' },
      });
    });
    it('a failed order never moves; the partner’s error meanwhile is recorded as such', () => {
      const failed = rec({ order: order({ mode: 'async', status: 'failed' }), attempt: afterUnknown({ partnerStatus: 'waiting' }) });
      expect(run('async_poll', { kind: 'success', value: pr('waiting'), httpStatus: 200 }, failed)).toMatchObject({ kind: 'stay', rule: 'reconcile_unchanged' });
      expect(run('async_poll', { kind: 'success', value: pr('error'), httpStatus: 200 }, failed)).toEqual({ kind: 'stay', rule: 'reconcile_unchanged', delayMs: 0, note: expect.objectContaining({ state: 'failed_definitive' }) });
    });
    it('still no answer, or a business error on a re-send -> unchanged (the next pass asks again)', () => {
      expect(run('sync_call', timeout, rec({ order: order({ status: 'needs_attention' }), attempt: afterUnknown() }))).toMatchObject({ kind: 'stay', rule: 'reconcile_unchanged' });
      expect(run('sync_call', business('out_of_stock'), rec({ order: order({ status: 'needs_attention' }), attempt: afterUnknown() }))).toMatchObject({ kind: 'stay', rule: 'reconcile_unchanged' });
    });
  });

  describe('resume_check of a waiting order: a read says when to try, never whether an ID is dead', () => {
    const r = (o: Partial<Parameters<typeof decideResume>[0]>) =>
      decideResume({ order: order({ status: 'awaiting_stock', errorCode: 'out_of_stock' }), attempt: fresh({ state: 'failed_definitive' }), now: NOW, timings: T, condition: 'cleared', ...o });
    it('an ID the partner killed + condition cleared -> a NEW request ID', () => {
      expect(r({})).toMatchObject({ newAttempt: true, next: { step: 'sync_call' }, status: 'in_progress' });
    });
    it('an open ID (an order of a version that parked it here) -> the SAME one, asked at once, whatever the read', () => {
      for (const condition of ['cleared', 'not_cleared', 'unknown'] as const) {
        const live = r({ attempt: afterUnknown({ errorCode: 'out_of_stock' }), condition });
        expect(live).toMatchObject({ next: { step: 'sync_call', delayMs: 0 }, status: 'in_progress' });
        expect(live).not.toHaveProperty('newAttempt');
      }
    });
    it('not cleared, or a read not trusted -> wait again', () => {
      expect(r({ condition: 'not_cleared' })).toEqual({ kind: 'stay', rule: 'still_waiting', delayMs: 60_000 });
      expect(r({ condition: 'unknown' })).toMatchObject({ kind: 'stay' });
    });
    it('deadline: the order fails (its ID is dead)', () => {
      expect(r({ order: order({ status: 'awaiting_stock', errorCode: 'out_of_stock', waitDeadline: ago(1) }) })).toMatchObject({ status: 'failed', error: { code: 'out_of_stock' } });
    });
    it('re-drive of an open ID: always the same ID (sync sends it, async reads it or creates it again)', () => {
      expect(redriveStep(order(), fresh())).toBe('sync_call');
      expect(redriveStep(order({ mode: 'async' }), fresh({ partnerStatus: 'processing' }))).toBe('async_poll');
      expect(redriveStep(order({ mode: 'async' }), fresh({ partnerStatus: null }))).toBe('async_create');
    });
  });
});
