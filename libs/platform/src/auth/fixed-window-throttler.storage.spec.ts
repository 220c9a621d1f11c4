import { FixedWindowThrottlerStorage } from './fixed-window-throttler.storage';

describe('FixedWindowThrottlerStorage: RATE_LIMIT_PER_CLIENT requests per RATE_LIMIT_WINDOW_MS, counted in O(1)', () => {
  let now = 1_000_000;
  let storage: FixedWindowThrottlerStorage;
  beforeEach(() => {
    now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    storage = new FixedWindowThrottlerStorage();
  });
  afterEach(() => {
    storage.onApplicationShutdown();
    jest.restoreAllMocks();
  });

  const hit = (key = 'client:a') => storage.increment(key, 10_000, 3, 10_000, 'default');

  it('lets `limit` requests through in a window, refuses the next with the seconds until it may call again', async () => {
    const answers = [await hit(), await hit(), await hit(), await hit()];
    expect(answers.map((a) => a.isBlocked)).toEqual([false, false, false, true]);
    expect(answers.map((a) => a.totalHits)).toEqual([1, 2, 3, 4]);
    now += 2_500;
    const refused = await hit();
    expect(refused).toMatchObject({ isBlocked: true, timeToBlockExpire: 8 });
  });

  it('counts each client on its own', async () => {
    for (let i = 0; i < 4; i++) await hit('client:a');
    expect((await hit('client:b')).isBlocked).toBe(false);
  });

  it('a new window after the block ends starts from zero', async () => {
    for (let i = 0; i < 4; i++) await hit();
    now += 10_000;
    const after = await hit();
    expect(after).toMatchObject({ isBlocked: false, totalHits: 1 });
  });

  it('an unblocked window that ends starts a new count', async () => {
    await hit();
    await hit();
    now += 10_001;
    expect(await hit()).toMatchObject({ isBlocked: false, totalHits: 1, timeToExpire: 10 });
  });

  it('forgets ended windows, so idle clients cost no memory', async () => {
    await hit('client:a');
    await hit('client:b');
    expect(storage.size).toBe(2);
    now += 10_001;
    storage.sweep();
    expect(storage.size).toBe(0);
  });
});
