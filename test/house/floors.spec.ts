import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const CHECK = join(ROOT, 'scripts', 'check-imports.mjs');

function check(root?: string): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [CHECK, ...(root ? ['--root', root] : [])], { cwd: ROOT, encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** A small tree with its own floors.json and tsconfig.json: `files` maps a path to its content. */
function tree(files: Record<string, string>, units: Record<string, string[]>, rooms?: Record<string, Record<string, string[]>>): string {
  const dir = mkdtempSync(join(tmpdir(), 'floors-'));
  const all: Record<string, string> = {
    'floors.json': JSON.stringify({ units, ...(rooms ? { rooms } : {}) }),
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
  const make = (files: Record<string, string>, units: Record<string, string[]> = UNITS, rooms?: Record<string, Record<string, string[]>>) => {
    const dir = tree(files, units, rooms);
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

  describe('rooms: a unit divided by what each part does (issue 23)', () => {
    const ROOMS = { 'libs/low': { $root: ['index.ts'], model: [], write: ['model'], read: ['model'] } };
    const base = {
      'libs/low/src/index.ts': "export * from './model/order';\nexport * from './write/intake';\nexport * from './read/reads';\n",
      'libs/low/src/model/order.ts': 'export type Order = { id: string };\n',
      'libs/low/src/write/intake.ts': "import type { Order } from '../model/order';\nexport const create = (o: Order) => o;\n",
      'libs/low/src/read/reads.ts': "import type { Order } from '../model/order';\nexport const show = (o: Order) => o.id;\n",
    };
    const run = (files: Record<string, string>) => check(make(files, UNITS, ROOMS));

    it('a unit whose files keep to their rooms passes', () => {
      expect(run(base).status).toBe(0);
    });

    it('a file moved back to the unit\'s root fails and is named', () => {
      const r = run({ ...base, 'libs/low/src/turn-batch.ts': 'export const batch = 1;\n' });
      expect(r.status).toBe(1);
      expect(r.out).toContain('libs/low/src/turn-batch.ts: lies at the root of libs/low, which keeps every file in a room');
    });

    it('a room that imports a room it does not list, and a room not listed, fail and are named', () => {
      const r = run({
        ...base,
        'libs/low/src/read/reads.ts': "import { create } from '../write/intake';\nexport const show = create;\n",
        'libs/low/src/misc/helper.ts': 'export const helper = 1;\n',
      });
      expect(r.status).toBe(1);
      expect(r.out).toContain("libs/low/src/read/reads.ts: room read/ of libs/low may not import room write/ ('../write/intake'");
      expect(r.out).toContain('libs/low/src/misc/helper.ts: room misc/ of libs/low is not in floors.json (rooms)');
    });

    it('this repository divides libs/orders and the worker into the rooms of issue 23', () => {
      const { rooms } = JSON.parse(readFileSync(join(ROOT, 'floors.json'), 'utf8')) as { rooms: Record<string, Record<string, string[]>> };
      expect(Object.keys(rooms['libs/orders']!).sort()).toEqual(['$root', 'callbacks', 'ledger', 'maintenance', 'model', 'partner', 'queue', 'read', 'write']);
      expect(rooms['libs/orders']!.$root).toEqual(['index.ts', 'orders.module.ts']);
      expect(Object.keys(rooms['apps/worker']!).sort()).toEqual(['$root', 'callbacks', 'commands', 'maintenance', 'partner', 'probe', 'processors', 'recovery', 'steps', 'tasks', 'traffic']);
      // Reads never reach into writes, and nothing below maintenance reaches up into it.
      expect(rooms['libs/orders']!.read).toEqual(['model']);
      expect(Object.entries(rooms['libs/orders']!).filter(([, to]) => to.includes('maintenance')).map(([r]) => r)).toEqual([]);
    });
  });
});
