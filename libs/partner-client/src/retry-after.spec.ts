import { MAX_RETRY_AFTER_MS, retryAfterMs } from './retry-after';

describe('Retry-After (RFC 9110): how long the partner asks us to wait before the same request ID again', () => {
  it('delay-seconds', () => {
    expect(retryAfterMs('0')).toBe(0);
    expect(retryAfterMs('7')).toBe(7_000);
    expect(retryAfterMs([' 3 '])).toBe(3_000);
  });

  it('an HTTP-date is read against the partner’s own Date header, so our clock’s skew does not matter', () => {
    const partnerNow = Date.parse('Tue, 24 Nov 2026 10:00:00 GMT');
    const ourSkewedNow = partnerNow + 3_600_000;
    expect(retryAfterMs('Tue, 24 Nov 2026 10:00:30 GMT', 'Tue, 24 Nov 2026 10:00:00 GMT', ourSkewedNow)).toBe(30_000);
    expect(retryAfterMs('Tue, 24 Nov 2026 10:00:30 GMT', undefined, partnerNow)).toBe(30_000);
  });

  it('absent or unreadable: no wait asked; in the past: 0; absurdly long: capped', () => {
    expect(retryAfterMs(undefined)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs('-5')).toBeUndefined();
    expect(retryAfterMs('Tue, 24 Nov 2026 09:00:00 GMT', 'Tue, 24 Nov 2026 10:00:00 GMT')).toBe(0);
    expect(retryAfterMs('99999999')).toBe(MAX_RETRY_AFTER_MS);
  });
});
