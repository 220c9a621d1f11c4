import { TimeoutError, withTimeout } from './timeout';

describe('withTimeout: a bounded wait that tells a slow answer from a failed one', () => {
  it('answers as the work does when it settles in time', async () => {
    await expect(withTimeout(Promise.resolve(42), 1_000)).resolves.toBe(42);
    await expect(withTimeout(Promise.reject(new Error('down')), 1_000)).rejects.toThrow('down');
  });

  it('rejects with a TimeoutError when the work takes longer', async () => {
    const slow = new Promise((resolve) => setTimeout(resolve, 200));
    const error = await withTimeout(slow, 10).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toBe('no answer within 10 ms');
  });
});
