import type { LedgerView, DbSnapshot } from '@cardpull/testing';
import { inDoubt, intakeConsistency, invariantViolations, moneyCounts, notTerminal, overlappingPosts, secretsInText } from '../../bench/chaos/verify';

/**
 * The chaos run's verdict must catch what it claims to catch: each check against a made-up ledger and
 * database with exactly one thing wrong (and the same picture without it).
 */
type Req = LedgerView['requests'][number];
type Card = LedgerView['cards'][number];
type Pull = LedgerView['pulls'][number];
type Attempt = DbSnapshot['attempts'][number];

const T0 = Date.parse('2026-01-01T10:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();
const post = (requestId: string, atMs: number, opts: Partial<Req> = {}): Req => ({
  at: at(atMs),
  finished_at: at(atMs + 50),
  method: 'POST',
  path: '/partners/v1/cards',
  request_id: requestId,
  status: 200,
  auth: 'ok',
  ...opts,
});
const card = (id: string, requestId: string, code = `CODE${id.padStart(12, '0')}`): Card => ({
  id,
  code,
  pin_code: '123456',
  amount: 1000,
  gift_card_code: 'FAST-FREE',
  request_id: requestId,
  via: 'sync',
  issued_at: at(100),
});
const pull = (requestId: string, acceptedMs: number, finishedMs: number | null, outcome: Pull['outcome']): Pull => ({
  request_id: requestId,
  via: 'sync',
  accepted_at: at(acceptedMs),
  finished_at: finishedMs === null ? null : at(finishedMs),
  outcome,
  card_id: outcome === 'card' ? `card-of-${requestId}` : null,
  error_code: outcome === 'error' ? 'out_of_stock' : null,
});

const attempt = (requestId: string, seq: number, state: string, createdMs: number, rest: Partial<Attempt> = {}): Attempt => ({
  request_id: requestId,
  order_id: 'o1',
  seq,
  state,
  created_at: new Date(T0 + createdMs),
  call_count: 1,
  unknown_since: null,
  error_code: null,
  partner_status: null,
  declared_dead_at: null,
  ...rest,
});

function picture(): { db: DbSnapshot; ledger: LedgerView } {
  return {
    db: {
      orders: [{ id: 'o1', status: 'completed', next_step: null, next_step_at: null, error_code: null, error_message: null, card_id: 'k1' }],
      attempts: [attempt('r1', 1, 'succeeded', -10)],
      cards: [{ id: 'k1', order_id: 'o1', request_id: 'r1', partner_card_id: 'c1', role: 'order', code_enc: Buffer.from('encrypted'), pin_enc: Buffer.from('encrypted') }],
    },
    ledger: { requests: [post('r1', 0)], cards: [card('c1', 'r1')], pulls: [pull('r1', 0, 100, 'card')] },
  };
}

describe('chaos verdict', () => {
  it('finds nothing in a clean picture', () => {
    const { db, ledger } = picture();
    expect([
      ...invariantViolations(db, ledger),
      ...Object.values(moneyCounts(db, ledger)).flat(),
      ...overlappingPosts(ledger, 2000),
      ...notTerminal(db, 300),
      ...intakeConsistency(['o1'], db),
    ]).toEqual([]);
  });

  it('a card issued for one of our request IDs and not stored', () => {
    const { db, ledger } = picture();
    db.cards = [];
    expect(invariantViolations(db, ledger).join()).toMatch(/card c1 issued for request ID r1 is not stored/);
  });

  it('a card issued for a request ID we do not know (a lost card)', () => {
    const { db, ledger } = picture();
    ledger.requests.push(post('r9', 10));
    ledger.cards.push(card('c9', 'r9'));
    expect(invariantViolations(db, ledger).join('\n')).toMatch(/lost card: card c9 was issued for request ID r9/);
  });

  it('an order issued two cards', () => {
    const { db, ledger } = picture();
    db.attempts[0] = attempt('r1', 1, 'failed_definitive', -10, { error_code: 'out_of_stock' });
    db.attempts.push(attempt('r2', 2, 'succeeded', 500));
    ledger.requests.push(post('r2', 600));
    ledger.cards.push(card('c2', 'r2'));
    expect(invariantViolations(db, ledger).join()).toMatch(/order o1 was issued 2 cards/);
  });

  it('three of the money counts: a lost card, an order that caused two cards, a new request ID while an earlier one could still yield a card', () => {
    const { db, ledger } = picture();
    // r1's POST timed out (hang) while the partner pulled its card; the order moved on to r2 anyway.
    ledger.requests = [post('r1', 0, { fault: 'hang', finished_at: null }), post('r2', 5000)];
    ledger.cards = [card('c1', 'r1'), card('c2', 'r2')];
    ledger.pulls = [pull('r1', 0, 100, 'card'), pull('r2', 5000, 5100, 'card')];
    db.attempts = [attempt('r1', 1, 'unknown', -10, { unknown_since: new Date(T0 + 2000) }), attempt('r2', 2, 'succeeded', 4000)];
    db.cards = [{ id: 'k2', order_id: 'o1', request_id: 'r2', partner_card_id: 'c2', role: 'order', code_enc: Buffer.from('x'), pin_enc: null }];
    db.orders[0]!.card_id = 'k2';
    const money = moneyCounts(db, ledger);
    expect(money.lostCards).toEqual([expect.stringMatching(/card c1 issued for request ID r1 \(order o1\) is not stored/)]);
    expect(money.ordersWithTwoCards).toEqual([expect.stringMatching(/order o1 caused 2 cards/)]);
    expect(money.newIdsWhileLive).toEqual([expect.stringMatching(/order o1: request ID r2 minted .* while r1 could still yield a card/)]);
    expect(invariantViolations(db, ledger).join()).toMatch(/invariant 2: order o1 got a new request ID after r1 ended unknown/);
  });

  it('a new request ID is fine once the earlier one ended in error, or when the partner never ran a pull under it', () => {
    const { db, ledger } = picture();
    db.attempts = [
      attempt('r0', 0, 'failed_definitive', -30, { error_code: 'out_of_stock', partner_status: 'out_of_stock' }),
      attempt('rx', 1, 'failed_definitive', -20, { error_code: 'pull_request_error', partner_status: 'error' }),
      attempt('r1', 2, 'succeeded', -10),
    ];
    // r0 was refused (out of stock) before the partner ran anything; rx's pull ended in error before r1 was minted.
    ledger.pulls = [pull('rx', -25, -15, 'error'), pull('r1', 0, 100, 'card')];
    expect(moneyCounts(db, ledger).newIdsWhileLive).toEqual([]);
    expect(moneyCounts(db, ledger).declaredDeadWithoutOperator).toEqual([]);
    // rx's pull still running when r1 was minted (it ended in error only later): r1 was minted too early.
    ledger.pulls[0] = pull('rx', -25, 50, 'error');
    expect(moneyCounts(db, ledger).newIdsWhileLive).toEqual([expect.stringMatching(/r1 minted .* while rx could still yield a card/)]);
  });

  it("the fourth money count: request IDs declared dead without the partner's word or an operator's, the order's last one included", () => {
    const { db, ledger } = picture();
    // r1's first send had no answer; a re-send met out_of_stock and the worker inferred (from an inventory
    // read) that this was r1's stored answer: r2 minted. r2's order failed on 404s after a 422 "already used".
    db.attempts = [
      attempt('r1', 1, 'failed_definitive', -10, { error_code: 'stored_answer', partner_status: 'out_of_stock', unknown_since: new Date(T0) }),
      attempt('r2', 2, 'failed_definitive', 4000, { error_code: 'used_without_pull_request', partner_status: 'exists', unknown_since: new Date(T0 + 4100) }),
    ];
    db.orders = [{ id: 'o1', status: 'failed', next_step: null, next_step_at: null, error_code: 'used_without_pull_request', error_message: 'no pull request', card_id: null }];
    db.cards = [];
    ledger.requests = [post('r1', 0, { fault: 'hang', finished_at: null }), post('r2', 4100)];
    ledger.cards = [];
    ledger.pulls = [];
    expect(moneyCounts(db, ledger).declaredDeadWithoutOperator).toEqual([
      "order o1: request ID r1 declared dead without the partner's word or an operator's (error code stored_answer, partner status out_of_stock, after an unknown outcome)",
      "order o1: request ID r2 declared dead without the partner's word or an operator's (error code used_without_pull_request, partner status exists, after an unknown outcome)",
    ]);
    expect(invariantViolations(db, ledger)).toEqual([expect.stringMatching(/^invariant 2: order o1: new request ID without the partner's word or an operator's: r1 ended failed_definitive on stored_answer/)]);
    // An operator declared both dead (audited): nothing to count.
    for (const a of db.attempts) a.declared_dead_at = new Date(T0 + 60_000);
    expect(moneyCounts(db, ledger).declaredDeadWithoutOperator).toEqual([]);
    expect(invariantViolations(db, ledger)).toEqual([]);
  });

  it('one request ID in flight twice at once', () => {
    const { ledger } = picture();
    ledger.requests = [post('r1', 0, { finished_at: null, fault: 'hang' }), post('r1', 1500)];
    expect(overlappingPosts(ledger, 2000)).toEqual([expect.stringMatching(/request ID r1 sent twice at once/)]);
    // After our client's timeout the first one no longer counts, even if the partner still holds it.
    ledger.requests = [post('r1', 0, { finished_at: null, fault: 'hang' }), post('r1', 2500)];
    expect(overlappingPosts(ledger, 2000)).toEqual([]);
  });

  it('a card code or PIN in a text', () => {
    const { ledger } = picture();
    const code = ledger.cards[0]!.code;
    expect(secretsInText('a log', `{"msg":"stored","code":"${code}"}`, ledger)).toEqual([expect.stringMatching(/secrets in a log: 1 \(card c1: code\)/)]);
    expect(secretsInText('a log', '{"pin":"123456"}', ledger)).toEqual([expect.stringMatching(/card c1: PIN/)]);
    expect(secretsInText('a log', '{"msg":"card c1 stored"}', ledger)).toEqual([]);
  });

  it('orders not terminal (an order in doubt, still asked, is not), and orders the API confirmed that are not in the database', () => {
    const { db } = picture();
    db.orders.push({ id: 'o2', status: 'in_progress', next_step: 'async_poll', next_step_at: new Date(T0), error_code: null, error_message: null, card_id: null });
    expect(notTerminal(db, 300)).toEqual([expect.stringMatching(/^1 orders not terminal 300 s after the faults stopped \(in_progress 1\)/)]);
    // An order waiting on a request ID of unknown outcome that its step still asks about is in doubt, not stuck.
    db.orders.push({ id: 'o4', status: 'in_progress', next_step: 'sync_call', next_step_at: new Date(T0), error_code: null, error_message: null, card_id: null });
    db.attempts.push(attempt('r4', 1, 'unknown', 0, { order_id: 'o4', unknown_since: new Date(T0), error_code: 'out_of_stock' }));
    expect(inDoubt(db)).toEqual([{ orderId: 'o4', requestId: 'r4', lastAnswer: 'out_of_stock' }]);
    expect(notTerminal(db, 300)).toEqual([expect.stringMatching(/^1 orders not terminal 300 s after the faults stopped \(in_progress 1\): o2 /)]);
    expect(intakeConsistency(['o1', 'o3', 'o4'], db)).toEqual([
      expect.stringMatching(/1 orders answered 202\/200 by the API are not in the database: o3/),
      expect.stringMatching(/1 orders in the database were never confirmed to the caller.*o2/),
    ]);
  });
});
