import { faultSpecSchema } from '@cardpull/sim-contract';
import { faultHits, faultPlan, longReadLagMs } from '../../bench/chaos/faults';
import { ChaosSettingsError, settingsFromEnv } from '../../bench/chaos/settings';

/**
 * The chaos run's partner: the hostile readings (inventory_unlimited, read_lag after a 422, other_request_id)
 * are on by default beside the other readings and faults, and CHAOS_HOSTILE_READINGS=false leaves them out.
 */
const hostile = ['any/inventory_unlimited', 'pull_request_status/read_lag_after_422', 'pull_request_status/other_request_id', 'pull_requests/other_request_id'];
const keys = (plan: ReturnType<typeof faultPlan>) => Object.keys(faultHits(plan.map((f, i) => ({ ...faultSpecSchema.parse(f), id: `f${i}`, hits: 0 }))));

describe('chaos run: the hostile readings of the partner', () => {
  it('on by default, at modest shares, every spec one the simulator takes; the read lag after a 422 outlasts the settle window', () => {
    const settings = settingsFromEnv({});
    expect(settings.hostileReadings).toBe(true);
    const plan = faultPlan(settings.faultShare, 2000, { hostileReadings: settings.hostileReadings, settleMs: Number(settings.timings.PULL_REQUEST_SETTLE_MS) });
    for (const spec of plan) expect(faultSpecSchema.safeParse(spec).error).toBeUndefined();
    expect(keys(plan)).toEqual(expect.arrayContaining([...hostile, 'any/business_first', 'pull_request_status/read_lag', 'any/rate_limited']));
    const afterUsed = plan.find((f) => f.lag_from === 'already_used')!;
    expect(afterUsed.latency_ms).toBeGreaterThan(Number(settings.timings.PULL_REQUEST_SETTLE_MS));
    expect(plan.filter((f) => f.mode === 'inventory_unlimited' || f.mode === 'other_request_id').map((f) => f.share)).toEqual([0.25, 0.05, 0.05]);
    expect(longReadLagMs(undefined)).toBe(30_000);
  });

  it('CHAOS_HOSTILE_READINGS=false leaves them out, and nothing else; a value that is not a boolean is named', () => {
    const settings = settingsFromEnv({ CHAOS_HOSTILE_READINGS: 'false' });
    expect(settings.hostileReadings).toBe(false);
    const without = keys(faultPlan(settings.faultShare, 2000, { hostileReadings: false }));
    const withThem = keys(faultPlan(settings.faultShare, 2000, { hostileReadings: true }));
    expect(without.filter((k) => hostile.includes(k))).toEqual([]);
    expect(withThem.filter((k) => !hostile.includes(k))).toEqual(without);
    expect(() => settingsFromEnv({ CHAOS_HOSTILE_READINGS: 'maybe' })).toThrow(ChaosSettingsError);
  });
});
