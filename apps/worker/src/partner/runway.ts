/**
 * Runway (issue 24, item 4): how many hours the float lasts at the recent spend rate, and a three-state alert
 * with hysteresis instead of one threshold: `approaching` below RUNWAY_APPROACHING_HOURS, `below` below
 * RUNWAY_BELOW_HOURS, and back (`recovered`, then ok) only once the runway is a quarter above the threshold
 * it crossed, so a runway that hovers at a threshold does not flap.
 */
export type RunwayState = 'ok' | 'approaching' | 'below';

/** A state is left only this far above the threshold that entered it. */
export const RUNWAY_HYSTERESIS = 1.25;
/** The weight of the newest rate in the smoothed one (an exponentially weighted moving average per sample). */
export const RUNWAY_SMOOTHING = 0.3;

export interface RunwayThresholds {
  approachingHours: number;
  belowHours: number;
}

/** The state after `prev`, given the runway now (null: no spending, endless). */
export function nextRunwayState(prev: RunwayState, hours: number | null, t: RunwayThresholds): RunwayState {
  const h = hours ?? Number.POSITIVE_INFINITY;
  if (h < t.belowHours || (prev === 'below' && h < t.belowHours * RUNWAY_HYSTERESIS)) return 'below';
  if (h < t.approachingHours || (prev !== 'ok' && h < t.approachingHours * RUNWAY_HYSTERESIS)) return 'approaching';
  return 'ok';
}

/** The smoothed spend per minute: the newest window's rate weighed in (the first sample takes it as it is). */
export function smoothedRate(previous: number | null, newest: number): number {
  return previous === null ? newest : RUNWAY_SMOOTHING * newest + (1 - RUNWAY_SMOOTHING) * previous;
}

/** Hours the float lasts at `perMinute` (null: nothing is spent; 0 when the float is gone). */
export function runwayHours(float: number, perMinute: number): number | null {
  if (perMinute <= 0) return null;
  return Math.max(0, float) / perMinute / 60;
}
