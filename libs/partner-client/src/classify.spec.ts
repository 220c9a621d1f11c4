import { classify } from './classify';
import type { PartnerEndpoint } from './outcome';

const envelope = (code: string, status = 'unprocessable_entity') => ({ errors: [{ code, message: `msg ${code}` }], status });
const card = { id: 'c', code: 'X', amount: 1000, gift_card_code: 'G', pdf_url: 'u', expire_at: 't', pin_code: null };
const parseCard = (b: unknown) => ((b as { card?: unknown }).card ? (b as { card: typeof card }) : undefined);
const k = (endpoint: PartnerEndpoint, status: number, body: unknown) => classify(endpoint, status, body, parseCard);

describe('ARCHITECTURE.md "Partner calls and their classification", row by row', () => {
  it('200 with a card -> success', () => {
    expect(k('createCard', 200, { card })).toMatchObject({ kind: 'success', value: { card } });
  });
  it('200 without a readable card -> unknown (a card we cannot read is not a card)', () => {
    expect(k('createCard', 200, { nothing: true })).toMatchObject({ kind: 'unknown', reason: 'unparseable' });
    expect(k('createCard', 200, undefined)).toMatchObject({ kind: 'unknown', reason: 'unparseable' });
  });
  it.each([
    ['gift_card_not_found', 404, 'not_found'],
    ['invalid_amount', 422, 'unprocessable_entity'],
    ['out_of_stock', 422, 'unprocessable_entity'],
    ['not_enough_funds', 422, 'unprocessable_entity'],
  ])('%s -> definitive failure of this request ID', (code, status, envStatus) => {
    for (const ep of ['createCard', 'createPullRequest'] as const) {
      expect(k(ep, status, envelope(code, envStatus))).toMatchObject({ kind: 'definitive', code, message: `msg ${code}` });
    }
  });
  it('a business code on a status that does not go with it is not trusted -> unknown', () => {
    expect(k('createCard', 500, envelope('out_of_stock'))).toMatchObject({ kind: 'unknown', reason: 'server_error' });
    expect(k('createCard', 200 + 222, envelope('gift_card_not_found'))).toMatchObject({ kind: 'unknown' });
  });
  it.each(['unauthorized', 'invalid_signature'])('401 %s -> credentials (nothing is failed)', (code) => {
    expect(k('createCard', 401, envelope(code, 'unauthorized'))).toMatchObject({ kind: 'credentials', code });
    expect(k('getBalance', 401, envelope(code, 'unauthorized'))).toMatchObject({ kind: 'credentials', code });
  });
  it('422 unprocessable_entity on pull-request creation -> request ID already used', () => {
    expect(k('createPullRequest', 422, envelope('unprocessable_entity'))).toMatchObject({ kind: 'request_id_used' });
  });
  it('422 unprocessable_entity anywhere else -> unknown', () => {
    expect(k('createCard', 422, envelope('unprocessable_entity'))).toMatchObject({ kind: 'unknown', reason: 'unexpected' });
  });
  it.each(['pull_request_not_found', 'card_not_found'])('404 %s when polling -> not found (create again with the same ID)', (code) => {
    expect(k('getPullRequest', 404, envelope(code, 'not_found'))).toMatchObject({ kind: 'not_found', code });
  });
  it('404 card_not_found on GET /cards/:id -> not found', () => {
    expect(k('getCard', 404, envelope('card_not_found', 'not_found'))).toMatchObject({ kind: 'not_found' });
  });
  it('a 404 without the envelope (wrong base URL, proxy page) -> unknown, never "not found"', () => {
    expect(k('getPullRequest', 404, undefined)).toMatchObject({ kind: 'unknown', reason: 'unexpected' });
  });
  it.each([
    [500, undefined, 'server_error'],
    [502, { html: true }, 'server_error'],
    [503, envelope('service_unavailable', 'service_unavailable'), 'server_error'],
    [429, undefined, 'rate_limited'],
    [409, envelope('pull_in_progress', 'conflict'), 'in_progress'],
    [418, envelope('teapot', 'teapot'), 'unexpected'],
    [400, envelope('bad_request', 'bad_request'), 'unexpected'],
  ])('HTTP %d -> unknown (%s): retry the same request ID', (status, body, reason) => {
    expect(k('createCard', status, body)).toMatchObject({ kind: 'unknown', reason });
  });
  it('"come back later" in a 2xx shape (202, or a body with only a status) -> unknown (in_progress), never a card', () => {
    expect(k('createCard', 202, { status: 'processing' })).toMatchObject({ kind: 'unknown', reason: 'in_progress' });
    expect(k('createCard', 202, undefined)).toMatchObject({ kind: 'unknown', reason: 'in_progress' });
    expect(k('createCard', 200, { status: 'pending' })).toMatchObject({ kind: 'unknown', reason: 'in_progress' });
  });
});
