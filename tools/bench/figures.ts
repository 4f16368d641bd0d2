/**
 * The benchmark's arithmetic, kept pure so that it can be checked on hand-made inputs
 * (`test/integration/bench/figures.test.ts`): medians and percentiles, the time a crash costs, the
 * coordinator's overhead per step, dollars per 1,000 jobs, and PASS/MISS verdicts.
 */
import { type CostComponent, priceCost } from '../../lambdas/lib/cost/rates.ts';
import type { Cost } from '../../lambdas/lib/ledger/types.ts';

/** A target of the benchmark, with whether the measured figure meets it. */
export interface Verdict {
  /** The target as people read it, e.g. `< 100 ms per step`. */
  target: string;
  pass: boolean;
}

/** One measured figure: its value, unit, which statistic it is and over how many runs. */
export interface Figure {
  label: string;
  /** Null when it could not be measured (the reason is in `note`). */
  value: number | null;
  unit: string;
  /** `median of N runs`, `p95 of N jobs`, `max over N samples`, ... */
  statistic: 'median' | 'p50' | 'p95' | 'max' | 'value' | 'ratio';
  /** How many runs (or jobs, or samples) the statistic is over. */
  runs: number;
  /** The lowest and highest of the samples a median is over, when there are several: how much runs differ. */
  range?: [number, number];
  verdict?: Verdict;
  note?: string;
}

/** Median of `samples` (mean of the middle two for an even count); NaN when empty. */
export function median(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const mid = Math.floor(n / 2);
  return n % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** `[min, max]` of `samples` when there are at least two (a median's spread); undefined otherwise. */
export function spread(samples: readonly number[]): [number, number] | undefined {
  const finite = samples.filter((v) => Number.isFinite(v));
  if (finite.length < 2) return undefined;
  return [Math.min(...finite), Math.max(...finite)];
}

/** Nearest-rank percentile (`q` in 0..1] of `samples`; NaN when empty. p50 of [1,2,3,4] is 2. */
export function percentile(samples: readonly number[], q: number): number {
  if (!(q > 0 && q <= 1)) throw new RangeError('q must be in (0, 1]');
  const sorted = [...samples].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil(q * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

/** Summary of timing samples in ms. */
export interface Stats {
  runs: number;
  median: number;
  p95: number;
  min: number;
  max: number;
}

/** Median, p95, min and max of `samples`. */
export function stats(samples: readonly number[]): Stats {
  return {
    runs: samples.length,
    median: median(samples),
    p95: percentile(samples.length ? samples : [Number.NaN], 0.95),
    min: samples.length ? Math.min(...samples) : Number.NaN,
    max: samples.length ? Math.max(...samples) : Number.NaN,
  };
}

/** Time a crash cost a runner: median wall time with the crash minus median wall time of clean runs. */
export function timeLost(cleanMs: readonly number[], crashedMs: readonly number[]): number {
  return median(crashedMs) - median(cleanMs);
}

/** `naive / belay`, or null when Belay lost no measurable time (a ratio would be meaningless). */
export function lossRatio(naiveLostMs: number, belayLostMs: number): number | null {
  if (!Number.isFinite(naiveLostMs) || !Number.isFinite(belayLostMs) || belayLostMs <= 0) return null;
  return naiveLostMs / belayLostMs;
}

/** What one job's coordinator overhead is computed from. */
export interface OverheadInput {
  /** Submission to SUCCEEDED, ms. */
  wallMs: number;
  /** Sum of the steps' own browser time (run + verify), ms. */
  browserMs: number;
  /** From the approval request to the recorded decision, ms. */
  approvalWaitMs: number;
  steps: number;
}

/** (wall - the steps' own browser time - the approval wait) / steps, in ms per step. */
export function overheadPerStep(run: OverheadInput): number {
  if (run.steps <= 0) throw new RangeError('a job has at least one step');
  return (run.wallMs - run.browserMs - run.approvalWaitMs) / run.steps;
}

/** Usage of one job, as the benchmark counts it. */
export interface JobUsage {
  stateTransitions: number;
  lambdaInvocations: number;
  lambdaMs: number;
  dynamoWrites: number;
  /** Browser session lifetime (what a browser provider bills), seconds. */
  browserSeconds: number;
  humanInterventions: number;
}

/** Dollars per 1,000 jobs by component at the rates of `rates.ts`, with the published-price subtotal. */
export interface PricePer1000 {
  byComponent: Record<CostComponent, number>;
  /** Step Functions + Lambda + DynamoDB: published list prices only. */
  published: number;
  /** Everything, assumed rates (browser hours, people) included. */
  total: number;
}

const PUBLISHED: readonly CostComponent[] = [
  'stateTransitions',
  'lambdaInvocations',
  'lambdaMs',
  'dynamoWrites',
];

/** Prices one job's usage with `priceCost` and scales it to 1,000 jobs. */
export function pricePer1000(usage: JobUsage): PricePer1000 {
  const cost: Cost = { ...usage, proxyBytes: 0, modelTokens: 0, modelUsd: 0 };
  const { total, ...byComponent } = priceCost(cost);
  const scaled = Object.fromEntries(Object.entries(byComponent).map(([k, v]) => [k, v * 1000])) as Record<
    CostComponent,
    number
  >;
  const published = PUBLISHED.reduce((sum, k) => sum + scaled[k], 0);
  return { byComponent: scaled, published, total: total * 1000 };
}

/** Jobs per minute: `jobs` finished over `elapsedMs`. */
export function jobsPerMinute(jobs: number, elapsedMs: number): number {
  return elapsedMs > 0 ? (jobs * 60_000) / elapsedMs : Number.NaN;
}

/** Samples of browsers alive over a cap, with their times (for VIOLATION lines). */
export function capViolations(
  samples: readonly { atMs: number; running: number }[],
  cap: number,
): { atMs: number; running: number }[] {
  return samples.filter((s) => s.running > cap);
}

/** PASS when `value <= limit`. NaN or null never passes. */
export function atMost(value: number | null, limit: number, target: string): Verdict {
  return { target, pass: value !== null && Number.isFinite(value) && value <= limit };
}

/** PASS when `value < limit`. */
export function below(value: number | null, limit: number, target: string): Verdict {
  return { target, pass: value !== null && Number.isFinite(value) && value < limit };
}

/** PASS when `value >= limit`. */
export function atLeast(value: number | null, limit: number, target: string): Verdict {
  return { target, pass: value !== null && Number.isFinite(value) && value >= limit };
}
