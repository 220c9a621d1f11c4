import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const WORKER = join(__dirname, '..', '..', 'apps', 'worker', 'src');

/**
 * Issue 23, item 3: the worker's periodic tasks live by what they do, not all in recovery/. Each folder
 * holds the PeriodicTask subclasses listed here and no other; a task moved back (or a new one put in the
 * wrong room) fails this test, which then names where it is. The base is in tasks/; the module that lists every task (TasksModule) beside the worker's own module.
 */
const ROOMS: Record<string, string[]> = {
  recovery: ['Reconciler', 'Sweeper'],
  partner: ['BalanceDrift', 'BalanceWatch', 'CatalogRefresh', 'CircuitProbe'],
  traffic: ['PollAger'],
  maintenance: ['BulkRunner', 'Retention'],
};

function tasksIn(folder: string): string[] {
  const dir = join(WORKER, folder);
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'))
    .flatMap((f) => [...readFileSync(join(dir, f), 'utf8').matchAll(/export class (\w+) extends PeriodicTask\b/g)].map((m) => m[1]!))
    .sort();
}

describe('the worker: each periodic task in the room of what it does', () => {
  it.each(Object.entries(ROOMS))('%s/ holds %j', (folder, tasks) => {
    expect(tasksIn(folder)).toEqual([...tasks].sort());
  });

  it('no periodic task anywhere else in the worker, and only the base in tasks/', () => {
    const rooms = new Set([...Object.keys(ROOMS), 'tasks']);
    const elsewhere = readdirSync(WORKER, { withFileTypes: true })
      .filter((d) => d.isDirectory() && !rooms.has(d.name))
      .flatMap((d) => tasksIn(d.name).map((t) => `${d.name}/${t}`));
    expect(elsewhere).toEqual([]);
    expect(readdirSync(join(WORKER, 'tasks')).sort()).toEqual(['periodic-task.spec.ts', 'periodic-task.ts']);
  });
});
