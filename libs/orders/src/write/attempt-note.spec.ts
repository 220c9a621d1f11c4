import { noteSets, unknownWindow } from './attempt-note';

/** An ID of unknown outcome always has its unknown-outcome window: whichever writer moves it to unknown starts it. */
describe('attempt notes: a move to unknown starts the unknown-outcome window', () => {
  it('a note that moves the state to unknown and names no window starts one (kept if one runs)', () => {
    expect(unknownWindow({ state: 'unknown' })).toBe('start');
    expect(noteSets({ state: 'unknown' }, []).sets).toContain('unknown_since = COALESCE(unknown_since, now())');
  });

  it('a window the note names wins; other states start none', () => {
    expect(unknownWindow({ state: 'unknown', unknownSince: 'restart' })).toBe('restart');
    expect(unknownWindow({ state: 'sent' })).toBeUndefined();
    expect(noteSets({ state: 'succeeded' }, []).sets).not.toContain('unknown_since');
  });
});
