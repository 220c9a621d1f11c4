import type { ServiceConfig } from '@cardpull/config';
import type { HeldLease, StepsRepository } from '@cardpull/orders';
import { LeaseKeeper } from './lease-keeper';

const LEASE_MS = 3_000;

/**
 * The renewals a test's Postgres would make: `answer` decides, per call, which of the asked leases are
 * renewed (all, none, or a failure); every call is recorded.
 */
function keeperWith(answer: (leases: HeldLease[]) => Promise<Set<string>>) {
  const calls: HeldLease[][] = [];
  const steps = {
    renewLeases: async (leases: HeldLease[]) => {
      calls.push(leases.map((l) => ({ orderId: l.orderId, owner: l.owner })));
      return answer(leases);
    },
  } as unknown as StepsRepository;
  const keeper = new LeaseKeeper({ ORDER_LEASE_MS: LEASE_MS, DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/none' } as ServiceConfig, steps);
  return { keeper, calls };
}
const all = async (leases: HeldLease[]) => new Set(leases.map((l) => `${l.orderId} ${l.owner}`));

/**
 * Invariant 2 (one sender per request ID at a time) with a short lease: a call's lease is renewed while the
 * call is in flight, so it is never taken over while its holder lives; a lease that cannot be renewed stops
 * its call before it runs out, so a successor never calls while the holder may still be sending. The clock
 * is jest's (performance.now() and the timers), moved by hand: no assertion depends on how fast this runs.
 */
describe('LeaseKeeper: a call holds its order only while its lease is renewed', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('a renewed lease outlives its first length many times over: its call is never stopped while its holder lives', async () => {
    const { keeper, calls } = keeperWith(all);
    const lease = keeper.hold('order-1', 'worker:1/aaaa', performance.now());
    // Ten lease lengths, well past the first lease's end: renewed every third of it, never stopped.
    await jest.advanceTimersByTimeAsync(10 * LEASE_MS);
    expect(lease.signal.aborted).toBe(false);
    expect(lease.holds()).toBe(true);
    expect(calls.length).toBeGreaterThanOrEqual(10 * 2);
    expect(calls.every((c) => c.length === 1 && c[0]!.orderId === 'order-1' && c[0]!.owner === 'worker:1/aaaa')).toBe(true);
    lease.release();
    await keeper.onApplicationShutdown();
  });

  it('a lease no renewal reaches (the database unreachable) stops its call before the lease ends', async () => {
    const { keeper, calls } = keeperWith(async () => {
      throw new Error('connection refused');
    });
    const from = performance.now();
    const lease = keeper.hold('order-1', 'worker:1/aaaa', from);
    let stoppedAt: number | null = null;
    lease.signal.addEventListener('abort', () => (stoppedAt = performance.now()));
    await jest.advanceTimersByTimeAsync(LEASE_MS);
    // Renewals were tried, all failed: the call was stopped, and before the lease's own end.
    expect(calls.length).toBeGreaterThan(0);
    expect(lease.signal.aborted).toBe(true);
    expect((lease.signal.reason as Error).name).toBe('AbortError');
    expect(stoppedAt).not.toBeNull();
    expect(stoppedAt!).toBeLessThan(from + LEASE_MS);
    expect(lease.holds()).toBe(false);
    expect(keeper.size).toBe(0);
    await keeper.onApplicationShutdown();
  });

  it('a lease found ended or held by another owner stops its call at once', async () => {
    const { keeper } = keeperWith(async () => new Set<string>());
    const lease = keeper.hold('order-1', 'worker:1/aaaa', performance.now());
    await jest.advanceTimersByTimeAsync(LEASE_MS / 3 + LEASE_MS / 6);
    expect(lease.signal.aborted).toBe(true);
    expect(lease.holds()).toBe(false);
    await keeper.onApplicationShutdown();
  });

  it('holds() answers by the clock, even when no timer could run (a process that stood still): a lapsed lease sends nothing', () => {
    const { keeper } = keeperWith(all);
    const from = performance.now();
    const lease = keeper.hold('order-1', 'worker:1/aaaa', from);
    expect(lease.holds()).toBe(true);
    // The lease was taken by a statement sent a whole lease ago (this process stalled since): not held.
    const stale = keeper.hold('order-2', 'worker:1/bbbb', from - LEASE_MS);
    expect(stale.holds()).toBe(false);
    expect(stale.signal.aborted).toBe(true);
    lease.release();
    void keeper.onApplicationShutdown();
  });

  it('a released lease is no longer renewed', async () => {
    const { keeper, calls } = keeperWith(all);
    const lease = keeper.hold('order-1', 'worker:1/aaaa', performance.now());
    lease.release();
    await jest.advanceTimersByTimeAsync(3 * LEASE_MS);
    expect(calls).toEqual([]);
    expect(lease.signal.aborted).toBe(false);
    await keeper.onApplicationShutdown();
  });
});
