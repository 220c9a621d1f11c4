/** A Retry-After longer than this is taken as this (a partner asking for more is misconfigured or hostile). */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/**
 * The wait a `Retry-After` header asks for, in milliseconds (RFC 9110 §10.2.3): delay-seconds, or an
 * HTTP-date. A date is read against the partner's own `Date` header when it sent one, so our clock's skew
 * does not matter; otherwise against `now`. Undefined when absent or unreadable; clamped to
 * 0..MAX_RETRY_AFTER_MS.
 */
export function retryAfterMs(retryAfter: unknown, date?: unknown, now = Date.now()): number | undefined {
  const value = Array.isArray(retryAfter) ? retryAfter[0] : retryAfter;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const text = value.trim();
  let ms: number;
  if (/^\d+$/.test(text)) {
    ms = Number(text) * 1000;
  } else {
    // An HTTP-date names its weekday and month; Date.parse alone would read "-5" as a year.
    const at = /[A-Za-z]{3}/.test(text) ? Date.parse(text) : Number.NaN;
    if (Number.isNaN(at)) return undefined;
    const partnerNow = typeof date === 'string' ? Date.parse(date) : Number.NaN;
    ms = at - (Number.isNaN(partnerNow) ? now : partnerNow);
  }
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms));
}
