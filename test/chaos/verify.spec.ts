import type { LedgerView } from '@cardpull/testing';
import type { DbSnapshot } from '../support/invariants';
import { intakeConsistency, invariantViolations, notTerminal, overlappingPosts, secretsInText, unjustifiedReplacements } from '../../bench/chaos/verify';

/**
 * The chaos run's verdict must catch what it claims to catch: each check against a made-up ledger and
 * database with exactly one thing wrong (and the same picture without it).
 */
type Req = LedgerView['requests'][number];
type Card = LedgerView['cards'][number];

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

function picture(): { db: DbSnapshot; ledger: LedgerView } {
  return {
    db: {
      orders: [{ id: 'o1', status: 'completed', next_step: null, next_step_at: null, error_code: null, error_message: null, card_id: 'k1' }],
      attempts: [{ request_id: 'r1', order_id: 'o1', seq: 1, state: 'succeeded', created_at: new Date(T0 - 10), call_count: 1 }],
      cards: [{ id: 'k1', order_id: 'o1', request_id: 'r1', partner_card_id: 'c1', role: 'order', code_enc: Buffer.from('encrypted'), pin_enc: Buffer.from('encrypted') }],
    },
    ledger: { requests: [post('r1', 0)], cards: [card('c1', 'r1')], pulls: [] },
  };
}

describe('chaos verdict', () => {
  it('finds nothing in a clean picture', () => {
    const { db, ledger } = picture();
    expect([
      ...invariantViolations(db, ledger),
      ...unjustifiedReplacements(db, ledger),
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
    db.attempts[0]!.state = 'failed_definitive';
    db.attempts.push({ request_id: 'r2', order_id: 'o1', seq: 2, state: 'succeeded', created_at: new Date(T0 + 500), call_count: 1 });
    ledger.requests.push(post('r2', 600));
    ledger.cards.push(card('c2', 'r2'));
    expect(invariantViolations(db, ledger).join()).toMatch(/order o1 was issued 2 cards/);
  });

  it('a request ID replaced after an unknown outcome, by our states (invariant 2) and by the partner (its answers)', () => {
    const { db, ledger } = picture();
    // r1's POST timed out (hang), yet the order moved on to r2.
    ledger.requests = [post('r1', 0, { fault: 'hang', finished_at: null }), post('r2', 5000)];
    ledger.cards = [card('c1', 'r1'), card('c2', 'r2')];
    db.attempts = [
      { request_id: 'r1', order_id: 'o1', seq: 1, state: 'unknown', created_at: new Date(T0 - 10), call_count: 1 },
      { request_id: 'r2', order_id: 'o1', seq: 2, state: 'succeeded', created_at: new Date(T0 + 4000), call_count: 1 },
    ];
    db.cards = [{ id: 'k2', order_id: 'o1', request_id: 'r2', partner_card_id: 'c2', role: 'order', code_enc: Buffer.from('x'), pin_enc: null }];
    db.orders[0]!.card_id = 'k2';
    expect(invariantViolations(db, ledger).join()).toMatch(/invariant 2: order o1 got a new request ID after r1 ended unknown \(a request ID was replaced/);
    // The same, with our database claiming a definitive failure the partner never gave.
    db.attempts[0]!.state = 'failed_definitive';
    expect(unjustifiedReplacements(db, ledger)).toEqual([expect.stringMatching(/request ID replaced after an unknown outcome: order o1 attempt 1 \(r1\).*hang.*replaced by r2/)]);
  });

  it('accepts a replacement after a definitive failure (422, or a pull request that ended in error)', () => {
    const { db, ledger } = picture();
    db.attempts = [
      { request_id: 'r0', order_id: 'o1', seq: 0, state: 'failed_definitive', created_at: new Date(T0 - 30), call_count: 1 },
      { request_id: 'rx', order_id: 'o1', seq: 1, state: 'failed_definitive', created_at: new Date(T0 - 20), call_count: 1 },
      { request_id: 'r1', order_id: 'o1', seq: 2, state: 'succeeded', created_at: new Date(T0 - 10), call_count: 1 },
    ];
    ledger.requests.unshift(post('r0', -40, { status: 422 }), post('rx', -30, { path: '/partners/v1/pull_requests', fault: 'async_error' }));
    expect(unjustifiedReplacements(db, ledger)).toEqual([]);
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

  it('orders not terminal, and orders the API confirmed that are not in the database', () => {
    const { db } = picture();
    db.orders.push({ id: 'o2', status: 'in_progress', next_step: 'async_poll', next_step_at: new Date(T0), error_code: null, error_message: null, card_id: null });
    expect(notTerminal(db, 300)).toEqual([expect.stringMatching(/^1 orders not terminal 300 s after the faults stopped \(in_progress 1\)/)]);
    expect(intakeConsistency(['o1', 'o3'], db)).toEqual([
      expect.stringMatching(/1 orders answered 202\/200 by the API are not in the database: o3/),
      expect.stringMatching(/1 orders in the database were never confirmed to the caller.*o2/),
    ]);
  });
});
