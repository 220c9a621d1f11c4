import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Figures and the final table. Every figure is compared with a baseline measured in the same run (the
 * machine is small and noisy): a bare script doing the same durable work, or the bound the design sets.
 */

export interface Figure {
  bench: string;
  figure: string;
  value: number | null;
  unit: string;
  /** What the figure is compared with, measured in the same run. */
  baseline: number | null;
  baselineLabel: string;
  /** The baseline's unit when it is not the figure's (e.g. polls against row writes). */
  baselineUnit?: string;
  /** value / baseline. */
  ratio: number | null;
  /** The target in words, e.g. "ratio >= 0.6" or "<= 25 ms". */
  target: string;
  /** null: informative figure, no target. */
  pass: boolean | null;
  /** Every repetition, when the figure is a median. */
  samples?: number[];
  baselineSamples?: number[];
  note?: string;
}

export type Log = (line: string) => void;

export const median = (xs: number[]): number => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** Percentile (0..100) of raw values, nearest rank. */
export const percentile = (xs: number[], p: number): number => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
};

export const round = (x: number | null, digits = 2): number | null => (x === null || !Number.isFinite(x) ? null : Math.round(x * 10 ** digits) / 10 ** digits);

export function figure(f: Omit<Figure, 'ratio'> & { ratio?: number | null }): Figure {
  const ratio = f.ratio !== undefined ? f.ratio : f.value !== null && f.baseline ? f.value / f.baseline : null;
  return { ...f, value: round(f.value), baseline: round(f.baseline), ratio: round(ratio), samples: f.samples?.map((x) => round(x)!), baselineSamples: f.baselineSamples?.map((x) => round(x)!) };
}

const num = (x: number | null, unit = '') => (x === null ? '-' : `${x >= 100 ? Math.round(x) : x}${unit ? ` ${unit}` : ''}`);

/** The table every run ends with: bench, figure, value, baseline, ratio, target, pass/miss. */
export function tableLines(figures: Figure[]): string[] {
  const rows = [
    ['bench', 'figure', 'value', 'baseline (same run)', 'ratio', 'target', 'result'],
    ...figures.map((f) => [
      f.bench,
      f.figure,
      num(f.value, f.unit),
      f.baseline === null ? f.baselineLabel || '-' : `${num(f.baseline, f.baselineUnit ?? f.unit)} (${f.baselineLabel})`,
      f.ratio === null ? '-' : f.ratio.toFixed(2),
      f.target,
      f.pass === null ? 'info' : f.pass ? 'pass' : 'MISS',
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join(' | ');
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.slice(1).map(line)];
}

export interface BenchReport {
  command: string;
  startedAt: string;
  finishedAt?: string;
  machine: { cpus: number; cpuModel: string; node: string; platform: string };
  settings: Record<string, unknown>;
  postgres: string;
  benches: string[];
  figures: Figure[];
  /** Extra measurements per bench (CPU per process, raw runs, notes). */
  details: Record<string, unknown>;
  errors: string[];
}

export function writeJson(path: string, report: BenchReport): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
}
