import type { Card, PullRequest } from '@cardpull/partner-client';
import { decide } from './decide';
import { conditionToCheck, mismatchOf } from './facts';
import type { AttemptFacts, Decision, DecisionInput, DecisionTimings, OrderFacts, Sent } from './decision.types';
import { redriveStep } from '@cardpull/orders';
import { decideResume } from './resume';

const T: DecisionTimings = {
  SYNC_RETRY_FIRST_DELAY_MS: 60_000,
  SYNC_RETRY_INTERVAL_MS: 10_000,
  ASYNC_POLL_FIRST_DELAY_MS: 2_000,
  ASYNC_POLL_INTERVAL_MIN_MS: 5_000,
  ASYNC_POLL_INTERVAL_MAX_MS: 5_000,
  UNKNOWN_OUTCOME_WINDOW_MS: 1_800_000,
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

describe('ARCHITECTURE.md classification table, as one pure decision', () => {
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

  describe('a business error on the first send of an ID is its fate', () => {
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

  describe('a business error on a RE-SEND after an unknown outcome is not proof: the order waits on the SAME ID', () => {
    it('sync out_of_stock -> awaiting_stock on the same ID (no new one), the attempt stays live', () => {
      const d = run('sync_call', business('out_of_stock'), { attempt: afterUnknown() });
      expect(d).toMatchObject({ kind: 'transition', rule: 'business_error_after_unknown', status: 'awaiting_stock', next: { step: 'resume_check' }, attempt: { state: 'unknown' } });
      expect(d).not.toHaveProperty('newAttempt');
    });
    it('sync invalid_amount / gift_card_not_found -> the same ID again later, within the unknown window', () => {
      for (const code of ['invalid_amount', 'gift_card_not_found'] as const) {
        const d = run('sync_call', business(code), { attempt: afterUnknown() });
        expect(d).toMatchObject({ rule: 'unknown_outcome', next: { step: 'sync_call', delayMs: T.SYNC_RETRY_INTERVAL_MS }, attempt: { state: 'unknown', error: { code } } });
        expect(d).not.toHaveProperty('status');
      }
    });
    it('async: any business error on a re-create -> keep reading the same pull request', () => {
      const stock = run('async_create', business('out_of_stock'), { attempt: afterUnknown(), order: order({ mode: 'async' }) });
      expect(stock).toMatchObject({ status: 'awaiting_stock', next: { step: 'async_poll' }, attempt: { state: 'unknown', error: { code: 'out_of_stock' } } });
      const amount = run('async_create', business('invalid_amount'), { attempt: afterUnknown(), order: order({ mode: 'async' }) });
      expect(amount).toMatchObject({ rule: 'business_error_after_unknown', next: { step: 'async_poll' } });
      expect(amount).not.toHaveProperty('status');
    });
    it('sync, the same error again while the partner shows the condition cleared -> the stored answer of a failed first call: a new ID', () => {
      const input = { attempt: afterUnknown({ errorCode: 'out_of_stock' }) };
      expect(conditionToCheck({ order: order(), attempt: input.attempt, sent: 'sync_call', answer: business('out_of_stock'), now: NOW, timings: T })).toBe('stock');
      expect(run('sync_call', business('out_of_stock'), { ...input, conditionCleared: true })).toMatchObject({
        rule: 'stored_answer',
        newAttempt: true,
        status: 'in_progress',
        next: { step: 'sync_call', delayMs: 0 },
        attempt: { state: 'failed_definitive' },
      });
      expect(run('sync_call', business('out_of_stock'), { ...input, conditionCleared: false })).toMatchObject({ rule: 'business_error_after_unknown', status: 'awaiting_stock' });
    });
    it('the first such error is never proof, even with the condition cleared (the check needs the same error twice)', () => {
      const input = { order: order(), attempt: afterUnknown(), sent: 'sync_call' as const, answer: business('not_enough_funds'), now: NOW, timings: T };
      expect(conditionToCheck(input)).toBeNull();
      expect(run('sync_call', business('not_enough_funds'), { attempt: afterUnknown(), conditionCleared: true })).toMatchObject({ status: 'awaiting_funds' });
    });
    it('sync waiting deadline with a live ID -> needs_attention, never failed', () => {
      expect(run('sync_call', business('out_of_stock'), { attempt: afterUnknown({ errorCode: 'out_of_stock' }), order: order({ waitDeadline: ago(1) }) })).toMatchObject({ status: 'needs_attention' });
    });
  });

  describe('unknown outcomes: the SAME ID later, never before a Retry-After; then needs_attention', () => {
    it('sync: first retry after SYNC_RETRY_FIRST_DELAY_MS, then every SYNC_RETRY_INTERVAL_MS', () => {
      expect(step(run('sync_call', timeout))).toEqual({ step: 'sync_call', delayMs: T.SYNC_RETRY_FIRST_DELAY_MS });
      expect(step(run('sync_call', timeout, { attempt: afterUnknown() }))).toEqual({ step: 'sync_call', delayMs: T.SYNC_RETRY_INTERVAL_MS });
    });
    it('a Retry-After longer than the usual delay wins (429, 503, come back later)', () => {
      const limited = { kind: 'unknown' as const, reason: 'rate_limited' as const, message: '429', httpStatus: 429, retryAfterMs: 120_000 };
      expect(step(run('sync_call', limited))).toEqual({ step: 'sync_call', delayMs: 120_000 });
      expect(step(run('async_create', limited, { order: order({ mode: 'async' }) }))).toEqual({ step: 'async_poll', delayMs: 120_000 });
      expect(run('async_poll', limited, { order: order({ mode: 'async' }) })).toMatchObject({ kind: 'stay', delayMs: 120_000 });
    });
    it('an interrupted call counts from when it was sent', () => {
      const d = run('sync_call', { kind: 'interrupted', sentAt: ago(20_000) });
      expect(d).toMatchObject({ rule: 'unknown_outcome', next: { delayMs: T.SYNC_RETRY_FIRST_DELAY_MS - 20_000 }, attempt: { unknownSince: ago(20_000) } });
    });
    it('past UNKNOWN_OUTCOME_WINDOW_MS -> needs_attention, never a new request ID', () => {
      const d = run('sync_call', timeout, { attempt: afterUnknown({ unknownSince: ago(T.UNKNOWN_OUTCOME_WINDOW_MS) }) });
      expect(d).toMatchObject({ status: 'needs_attention', next: null, error: { code: 'unknown_outcome' } });
      expect(d).not.toHaveProperty('newAttempt');
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
    it('still pending when polled -> stay; status error -> a NEW request ID, up to ASYNC_MAX_ATTEMPTS, then failed', () => {
      expect(run('async_poll', { kind: 'success', value: pr('processing'), httpStatus: 200 }, async({ attempt: fresh({ partnerStatus: 'processing' }) }))).toEqual({ kind: 'stay', rule: 'pull_request_pending', delayMs: 5_000 });
      expect(run('async_poll', { kind: 'success', value: pr('error'), httpStatus: 200 }, async())).toMatchObject({ rule: 'pull_request_error', newAttempt: true, next: { step: 'async_create' } });
      expect(run('async_poll', { kind: 'success', value: pr('error'), httpStatus: 200 }, async({ attempt: fresh({ seq: 3 }) }))).toMatchObject({ status: 'failed', error: { code: 'pull_request_error' } });
    });
    it('422 request_id already used -> poll that ID', () => {
      expect(run('async_create', { kind: 'request_id_used', message: 'used', httpStatus: 422 }, async())).toMatchObject({ rule: 'request_id_used', next: { step: 'async_poll', delayMs: 0 }, attempt: { partnerStatus: 'exists' } });
    });
    const notFound = { kind: 'not_found' as const, code: 'pull_request_not_found', message: 'not found', httpStatus: 404 };
    it('404 on an ID the partner never acknowledged -> create again with the SAME ID', () => {
      expect(run('async_poll', notFound, async({ attempt: afterUnknown() }))).toMatchObject({ rule: 'never_reached', next: { step: 'async_create', delayMs: 0 }, attempt: { notFoundSince: 'start' } });
    });
    it('404 after a business error on the re-create -> keep reading until 404s span PULL_REQUEST_SETTLE_MS; then the error is believed', () => {
      const waiting = afterUnknown({ errorCode: 'out_of_stock', errorMessage: 'no stock' });
      expect(run('async_poll', notFound, async({ attempt: waiting }))).toMatchObject({ kind: 'stay', rule: 'not_found_settling', note: { notFoundSince: 'start' } });
      expect(run('async_poll', notFound, async({ attempt: { ...waiting, notFoundSince: ago(T.PULL_REQUEST_SETTLE_MS - 1) } }))).toMatchObject({ kind: 'stay' });
      const settled = run('async_poll', notFound, async({ attempt: { ...waiting, notFoundSince: ago(T.PULL_REQUEST_SETTLE_MS) } }));
      expect(settled).toMatchObject({ rule: 'not_found_settled', status: 'awaiting_stock', next: { step: 'resume_check' }, attempt: { state: 'failed_definitive' } });
      const amount = afterUnknown({ errorCode: 'invalid_amount', errorMessage: 'bad amount', notFoundSince: ago(T.PULL_REQUEST_SETTLE_MS) });
      expect(run('async_poll', notFound, async({ attempt: amount }))).toMatchObject({ status: 'failed', error: { code: 'invalid_amount' } });
    });
    it('the pull request shows up while the order waits on it -> back to in_progress, same ID', () => {
      const waiting = afterUnknown({ errorCode: 'out_of_stock' });
      expect(run('async_poll', { kind: 'success', value: pr('processing'), httpStatus: 200 }, { order: order({ mode: 'async', status: 'awaiting_stock' }), attempt: waiting })).toMatchObject({
        status: 'in_progress',
        attempt: { partnerStatus: 'processing', notFoundSince: 'clear' },
      });
    });
    it('422 "already used" but 404s over the settle window -> used without a pull request: a new ID', () => {
      const used = afterUnknown({ partnerStatus: 'exists', notFoundSince: ago(T.PULL_REQUEST_SETTLE_MS) });
      expect(run('async_poll', notFound, async({ attempt: used }))).toMatchObject({ rule: 'used_but_empty', newAttempt: true });
      expect(run('async_poll', notFound, async({ attempt: { ...used, notFoundSince: ago(1_000) } }))).toMatchObject({ kind: 'stay', rule: 'not_found_settling' });
    });
    it('404 after the partner showed the pull request (a lagging read) -> keep reading; never a new ID', () => {
      const seen = fresh({ partnerStatus: 'waiting' });
      expect(run('async_poll', notFound, async({ attempt: seen }))).toMatchObject({ kind: 'stay', rule: 'not_found_after_seen' });
      expect(run('async_poll', notFound, async({ attempt: { ...seen, notFoundSince: ago(T.UNKNOWN_OUTCOME_WINDOW_MS) } }))).toMatchObject({ status: 'needs_attention' });
    });
  });

  describe('credentials refused -> the circuit opens; nothing is failed; the attempt is as before the call', () => {
    it('sync_call', () => {
      const refused = { kind: 'credentials' as const, code: 'invalid_signature' as const, message: 'bad', httpStatus: 401 };
      expect(run('sync_call', refused)).toMatchObject({ rule: 'credentials', circuit: { code: 'invalid_signature' }, next: { step: 'sync_call', delayMs: 5_000 }, attempt: { state: 'created' } });
      expect(run('async_poll', refused, { order: order({ mode: 'async' }) })).toMatchObject({ kind: 'stay', circuit: { code: 'invalid_signature' } });
    });
  });

  describe('the reconciler (orders without a step of their own) uses the same table', () => {
    const rec = (o: Partial<DecisionInput>) => ({ reconciling: true, ...o });
    it('a card is stored whatever the order’s status', () => {
      for (const status of ['needs_attention', 'failed', 'completed'] as const) {
        expect(run('sync_call', { kind: 'success', value: card(), httpStatus: 200 }, rec({ order: order({ status }), attempt: afterUnknown() }))).toMatchObject({ kind: 'store_card' });
      }
    });
    it('credentials refused opens the circuit here too', () => {
      expect(run('sync_call', { kind: 'credentials', code: 'unauthorized', message: 'no', httpStatus: 401 }, rec({ order: order({ status: 'needs_attention' }), attempt: afterUnknown() }))).toMatchObject({ kind: 'stay', circuit: { code: 'unauthorized' } });
    });
    it('needs_attention + pending pull request -> polling resumes with a fresh window', () => {
      expect(run('async_poll', { kind: 'success', value: pr('waiting'), httpStatus: 200 }, rec({ order: order({ mode: 'async', status: 'needs_attention' }), attempt: afterUnknown({ partnerStatus: 'waiting' }) }))).toMatchObject({
        rule: 'reconcile_resumed',
        status: 'in_progress',
        attempt: { unknownSince: 'restart' },
      });
    });
    it('a failed order never moves; an ID proven dead meanwhile is recorded as such', () => {
      const failed = rec({ order: order({ mode: 'async', status: 'failed' }), attempt: afterUnknown({ partnerStatus: 'waiting' }) });
      expect(run('async_poll', { kind: 'success', value: pr('waiting'), httpStatus: 200 }, failed)).toMatchObject({ kind: 'stay', rule: 'reconcile_unchanged' });
      expect(run('async_poll', { kind: 'success', value: pr('error'), httpStatus: 200 }, failed)).toEqual({ kind: 'stay', rule: 'reconcile_unchanged', delayMs: 0, note: expect.objectContaining({ state: 'failed_definitive' }) });
    });
    it('needs_attention + still no answer -> unchanged (the next pass asks again)', () => {
      expect(run('sync_call', timeout, rec({ order: order({ status: 'needs_attention' }), attempt: afterUnknown() }))).toMatchObject({ kind: 'stay', rule: 'reconcile_unchanged' });
    });
  });

  describe('resume_check of a waiting order', () => {
    const r = (o: Partial<Parameters<typeof decideResume>[0]>) =>
      decideResume({ order: order({ status: 'awaiting_stock', errorCode: 'out_of_stock' }), attempt: fresh({ state: 'failed_definitive' }), now: NOW, timings: T, condition: 'cleared', ...o });
    it('dead ID + condition cleared -> a NEW request ID; live ID -> the SAME one again', () => {
      expect(r({})).toMatchObject({ newAttempt: true, next: { step: 'sync_call' }, status: 'in_progress' });
      const live = r({ attempt: afterUnknown({ errorCode: 'out_of_stock' }) });
      expect(live).toMatchObject({ next: { step: 'sync_call' }, status: 'in_progress' });
      expect(live).not.toHaveProperty('newAttempt');
    });
    it('not cleared, or a read not trusted -> wait again', () => {
      expect(r({ condition: 'not_cleared' })).toEqual({ kind: 'stay', rule: 'still_waiting', delayMs: 60_000 });
      expect(r({ condition: 'unknown' })).toMatchObject({ kind: 'stay' });
    });
    it('deadline: a dead ID fails the order; a live one needs attention', () => {
      expect(r({ order: order({ status: 'awaiting_stock', errorCode: 'out_of_stock', waitDeadline: ago(1) }) })).toMatchObject({ status: 'failed', error: { code: 'out_of_stock' } });
      expect(r({ order: order({ status: 'awaiting_stock', waitDeadline: ago(1) }), attempt: afterUnknown() })).toMatchObject({ status: 'needs_attention' });
    });
    it('re-drive: always the same ID (sync sends it, async reads it or creates it again)', () => {
      expect(redriveStep(order(), fresh())).toBe('sync_call');
      expect(redriveStep(order({ mode: 'async' }), fresh({ partnerStatus: 'processing' }))).toBe('async_poll');
      expect(redriveStep(order({ mode: 'async' }), fresh({ partnerStatus: null }))).toBe('async_create');
    });
  });
});
