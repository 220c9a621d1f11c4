import { RUNWAY_HYSTERESIS, nextRunwayState, runwayHours, smoothedRate } from './runway';

const T = { approachingHours: 24, belowHours: 6 };

/** Issue 24, item 4: the runway's three states, with hysteresis, and the rate they are read from. */
describe('runway', () => {
  it('ok above the approaching threshold, approaching below it, below under the low one', () => {
    expect(nextRunwayState('ok', 30, T)).toBe('ok');
    expect(nextRunwayState('ok', 23, T)).toBe('approaching');
    expect(nextRunwayState('ok', 5, T)).toBe('below');
    expect(nextRunwayState('ok', null, T)).toBe('ok');
  });

  it('hysteresis: a state is left only a quarter above the threshold it crossed, so a runway hovering at one does not flap', () => {
    expect(nextRunwayState('approaching', 25, T)).toBe('approaching'); // above 24, under 30
    expect(nextRunwayState('approaching', 24 * RUNWAY_HYSTERESIS, T)).toBe('ok');
    expect(nextRunwayState('below', 6.5, T)).toBe('below'); // above 6, under 7.5
    expect(nextRunwayState('below', 8, T)).toBe('approaching');
    expect(nextRunwayState('below', 31, T)).toBe('ok');
    const hovering = [23.9, 24.1, 23.9, 24.1].reduce<string[]>((states, h) => [...states, nextRunwayState((states.at(-1) ?? 'ok') as never, h, T)], []);
    expect(hovering).toEqual(['approaching', 'approaching', 'approaching', 'approaching']);
  });

  it('the runway is the float at the smoothed spend per minute, in hours; nothing spent: endless', () => {
    expect(runwayHours(600_000, 1000)).toBe(10);
    expect(runwayHours(-5, 1000)).toBe(0);
    expect(runwayHours(600_000, 0)).toBeNull();
    expect(smoothedRate(null, 100)).toBe(100);
    expect(smoothedRate(100, 200)).toBeCloseTo(130);
  });
});
