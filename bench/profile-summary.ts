/**
 * Summary of a V8 CPU profile (BENCH_CPU_PROF=1 writes one per API/worker process in the report's
 * profiles/ directory): self time per package or source file and the hottest functions.
 *   node --import tsx bench/profile-summary.ts reports/bench-<stamp>/profiles/<file>.cpuprofile [top]
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: Node[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: node --import tsx bench/profile-summary.ts <file.cpuprofile> [top]\n');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

/** node_modules/<pkg> (scoped too), our own files by path, or the V8/Node category. */
function where(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  if (url.startsWith('node:')) return url;
  const own = /\/(apps|libs|dist)\/(.*)$/.exec(url);
  return own ? own[0].replace(/^\/dist\/apps\/[^/]+\//, '/') : url;
}

const total = [...self.values()].reduce((a, b) => a + b, 0);
const groups = new Map<string, number>();
const fns = new Map<string, number>();
for (const [id, us] of self) {
  const n = byId.get(id)!;
  const w = where(n.callFrame.url, n.callFrame.functionName);
  groups.set(w, (groups.get(w) ?? 0) + us);
  const fn = `${n.callFrame.functionName || '(anonymous)'} ${w}:${n.callFrame.lineNumber + 1}`;
  fns.set(fn, (fns.get(fn) ?? 0) + us);
}
const pct = (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)} %`;
const wall = (profile.endTime - profile.startTime) / 1e6;
process.stdout.write(`${file}\nwall ${wall.toFixed(1)} s, sampled ${(total / 1e6).toFixed(1)} s (idle included)\n\nby package / file:\n`);
for (const [k, v] of [...groups].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`  ${pct(v)}  ${k}\n`);
process.stdout.write('\nhottest functions (self time):\n');
for (const [k, v] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`  ${pct(v)}  ${k}\n`);
