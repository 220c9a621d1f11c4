import Redis from 'ioredis';
import { createTestRedis, type TestRedis } from '@cardpull/testing';
import { FleetCounters, leaseSize } from './fleet-counters';

/**
 * The abuse limits' counts on a real Redis (own key prefix). Each FleetCounters has its own connection, as
 * each API process does: what one counts, the others see.
 */
describe('FleetCounters (real Redis): the abuse limits counted once across the fleet', () => {
  let redis: TestRedis;
  const made: FleetCounters[] = [];
  const warnings: string[] = [];
  const counters = (client: Redis | null = new Redis(redis.url, { maxRetriesPerRequest: 1 })) => {
    const c = new FleetCounters(client, { prefix: redis.prefix, log: { warn: (_o, m) => warnings.push(m) } });
    made.push(c);
    return c;
  };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  beforeAll(async () => {
    redis = await createTestRedis('abuse');
  });
  beforeEach(async () => {
    warnings.length = 0;
    await redis.flush();
  });
  afterEach(() => {
    for (const c of made.splice(0)) c.close();
  });
  afterAll(() => redis.close());

  it('attempts: 3 allowed per window across two processes; the next is refused, even a look without recording; other names are apart', async () => {
    const [a, b] = [counters(), counters()];
    expect(await a.attempt(['auth:1.2.3.4'], [3], 60_000, 'x1')).toBe(true);
    expect(await b.attempt(['auth:1.2.3.4'], [3], 60_000, 'x2')).toBe(true);
    expect(await a.attempt(['auth:1.2.3.4'], [3], 60_000, 'x3')).toBe(true);
    expect(await b.attempt(['auth:1.2.3.4'], [3], 60_000, 'x4')).toBe(false);
    expect(await a.attempt(['auth:1.2.3.4'], [3], 60_000, null)).toBe(false);
    expect(await a.attempt(['auth:5.6.7.8'], [3], 60_000, null)).toBe(true);
  });

  /** A client whose script calls (EVALSHA/EVAL) are counted. */
  const counted = () => {
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    const calls = { scripts: 0 };
    const sendCommand = client.sendCommand.bind(client);
    client.sendCommand = ((command: { name: string }) => {
      if (command.name === 'evalsha' || command.name === 'eval') calls.scripts++;
      return sendCommand(command as never);
    }) as typeof client.sendCommand;
    return { client, calls };
  };
  /** Resolves once `c` has heard (on its subscription) of an attempt recorded under `name` by any process. */
  const heard = (c: FleetCounters, name: string) =>
    new Promise<void>((resolve) => {
      const looks = (c as unknown as { looks: { drop(keys: string[]): void } }).looks;
      const drop = looks.drop.bind(looks);
      looks.drop = (keys: string[]) => {
        drop(keys);
        if (keys.includes(`${redis.prefix}:{abuse}:${name}`)) resolve();
      };
    });
  /** Until the counters' subscription is live (a look is then kept): the first look of a name that allows. */
  const live = async (c: FleetCounters, calls: { scripts: number }) => {
    for (let i = 0; ; i++) {
      const before = calls.scripts;
      expect(await c.attempt([`auth:warm-${i}`], [3], 60_000, null)).toBe(true);
      expect(await c.attempt([`auth:warm-${i}`], [3], 60_000, null)).toBe(true);
      if (calls.scripts === before + 1) return;
      await sleep(20);
    }
  };

  it('a look Redis allowed is answered from memory (issue 22): 200 looks of one address, concurrent or not, cost one script', async () => {
    const { client, calls } = counted();
    const a = counters(client);
    await live(a, calls);
    const before = calls.scripts;
    const answers = await Promise.all(Array.from({ length: 100 }, () => a.attempt(['auth:9.9.9.9'], [3], 60_000, null)));
    for (let i = 0; i < 100; i++) answers.push(await a.attempt(['auth:9.9.9.9'], [3], 60_000, null));
    expect(answers.every(Boolean)).toBe(true);
    expect(calls.scripts - before).toBe(1);
  });

  it('an attempt recorded by another process drops the look kept in memory: the fleet-wide limit still holds for a valid key (issue 22)', async () => {
    const { client, calls } = counted();
    const [a, b] = [counters(client), counters()];
    await live(a, calls);
    expect(await a.attempt(['auth:7.7.7.7'], [2], 60_000, null)).toBe(true);
    expect(await a.attempt(['auth:7.7.7.7'], [2], 60_000, null)).toBe(true);
    const scripts = calls.scripts;
    const told = heard(a, 'auth:7.7.7.7');
    expect(await b.attempt(['auth:7.7.7.7'], [2], 60_000, 'g1')).toBe(true);
    expect(await b.attempt(['auth:7.7.7.7'], [2], 60_000, 'g2')).toBe(true);
    await told;
    // a asks Redis again (its kept look was dropped) and is refused.
    expect(await a.attempt(['auth:7.7.7.7'], [2], 60_000, null)).toBe(false);
    expect(calls.scripts).toBe(scripts + 1);
    // A refusal is never kept: the next look asks again.
    expect(await a.attempt(['auth:7.7.7.7'], [2], 60_000, null)).toBe(false);
    expect(calls.scripts).toBe(scripts + 2);
  });

  it('an attempt recorded by the same process drops its kept look at once, before Redis answers (issue 22)', async () => {
    const { client, calls } = counted();
    const a = counters(client);
    await live(a, calls);
    expect(await a.attempt(['auth:6.6.6.6'], [1], 60_000, null)).toBe(true);
    expect(await a.attempt(['auth:6.6.6.6'], [1], 60_000, 'g1')).toBe(true);
    expect(await a.attempt(['auth:6.6.6.6'], [1], 60_000, null)).toBe(false);
  });

  it('attempts under two names: refused when either is at its limit; forget clears one name and takes one attempt back from the other', async () => {
    const [a, b] = [counters(), counters()];
    for (let i = 0; i < 2; i++) expect(await a.attempt(['login:ip|alice', 'login:ip'], [2, 3], 60_000, `a${i}`)).toBe(true);
    expect(await b.attempt(['login:ip|alice', 'login:ip'], [2, 3], 60_000, 'a2')).toBe(false);
    expect(await b.attempt(['login:ip|bob', 'login:ip'], [2, 3], 60_000, 'b0')).toBe(true);
    expect(await b.attempt(['login:ip|carol', 'login:ip'], [2, 3], 60_000, 'c0')).toBe(false);
    await a.forget(['login:ip|alice'], ['login:ip'], 'b0');
    expect(await b.attempt(['login:ip|alice', 'login:ip'], [2, 3], 60_000, 'a3')).toBe(true);
  });

  it('attempts older than the window no longer count', async () => {
    const a = counters();
    expect(await a.attempt(['auth:w'], [1], 200, 'x1')).toBe(true);
    expect(await a.attempt(['auth:w'], [1], 200, 'x2')).toBe(false);
    await sleep(300);
    expect(await a.attempt(['auth:w'], [1], 200, 'x3')).toBe(true);
  });

  it('hits are leased a few at a time (no round trip per request): 3 processes, a limit of 1,000 a window (leases of 20), 1,500 requests between them: never more than 1,000 admitted, at most a lease per process short of it, and one Redis call per lease', async () => {
    expect(leaseSize(1_000)).toBe(20);
    const clients = [0, 1, 2].map(() => new Redis(redis.url, { maxRetriesPerRequest: 1 }));
    const calls = clients.map(() => 0);
    const procs = clients.map((c, i) => {
      const sendCommand = c.sendCommand.bind(c);
      c.sendCommand = ((command: { name: string }) => {
        if (command.name === 'evalsha' || command.name === 'eval') calls[i]++;
        return sendCommand(command as never);
      }) as typeof c.sendCommand;
      return counters(c);
    });
    const answers = await Promise.all(Array.from({ length: 1_500 }, (_, n) => procs[n % 3]!.hit('rate:default:client:shop', 60_000, 1_000, 0)));
    const admitted = answers.filter((a) => !a.isBlocked).length;
    expect(admitted).toBeLessThanOrEqual(1_000);
    expect(admitted).toBeGreaterThanOrEqual(1_000 - 3 * 20);
    // A request beyond what is left finds the key blocked for the window, in every process.
    const after = await Promise.all(procs.map((p) => p.hit('rate:default:client:shop', 60_000, 1_000, 0)));
    expect(after.map((a) => a.isBlocked && a.timeToBlockExpire > 0)).toEqual([true, true, true]);
    const scripts = calls.reduce((a, b) => a + b, 0);
    expect(scripts).toBeGreaterThanOrEqual(Math.floor(1_000 / 20));
    expect(scripts).toBeLessThanOrEqual(Math.ceil(1_000 / 20) + 3 * 3);
  });

  it('hits: a fixed window of 3 across two processes; the fourth is blocked for the window, with the seconds left', async () => {
    const [a, b] = [counters(), counters()];
    const answers = [await a.hit('rate:c', 10_000, 3, 0), await b.hit('rate:c', 10_000, 3, 0), await a.hit('rate:c', 10_000, 3, 0), await b.hit('rate:c', 10_000, 3, 0)];
    expect(answers.map((x) => [x.totalHits, x.isBlocked])).toEqual([
      [1, false],
      [2, false],
      [3, false],
      [4, true],
    ]);
    expect(answers[3]!.timeToBlockExpire).toBe(10);
    expect((await a.hit('rate:c', 10_000, 3, 0)).isBlocked).toBe(true);
    expect((await a.hit('rate:other', 10_000, 3, 0)).isBlocked).toBe(false);
  });

  it('slots: 2 holders across two processes; a third is refused until one is given back', async () => {
    const [a, b] = [counters(), counters()];
    expect(await a.take('polls:shop', 'h1', 2, 30_000)).toBe(true);
    expect(await b.take('polls:shop', 'h2', 2, 30_000)).toBe(true);
    expect(await a.take('polls:shop', 'h3', 2, 30_000)).toBe(false);
    expect(await a.take('polls:other', 'h4', 2, 30_000)).toBe(true);
    await b.free('polls:shop', 'h2');
    expect(await a.take('polls:shop', 'h5', 2, 30_000)).toBe(true);
  });

  it('a slot whose holder died (never given back) frees itself when its lease ends', async () => {
    const dead = counters();
    expect(await dead.take('polls:shop', 'h1', 1, 200)).toBe(true);
    dead.close();
    const alive = counters();
    expect(await alive.take('polls:shop', 'h2', 1, 200)).toBe(false);
    await sleep(300);
    expect(await alive.take('polls:shop', 'h3', 1, 200)).toBe(true);
  });

  it('while Redis does not answer, each process counts in its own memory (the limits still hold there), with a warning', async () => {
    // Never connected (no offline queue): every command fails at once, as with a Redis that is down.
    const down = counters(new Redis('redis://127.0.0.1:1', { lazyConnect: true, enableOfflineQueue: false }));
    for (let i = 0; i < 2; i++) expect(await down.attempt(['auth:x'], [2], 60_000, `x${i}`)).toBe(true);
    expect(await down.attempt(['auth:x'], [2], 60_000, null)).toBe(false);
    expect(await down.take('polls:shop', 'h1', 1, 30_000)).toBe(true);
    expect(await down.take('polls:shop', 'h2', 1, 30_000)).toBe(false);
    await down.free('polls:shop', 'h1');
    expect(await down.take('polls:shop', 'h3', 1, 30_000)).toBe(true);
    expect((await down.hit('rate:c', 10_000, 1, 0)).isBlocked).toBe(false);
    expect((await down.hit('rate:c', 10_000, 1, 0)).isBlocked).toBe(true);
    expect(warnings).toEqual([expect.stringContaining('each API process counts on its own')]);
  });
});
