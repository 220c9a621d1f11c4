import type { LedgerView } from '@cardpull/sim-contract';
import { checkInvariants, declaredDeadWithoutWord, type DbSnapshot } from './invariants';

/**
 * Invariant 2 as checkInvariants reads it from the database: an order gets a new request ID only once the
 * earlier one is dead by the partner's own word about it (async status `error`, or a definitive business
 * error answered to its first send) or by an operator's audited declaration. Small made-up pictures: one
 * order, two request IDs, the second completed with its card; only the first attempt's row changes.
 */
type Attempt = DbSnapshot['attempts'][number];

const T0 = Date.parse('2026-01-01T10:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms);

function picture(first: Partial<Attempt>): { db: DbSnapshot; ledger: LedgerView } {
  const attempt = (requestId: string, seq: number, createdMs: number, rest: Partial<Attempt>): Attempt => ({
    request_id: requestId,
    order_id: 'o1',
    seq,
    state: 'succeeded',
    created_at: at(createdMs),
    call_count: 1,
    unknown_since: null,
    error_code: null,
    partner_status: null,
    declared_dead_at: null,
    ...rest,
  });
  const post = (requestId: string, ms: number): LedgerView['requests'][number] => ({
    at: at(ms).toISOString(),
    finished_at: at(ms + 50).toISOString(),
    method: 'POST',
    path: '/partners/v1/cards',
    request_id: requestId,
    status: 200,
    auth: 'ok',
  });
  return {
    db: {
      orders: [{ id: 'o1', status: 'completed', next_step: null, next_step_at: null, error_code: null, error_message: null, card_id: 'k2' }],
      attempts: [attempt('r1', 1, -10, { state: 'failed_definitive', ...first }), attempt('r2', 2, 1_000, {})],
      cards: [{ id: 'k2', order_id: 'o1', request_id: 'r2', partner_card_id: 'c2', role: 'order', code_enc: Buffer.from('sealed'), pin_enc: null }],
    },
    ledger: {
      requests: [post('r1', 0), post('r2', 1_100)],
      cards: [{ id: 'c2', code: 'CODE000000000002', pin_code: null, amount: 1000, gift_card_code: 'FAST-FREE', request_id: 'r2', via: 'sync', issued_at: at(1_150).toISOString() }],
      pulls: [],
    },
  };
}

const invariant2 = (first: Partial<Attempt>) => {
  const { db, ledger } = picture(first);
  return checkInvariants(db, ledger).filter((p) => p.startsWith('invariant 2'));
};

describe("invariant 2: a new request ID only on the partner's word about the earlier one, or an operator's", () => {
  it.each([
    ['a definitive business error answered to its first send', { error_code: 'out_of_stock', partner_status: 'out_of_stock' }],
    ['not_enough_funds alike', { error_code: 'not_enough_funds', partner_status: 'not_enough_funds' }],
    ['invalid_amount alike', { error_code: 'invalid_amount', partner_status: 'invalid_amount' }],
    ['gift_card_not_found alike', { error_code: 'gift_card_not_found', partner_status: 'gift_card_not_found' }],
    ['async status error', { error_code: 'pull_request_error', partner_status: 'error', unknown_since: at(0) }],
    ["an operator's audited declaration, whatever the partner said", { error_code: 'stored_answer', partner_status: 'out_of_stock', unknown_since: at(0), declared_dead_at: at(500) }],
  ])('holds: %s', (_why, first) => {
    expect(invariant2(first)).toEqual([]);
  });

  it.each([
    ['a business error after a send with an unknown outcome (it may be about the re-send, checked before the ID)', { error_code: 'out_of_stock', partner_status: 'out_of_stock', unknown_since: at(0) }, /r1 ended failed_definitive on out_of_stock \(partner status out_of_stock, after an unknown outcome\)/],
    ['a stored answer inferred from inventory or balance reads', { error_code: 'stored_answer', partner_status: 'out_of_stock', unknown_since: at(0) }, /r1 ended failed_definitive on stored_answer/],
    ['404s over a settle window after a 422 "already used"', { error_code: 'used_without_pull_request', partner_status: 'exists', unknown_since: at(0) }, /r1 ended failed_definitive on used_without_pull_request \(partner status exists/],
    ['nothing recorded at all', {}, /r1 ended failed_definitive on no error code \(partner status none\)/],
  ])('violated: %s', (_why, first, message) => {
    expect(invariant2(first)).toEqual([expect.stringMatching(new RegExp(`^invariant 2: order o1: new request ID without the partner's word or an operator's: ${message.source}`))]);
  });

  it('an earlier request ID that did not fail for good is the older violation', () => {
    expect(invariant2({ state: 'unknown' })).toEqual(['invariant 2: order o1 got a new request ID after r1 ended unknown']);
  });

  it('attempts are read in seq order, whatever order the snapshot lists them in', () => {
    const { db, ledger } = picture({ error_code: 'stored_answer' });
    db.attempts.reverse();
    expect(checkInvariants(db, ledger).filter((p) => p.startsWith('invariant 2'))).toEqual([expect.stringMatching(/r1 ended failed_definitive on stored_answer/)]);
  });

  it('declaredDeadWithoutWord: the same rule for any attempt, the last included (the chaos run counts them)', () => {
    const base = { state: 'failed_definitive', unknown_since: null, error_code: null, partner_status: null, declared_dead_at: null };
    expect(declaredDeadWithoutWord({ ...base, error_code: 'used_without_pull_request' })).toBe(true);
    expect(declaredDeadWithoutWord({ ...base, error_code: 'invalid_amount' })).toBe(false);
    expect(declaredDeadWithoutWord({ ...base, error_code: 'invalid_amount', unknown_since: at(0) })).toBe(true);
    expect(declaredDeadWithoutWord({ ...base, error_code: 'stored_answer', declared_dead_at: at(0) })).toBe(false);
    expect(declaredDeadWithoutWord({ ...base, state: 'unknown' })).toBe(false);
  });
});
