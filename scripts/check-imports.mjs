#!/usr/bin/env node
// `npm run check:imports` (also the first step of `npm test`): reads every TypeScript import of apps/, libs/, test/,
// bench/, scripts/ and examples/ with the TypeScript compiler's own pre-processor and module resolution (tsconfig.json's paths),
// and fails when
//  - a file imports a unit that floors.json does not allow its unit to import (an upward or sideways import),
//  - the allowed directions of floors.json themselves form a cycle,
//  - files import each other in a cycle (type-only imports count: a cycle of types is still a knot to untie),
//  - a file lives in a unit that floors.json does not name,
//  - a file imports another library past its index ('@cardpull/orders/x' instead of '@cardpull/orders'),
//  - inside a unit that floors.json divides into rooms (its "rooms"), a file lies at the unit's root that is
//    not one of its "$root" files, lies in a room not listed, or imports a room its own room may not import.
// Exit 0 with one summary line when the house is sound; 1 with every violation otherwise.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

// `--root DIR` checks another tree (its own floors.json and tsconfig.json): the checker's tests use it.
const rootArg = process.argv.indexOf('--root');
const root = rootArg > 0 ? resolve(process.argv[rootArg + 1]) : join(dirname(fileURLToPath(import.meta.url)), '..');
const plan = JSON.parse(readFileSync(join(root, 'floors.json'), 'utf8'));
const floors = plan.units;
const rooms = plan.rooms ?? {};
const SKIP = new Set(['node_modules', 'dist', 'generated', 'reports', '.git', '.tmp']);

function walk(dir, out = []) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    if (SKIP.has(e.name)) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (/\.(ts|mts|cts|mjs|js)$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const unitOf = (rel) => {
  const [top, second] = rel.split('/');
  return top === 'apps' || top === 'libs' ? `${top}/${second}` : top;
};
/** The room of a file inside a unit divided into rooms: the first folder under its src/ ('$root' for a file directly in it), or null. */
const roomOf = (rel) => {
  const unit = unitOf(rel);
  if (!(unit in rooms)) return null;
  const inner = rel.slice(unit.length + 1).split('/');
  if (inner[0] !== 'src') return null;
  return inner.length === 2 ? '$root' : inner[1];
};
const allowed = (from, to) => from === to || (floors[from] ?? []).some((u) => u === to || (u.endsWith('/*') && to.startsWith(u.slice(0, -1))));

const config = ts.parseJsonConfigFileContent(ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile).config, ts.sys, root);
const options = { ...config.options, allowJs: true };
const host = ts.createCompilerHost(options);
const files = ['apps', 'libs', 'test', 'bench', 'scripts', 'examples'].flatMap((d) => walk(join(root, d)));
const problems = [];
const edges = new Map();

for (const file of files) {
  const rel = relative(root, file);
  const from = unitOf(rel);
  if (!(from in floors)) problems.push(`${rel}: unit ${from} is not in floors.json`);
  const room = roomOf(rel);
  if (room === '$root' && !(rooms[from].$root ?? []).includes(rel.split('/').pop())) problems.push(`${rel}: lies at the root of ${from}, which keeps every file in a room (floors.json, rooms)`);
  else if (room && room !== '$root' && !(room in rooms[from])) problems.push(`${rel}: room ${room}/ of ${from} is not in floors.json (rooms)`);
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  const targets = new Set();
  for (const imported of info.importedFiles) {
    const spec = imported.fileName;
    if (!spec.startsWith('.') && !spec.startsWith('@cardpull/')) continue;
    const resolved = ts.resolveModuleName(spec, file, options, host).resolvedModule?.resolvedFileName;
    if (!resolved) {
      if (spec.startsWith('@cardpull/')) problems.push(`${rel}: cannot resolve '${spec}'`);
      continue;
    }
    const target = relative(root, resolved);
    // Another library is entered through its index only: what it exports is what it offers.
    if (/^@cardpull\/[^/]+\//.test(spec) && unitOf(target) !== from) problems.push(`${rel}: deep import '${spec}'; import '${spec.split('/').slice(0, 2).join('/')}' (its index)`);
    if (target.startsWith('..') || target.includes('node_modules')) continue;
    const to = unitOf(target);
    // A unit's own tests (*.spec.ts beside the code) may also use the shared test helpers.
    const isTest = /\.(spec|e2e-spec)\.ts$/.test(rel) && to === 'libs/testing';
    if (!allowed(from, to) && !isTest) problems.push(`${rel}: ${from} may not import ${to} ('${spec}'; floors.json)`);
    const toRoom = to === from ? roomOf(target) : null;
    if (room && room !== '$root' && toRoom && toRoom !== room && toRoom !== '$root' && room in rooms[from] && !rooms[from][room].includes(toRoom))
      problems.push(`${rel}: room ${room}/ of ${from} may not import room ${toRoom}/ ('${spec}'; floors.json, rooms)`);
    targets.add(target);
  }
  edges.set(rel, targets);
}

// The allowed directions must only go down: a cycle in floors.json would allow a cycle between units.
const units = Object.keys(floors);
const concrete = (u) => units.filter((v) => v !== u && allowed(u, v));
const floorCycle = findCycles(new Map(units.filter((u) => !floors[u].some((x) => x.endsWith('/*'))).map((u) => [u, new Set(concrete(u))])));
for (const c of floorCycle) problems.push(`floors.json: the allowed directions form a cycle: ${c.join(' -> ')}`);
for (const c of findCycles(edges)) problems.push(`import cycle between files: ${c.join(' -> ')}`);

/** Tarjan's strongly connected components; every component of more than one node (or a self-import) is a cycle. */
function findCycles(graph) {
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const stack = [];
  const on = new Set();
  const out = [];
  const strong = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const comp = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1 || graph.get(v)?.has(v)) out.push(comp.reverse());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) strong(v);
  return out;
}

if (problems.length) {
  process.stderr.write(`${problems.join('\n')}\n\n${problems.length} import problem(s); the allowed directions are in floors.json\n`);
  process.exit(1);
}
const count = [...edges.values()].reduce((n, s) => n + s.size, 0);
process.stdout.write(`imports: ${files.length} files, ${count} imports between them, every one along floors.json, no cycle\n`);
