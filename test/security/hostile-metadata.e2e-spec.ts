import { KEYS, idemKey, useStack } from '../support/stack';

/**
 * A NUL character (\u0000) in metadata, which Postgres' jsonb cannot store (issue 11, opening 7): refused
 * at intake with a 400 naming the field, never a 500 from the database, in a key or a value, at any depth.
 */
describe('security: metadata with a NUL character is a 400 naming the field, not a 500', () => {
  const stack = useStack({ worker: false });

  it.each([
    ['in a value', { note: 'a\u0000b' }],
    ['in a key', { 'k\u0000': 'v' }],
    ['nested in an array', { items: [{ sku: 'x\u0000' }] }],
  ])('%s', async (_where, metadata) => {
    const res = await stack.call('POST', '/v1/orders', {
      key: KEYS.shop,
      body: { gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000, metadata },
      headers: { 'idempotency-key': idemKey('nul') },
    });
    expect([res.status, res.body.errors?.[0]?.code]).toEqual([400, 'invalid_request']);
    expect(JSON.stringify(res.body.errors)).toContain('metadata');
  });
});
