import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/**
 * Issue 23, item 5 (invariant 1 by construction): a partner request ID is minted only by the statements that
 * commit its attempt, the intake's (an order's first) and the guarded transition's (`newAttempt`, which
 * applies only once the ID it replaces is dead). No other code calls newRequestId: the worker's steps, where
 * the partner is asked, only carry the IDs those statements committed.
 */
describe('request IDs: minted only where their attempt is committed', () => {
  const sources = execFileSync('git', ['ls-files', 'apps', 'libs'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'));
  const read = (f: string) => readFileSync(join(ROOT, f), 'utf8');

  it('newRequestId() is called in write/intake.repository.ts and write/transitions.repository.ts only', () => {
    expect(sources.filter((f) => /\bnewRequestId\(\)/.test(read(f))).sort()).toEqual([
      'libs/orders/src/write/intake.repository.ts',
      'libs/orders/src/write/transitions.repository.ts',
    ]);
  });
});
