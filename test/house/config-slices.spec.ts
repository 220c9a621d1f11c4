import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/**
 * Issue 23, item 6: a class is given the settings it reads, typed, so that a reader sees what it depends
 * on: `@Inject(SERVICE_CONFIG) config: Pick<ServiceConfig, 'A' | 'B'>` (or a named slice such as
 * DecisionTimings, ProcessorSettings), never the whole flat object. The one class that takes it whole is
 * the periodic tasks' base, whose `every` names any *_INTERVAL_MS setting.
 */
const WHOLE_ALLOWED = ['apps/worker/src/tasks/periodic-task.ts'];

describe('configuration: each class injects the slice of the settings it reads', () => {
  it('no injection of the whole ServiceConfig outside the periodic-task base', () => {
    const files = execFileSync('git', ['ls-files', 'apps', 'libs'], { cwd: ROOT, encoding: 'utf8' })
      .split('\n')
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'));
    const whole = files.flatMap((f) =>
      [...readFileSync(join(ROOT, f), 'utf8').matchAll(/@Inject\(SERVICE_CONFIG\)[^:]*:\s*ServiceConfig\b(?!\s*\[)/g)].map(() => f),
    );
    expect(whole.filter((f) => !WHOLE_ALLOWED.includes(f))).toEqual([]);
    // And the slices are real: at least the twenty classes that read settings say which.
    const slices = files.filter((f) => /@Inject\(SERVICE_CONFIG\)[^:]*:\s*(Pick<ServiceConfig|DecisionTimings|ProcessorSettings)/.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(slices.length).toBeGreaterThanOrEqual(20);
  });
});
