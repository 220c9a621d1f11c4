import { checkAmount } from './amounts';

const fixed = { type: 'fixed' as const, amounts: [1000, 2500, 5000] };
const free = { type: 'free' as const, min_amount: 500, max_amount: 50000, step_amount: 100 };

describe('spec "facial_values": which amounts are valid', () => {
  it('fixed: only the listed amounts; the message lists them', () => {
    expect(checkAmount('G', fixed, 2500)).toEqual({ ok: true });
    const bad = checkAmount('G', fixed, 2000);
    expect(bad).toEqual({ ok: false, message: expect.stringContaining('1000, 2500, 5000') });
  });

  it.each([
    [500, true, 'min itself'],
    [50000, true, 'max itself'],
    [600, true, 'one step above min'],
    [49900, true, 'one step below max'],
    [499, false, 'one below min'],
    [50001, false, 'one above max'],
    [550, false, 'between steps'],
    [50100, false, 'on the grid but above max'],
    [400, false, 'on the grid but below min'],
  ])('free: %d is %s (%s); the message states range and step', (amount, ok, _why) => {
    const r = checkAmount('G', free, amount);
    expect(r.ok).toBe(ok);
    if (!r.ok) expect(r.message).toContain('between 500 and 50000 in steps of 100');
  });

  it('free: the grid starts at min, not at zero', () => {
    const odd = { type: 'free' as const, min_amount: 250, max_amount: 1000, step_amount: 100 };
    expect(checkAmount('G', odd, 350).ok).toBe(true);
    expect(checkAmount('G', odd, 300).ok).toBe(false);
  });

  it.each([0, -100, 10.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60])('%p is never a valid amount', (amount) => {
    expect(checkAmount('G', free, amount).ok).toBe(false);
    expect(checkAmount('G', fixed, amount).ok).toBe(false);
  });
});
