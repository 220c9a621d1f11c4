import type { FacialValues } from './types';

export type AmountCheck = { ok: true } | { ok: false; message: string };

/**
 * Whether `amount` is a valid face value of a gift card (spec, facial_values). Shared by the simulator
 * (to answer invalid_amount like the partner) and the API (to refuse an order before it is stored).
 *  - fixed: only the listed amounts;
 *  - free: min..max inclusive, on the grid min + k*step. Non-integer bounds or steps are compared with a
 *    tolerance of 1e-9 steps; a step <= 0 (not meaningful, not shown by the spec) allows every integer in range.
 * Amounts are integers (the Card's `amount` is an integer): a fraction is never valid.
 */
export function checkAmount(giftCardCode: string, facialValues: FacialValues, amount: number): AmountCheck {
  if (!Number.isSafeInteger(amount) || amount <= 0) {
    return { ok: false, message: `Amount must be a positive integer, got ${String(amount)}` };
  }
  if (facialValues.type === 'fixed') {
    if (facialValues.amounts.includes(amount)) return { ok: true };
    return {
      ok: false,
      message: `Invalid amount ${amount} for gift card ${giftCardCode}: allowed amounts are ${facialValues.amounts.join(', ')}`,
    };
  }
  const { min_amount: min, max_amount: max, step_amount: step } = facialValues;
  const rangeText = `between ${min} and ${max} in steps of ${step}`;
  if (amount < min || amount > max) {
    return { ok: false, message: `Invalid amount ${amount} for gift card ${giftCardCode}: must be ${rangeText}` };
  }
  if (step > 0) {
    const k = (amount - min) / step;
    if (Math.abs(k - Math.round(k)) > 1e-9) {
      return { ok: false, message: `Invalid amount ${amount} for gift card ${giftCardCode}: must be ${rangeText}` };
    }
  }
  return { ok: true };
}
