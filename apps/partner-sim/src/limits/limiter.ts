import { LIMIT_KINDS, type LimitKind, type SimLimits, type SimLimitsView } from '@cardpull/sim-contract';

interface Bucket {
  tokens: number;
  at: number;
  inFlight: number;
  admitted: number;
  refused: number;
}

export type Admission = { ok: true; release: () => void } | { ok: false; retryAfterS: number };

/** The kind of a partner call, for its limits. */
export function limitKindOf(method: string, path: string): Exclude<LimitKind, 'any'> {
  if (method === 'POST' && (path === '/partners/v1/cards' || path === '/partners/v1/pull_requests')) return 'create';
  if (method === 'GET' && /^\/partners\/v1\/pull_requests\/[^/]+$/.test(path)) return 'poll';
  return 'read';
}

/**
 * The simulator's rate limiter (SimLimits): a token bucket of `per_second` tokens refilled continuously,
 * and an in-flight count, per kind and for `any`. A call is admitted only when its kind and `any` both
 * admit it; an admitted call holds its in-flight places until its answer is sent (or its connection closes).
 */
export class Limiter {
  private buckets = new Map<LimitKind, Bucket>();

  constructor(
    private limits: SimLimits,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.reset(limits);
  }

  reset(limits: SimLimits): void {
    this.limits = limits;
    this.buckets = new Map(LIMIT_KINDS.map((k) => [k, { tokens: limits[k]?.per_second ?? 0, at: this.now(), inFlight: 0, admitted: 0, refused: 0 }]));
  }

  admit(kind: Exclude<LimitKind, 'any'>): Admission {
    const kinds: LimitKind[] = [kind, 'any'];
    const now = this.now();
    for (const k of kinds) this.refill(k, now);
    const blocking = kinds.find((k) => {
      const limit = this.limits[k];
      const b = this.buckets.get(k)!;
      return (limit?.per_second !== undefined && b.tokens < 1) || (limit?.in_flight !== undefined && b.inFlight >= limit.in_flight);
    });
    if (blocking) {
      this.buckets.get(kind)!.refused++;
      return { ok: false, retryAfterS: this.limits[blocking]?.retry_after_s ?? 1 };
    }
    for (const k of kinds) {
      const b = this.buckets.get(k)!;
      if (this.limits[k]?.per_second !== undefined) b.tokens -= 1;
      b.inFlight++;
    }
    this.buckets.get(kind)!.admitted++;
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        for (const k of kinds) this.buckets.get(k)!.inFlight--;
      },
    };
  }

  view(): SimLimitsView {
    const counts = Object.fromEntries(
      LIMIT_KINDS.map((k) => {
        const b = this.buckets.get(k)!;
        return [k, { admitted: b.admitted, refused: b.refused, in_flight: b.inFlight }];
      }),
    ) as SimLimitsView['counts'];
    return { limits: this.limits, counts };
  }

  private refill(kind: LimitKind, now: number): void {
    const perSecond = this.limits[kind]?.per_second;
    const b = this.buckets.get(kind)!;
    if (perSecond !== undefined) b.tokens = Math.min(perSecond, b.tokens + ((now - b.at) / 1000) * perSecond);
    b.at = now;
  }
}
