import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const CHECK = join(ROOT, 'scripts', 'check-imports.mjs');

function check(root?: string): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [CHECK, ...(root ? ['--root', root] : [])], { cwd: ROOT, encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** A small tree with its own floors.json and tsconfig.json: `files` maps a path to its content. */
function tree(files: Record<string, string>, units: Record<string, string[]>): string {
  const dir = mkdtempSync(join(tmpdir(), 'floors-'));
  const all: Record<string, string> = {
    'floors.json': JSON.stringify({ units }),
    'tsconfig.json': JSON.stringify({ compilerOptions: { baseUrl: './', paths: { '@cardpull/low': ['libs/low/src'], '@cardpull/low/*': ['libs/low/src/*'], '@cardpull/high': ['libs/high/src'] } } }),
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const UNITS = { 'libs/low': [], 'libs/high': ['libs/low'], 'apps/app': ['libs/low', 'libs/high'], test: ['libs/*', 'apps/*'], bench: [], scripts: [] };

describe('the floors (floors.json): imports only go down, and no file imports itself around a circle', () => {
  const dirs: string[] = [];
  const make = (files: Record<string, string>, units: Record<string, string[]> = UNITS) => {
    const dir = tree(files, units);
    dirs.push(dir);
    return dir;
  };
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  /** The check of a tree made of `files` fails (exit 1), and its output names each of `problems`. */
  const expectRefused = (files: Record<string, string>, ...problems: string[]) => {
    const r = check(make(files));
    expect(r.status).toBe(1);
    for (const p of problems) expect(r.out).toContain(p);
  };

  it('this repository keeps to its floors', () => {
    const r = check();
    expect(r.out).toMatch(/every one along floors\.json, no cycle/);
    expect(r.status).toBe(0);
  });

  it('a tree that keeps to its floors passes', () => {
    const dir = make({
      'libs/low/src/index.ts': 'export const low = 1;\n',
      'libs/high/src/index.ts': "import { low } from '@cardpull/low';\nexport const high = low + 1;\n",
      'apps/app/src/main.ts': "import { high } from '@cardpull/high';\nexport const main = high;\n",
    });
    expect(check(dir).status).toBe(0);
  });

  it('a library that imports an app, or a lower library that imports a higher one, fails and is named', () => {
    expectRefused(
      {
        'libs/low/src/index.ts': "import { high } from '@cardpull/high';\nexport const low = high;\n",
        'libs/high/src/index.ts': "import { main } from '../../../apps/app/src/main';\nexport const high = main;\n",
        'apps/app/src/main.ts': 'export const main = 1;\n',
      },
      "libs/low/src/index.ts: libs/low may not import libs/high ('@cardpull/high'",
      "libs/high/src/index.ts: libs/high may not import apps/app ('../../../apps/app/src/main'",
    );
  });

  it('a library entered past its index (a deep import) fails', () => {
    expectRefused(
      {
        'libs/low/src/index.ts': "export * from './inner';\n",
        'libs/low/src/inner.ts': 'export const inner = 1;\n',
        'libs/high/src/index.ts': "import { inner } from '@cardpull/low/inner';\nexport const high = inner;\n",
      },
      "libs/high/src/index.ts: deep import '@cardpull/low/inner'; import '@cardpull/low' (its index)",
    );
  });

  it('a cycle of imports between files fails, even inside one unit', () => {
    expectRefused(
      {
        'libs/low/src/a.ts': "import { b } from './b';\nexport const a = () => b;\n",
        'libs/low/src/b.ts': "import { a } from './a';\nexport const b = () => a;\n",
      },
      'import cycle between files: libs/low/src/a.ts -> libs/low/src/b.ts',
    );
  });

  it('allowed directions that form a cycle fail, and so does a unit floors.json does not name', () => {
    const dir = make({ 'libs/low/src/index.ts': 'export const low = 1;\n', 'libs/extra/src/index.ts': 'export const extra = 1;\n' }, { ...UNITS, 'libs/low': ['libs/high'] });
    const r = check(dir);
    expect(r.status).toBe(1);
    expect(r.out).toMatch(/floors\.json: the allowed directions form a cycle: libs\/(low|high) -> libs\/(high|low)/);
    expect(r.out).toContain('libs/extra/src/index.ts: unit libs/extra is not in floors.json');
  });
});
