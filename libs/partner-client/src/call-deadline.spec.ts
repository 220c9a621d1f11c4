import { callDeadline, transportFailure } from './partner-client';

/**
 * A partner call's one signal: its deadline (an unknown outcome, reason timeout) or the caller's stop (the
 * lease could not be renewed), whichever comes first; cleared with the call, it holds no timer.
 */
describe('callDeadline: one signal for the deadline and the caller\'s stop', () => {
  it('aborts at the deadline with a TimeoutError, which is classified as a timeout', async () => {
    const d = callDeadline(20);
    await new Promise((r) => d.signal.addEventListener('abort', r, { once: true }));
    expect((d.signal.reason as Error).name).toBe('TimeoutError');
    expect(transportFailure(d.signal.reason)).toMatchObject({ kind: 'unknown', reason: 'timeout' });
    d.clear();
  });

  it("aborts with the stop's reason when the caller stops first, already stopped included", () => {
    const stop = new AbortController();
    const d = callDeadline(60_000, stop.signal);
    expect(d.signal.aborted).toBe(false);
    stop.abort(new Error('lease lost'));
    expect(d.signal.aborted).toBe(true);
    expect((d.signal.reason as Error).message).toBe('lease lost');
    d.clear();
    const early = callDeadline(60_000, stop.signal);
    expect(early.signal.aborted).toBe(true);
    early.clear();
  });

  it('cleared: neither the deadline nor a later stop aborts it', async () => {
    const stop = new AbortController();
    const d = callDeadline(10, stop.signal);
    d.clear();
    stop.abort(new Error('late'));
    await new Promise((r) => setTimeout(r, 30));
    expect(d.signal.aborted).toBe(false);
  });
});
