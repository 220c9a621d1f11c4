import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * CPU time of the processes a benchmark involves (Linux /proc), so a figure can say where the two cores
 * went: the app processes, Postgres (the postmaster and its backends), Redis and the bench itself (the
 * load generator). Backends that exit during a window lose their time; the benches keep their pools open.
 */

const TICKS = (() => {
  const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number(r.stdout?.trim());
  return Number.isFinite(n) && n > 0 ? n : 100;
})();

interface Stat {
  ppid: number;
  cpuS: number;
}

function readStat(pid: number): Stat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(rest[1]), cpuS: (Number(rest[11]) + Number(rest[12])) / TICKS };
  } catch {
    return null;
  }
}

/** The processes whose parent is `ppid` (the Postgres backends). */
function children(ppid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (/^\d+$/.test(entry) && readStat(Number(entry))?.ppid === ppid) out.push(Number(entry));
  }
  return out;
}

export type CpuGroups = Record<string, () => number[]>;

export interface CpuSample {
  at: number;
  /** group -> pid -> CPU seconds so far. Per pid, so a process that exits in a window does not subtract its past. */
  seconds: Record<string, Map<number, number>>;
}

export class CpuMeter {
  constructor(private readonly groups: CpuGroups) {}

  /** A meter over the usual groups; `postgresData` is the cluster's data directory (own cluster only). */
  static forStack(opts: { apps: () => Record<string, number[]>; redisPid: number | null; postgresData: string | null }): CpuMeter {
    const postmaster = opts.postgresData && existsSync(join(opts.postgresData, 'postmaster.pid'))
      ? Number(readFileSync(join(opts.postgresData, 'postmaster.pid'), 'utf8').split('\n')[0])
      : null;
    const groups: CpuGroups = {};
    groups.postgres = () => (postmaster ? [postmaster, -postmaster] : []);
    groups.redis = () => (opts.redisPid ? [opts.redisPid] : []);
    for (const name of ['api', 'worker', 'partner-sim', 'bare']) groups[name] = () => opts.apps()[name] ?? [];
    return new CpuMeter(groups);
  }

  sample(): CpuSample {
    const seconds: Record<string, Map<number, number>> = {};
    for (const [name, pids] of Object.entries(this.groups)) {
      const m = new Map<number, number>();
      // A negative pid means "it and its children": the postmaster and the Postgres backends.
      for (const pid of pids().flatMap((p) => (p < 0 ? children(-p) : [p]))) m.set(pid, readStat(pid)?.cpuS ?? 0);
      seconds[name] = m;
    }
    const own = process.cpuUsage();
    seconds['bench (load)'] = new Map([[process.pid, (own.user + own.system) / 1e6]]);
    return { at: Date.now(), seconds };
  }

  /** Cores used by each group between two samples (1.0 = one core busy the whole time). */
  static cores(a: CpuSample, b: CpuSample): Record<string, number> {
    const wall = (b.at - a.at) / 1000;
    const out: Record<string, number> = {};
    for (const [name, pids] of Object.entries(b.seconds)) {
      let used = 0;
      for (const [pid, s] of pids) used += s - (a.seconds[name]?.get(pid) ?? 0);
      if (used > 0.005 * wall) out[name] = Math.round((used / wall) * 100) / 100;
    }
    return out;
  }
}

export const describeCores = (cores: Record<string, number>): string =>
  Object.entries(cores)
    .sort((x, y) => y[1] - x[1])
    .map(([k, v]) => `${k} ${v.toFixed(2)}`)
    .join(', ');
