import { isUuid } from './order-input';

describe('isUuid: only ids Postgres can read reach a query (anything else is "not found", never a 500)', () => {
  it.each([['0193a1f2-7c4e-7d2a-9b1e-3f5c6d7e8a90'], ['0193A1F2-7C4E-7D2A-9B1E-3F5C6D7E8A90']])('accepts %s', (id) => {
    expect(isUuid(id)).toBe(true);
  });

  it.each([['-'.repeat(36)], ['a'.repeat(36)], ['0193a1f2-7c4e-7d2a-9b1e-3f5c6d7e8a9'], ['0193a1f27c4e7d2a9b1e3f5c6d7e8a90']])('refuses %s', (id) => {
    expect(isUuid(id)).toBe(false);
  });
});
