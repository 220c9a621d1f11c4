import type { TaskLeases } from '@cardpull/db';
import { PeriodicTask } from './periodic-task';

/** A task whose runs are counted; the first one never settles (a Redis command lost in a failover). */
class Stuck extends PeriodicTask<number> {
  protected readonly taskName = 'stuck test task';
  protected readonly every = 60_000;
  runs = 0;
  protected tick(): Promise<number> {
    this.runs++;
    return this.runs === 1 ? new Promise<number>(() => undefined) : Promise.resolve(this.runs);
  }
}

/** The fleet's claims, reduced to what the timing rule needs: always granted, a 100 ms lease. */
const leases = { leaseMs: 100, claim: async () => true, release: async () => undefined } as unknown as TaskLeases;

describe('PeriodicTask', () => {
  it('a run that never settles stops holding the task once its lease is over: the next call starts a new run', async () => {
    const task = new Stuck();
    task.leases = leases;
    const first = task.runOnce();
    // While the lease lasts, a second call shares the run under way (never two runs at once).
    expect(task.runOnce()).toBe(first);
    await new Promise((r) => setTimeout(r, 20));
    expect(task.runs).toBe(1);
    await new Promise((r) => setTimeout(r, 130));
    await expect(task.runOnce()).resolves.toBe(2);
  });

  it('an idle run (the task says it has nothing to do) claims nothing: no write for a tick with no work', async () => {
    const claims: string[] = [];
    class Idle extends PeriodicTask<number> {
      protected readonly taskName = 'idle test task';
      protected readonly every = 60_000;
      work = false;
      protected override async idle() {
        return this.work ? null : { answer: 0 };
      }
      protected tick(): Promise<number> {
        return Promise.resolve(1);
      }
    }
    const task = new Idle();
    task.leases = { leaseMs: 100, claim: async (name: string) => (claims.push(name), true), release: async () => undefined } as unknown as TaskLeases;
    await expect(task.runOnce()).resolves.toBe(0);
    expect(claims).toEqual([]);
    task.work = true;
    await expect(task.runOnce()).resolves.toBe(1);
    expect(claims).toEqual(['idle test task']);
  });
});
