import { requestHash, uuidv7 } from './ids';

describe('ids: order ids are UUID v7 (time-ordered), request hashes tell bodies apart', () => {
  it('1,000 ids in a row (across several 4 KB blocks of randomness): all distinct, all v7 with the RFC variant, in the order of their times', () => {
    const ids = Array.from({ length: 1_000 }, (_, i) => uuidv7(1_700_000_000_000 + i));
    expect(new Set(ids).size).toBe(1_000);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(ids[0]!.replace(/-/g, '').slice(0, 12)).toBe((1_700_000_000_000).toString(16).padStart(12, '0'));
  });

  it('the same body hashes the same (field order aside); another amount or mode does not', () => {
    const a = requestHash({ gift_card_code: 'X', amount: 100, mode: 'sync' });
    expect(requestHash({ mode: 'sync', amount: 100, gift_card_code: 'X' })).toBe(a);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(requestHash({ gift_card_code: 'X', amount: 101, mode: 'sync' })).not.toBe(a);
    expect(requestHash({ gift_card_code: 'X', amount: 100, mode: 'async' })).not.toBe(a);
  });
});
