/**
 * The benchmark's report: sections of figures, each section with the load average at its
 * start and end (the machine is shared, so every figure is read next to the load it was
 * measured under), printed as text or as JSON.
 */
import { cpus, loadavg } from 'node:os';
import type { Figure } from './figures.ts';

export const SECTION_NAMES = [
  'recovery',
  'overhead',
  'cost',
  'concurrency',
  'agent',
  'browser',
  'scale',
] as const;
export type SectionName = (typeof SECTION_NAMES)[number];

/** What `npm run bench` runs without `--sections`: all but the load simulation and the agent section, which are asked for by name. */
export const DEFAULT_SECTIONS: readonly SectionName[] = SECTION_NAMES.filter(
  (s) => s !== 'scale' && s !== 'agent',
);

/** 1-, 5- and 15-minute load averages, rounded to 2 decimals. */
export type LoadAverage = [number, number, number];

export function loadAverage(): LoadAverage {
  const [a = 0, b = 0, c = 0] = loadavg();
  const r = (n: number): number => Math.round(n * 100) / 100;
  return [r(a), r(b), r(c)];
}

/** One section of the report. */
export interface SectionResult {
  section: SectionName;
  title: string;
  /** Load average when the section's measurements started and ended. */
  loadAverage: { start: LoadAverage; end: LoadAverage };
  figures: Figure[];
  /** What the figures include, and anything a reader must know to trust them. */
  notes: string[];
  /** Broken invariants (e.g. more browsers than the cap); any makes the run fail. */
  violations: string[];
  durationSeconds: number;
}

/** The whole run. */
export interface BenchReport {
  startedAt: string;
  node: string;
  cpus: number;
  /** Runs each median is taken over (job-level sections). */
  runs: number;
  browserRuns: number;
  loadAverage: { start: LoadAverage; end: LoadAverage };
  sections: SectionResult[];
  errors: string[];
  ok: boolean;
}

export function newReport(runs: number, browserRuns: number): BenchReport {
  return {
    startedAt: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    runs,
    browserRuns,
    loadAverage: { start: loadAverage(), end: loadAverage() },
    sections: [],
    errors: [],
    ok: true,
  };
}

function formatNumber(v: number): string {
  const digits = Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : Math.abs(v) >= 0.1 ? 2 : 4;
  return v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function formatValue(f: Figure): string {
  if (f.value === null || !Number.isFinite(f.value)) return 'n/a';
  const text = formatNumber(f.value);
  return f.unit === '$' ? `$${text}` : `${text} ${f.unit}`;
}

function formatStatistic(f: Figure): string {
  const over =
    f.statistic === 'max' ? 'samples' : f.statistic === 'p50' || f.statistic === 'p95' ? 'jobs' : 'runs';
  if (f.statistic === 'value') return f.runs > 1 ? `(over ${f.runs} ${over})` : '(1 run)';
  if (f.statistic === 'ratio') return `(of medians, ${f.runs} runs each)`;
  const range = f.range ? `, ${formatNumber(f.range[0])} to ${formatNumber(f.range[1])}` : '';
  return `(${f.statistic} of ${f.runs} ${over}${range})`;
}

const fmtLoad = (l: LoadAverage): string => l.map((n) => n.toFixed(2)).join(' / ');

/** The report as text for people. */
export function formatReport(report: BenchReport): string {
  const lines: string[] = [];
  lines.push(`Belay benchmark, ${report.startedAt} (Node ${report.node}, ${report.cpus} CPUs)`);
  lines.push(
    `load average (1/5/15 min): ${fmtLoad(report.loadAverage.start)} at start, ${fmtLoad(report.loadAverage.end)} at end`,
  );
  for (const s of report.sections) {
    lines.push('');
    lines.push(
      `== ${s.title} ==   (${Math.round(s.durationSeconds)} s; load average ${fmtLoad(s.loadAverage.start)} -> ${fmtLoad(s.loadAverage.end)})`,
    );
    for (const f of s.figures) {
      const verdict = f.verdict ? `  ${f.verdict.pass ? 'PASS' : 'MISS'} (target ${f.verdict.target})` : '';
      lines.push(`  ${f.label.padEnd(50)} ${formatValue(f).padStart(14)}  ${formatStatistic(f)}${verdict}`);
      if (f.note) lines.push(`  ${''.padEnd(50)} ${f.note}`);
    }
    for (const v of s.violations) lines.push(`  VIOLATION: ${v}`);
    for (const n of s.notes) lines.push(`  - ${n}`);
  }
  if (report.errors.length) {
    lines.push('');
    for (const e of report.errors) lines.push(`ERROR: ${e}`);
  }
  return lines.join('\n');
}
