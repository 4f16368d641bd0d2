/**
 * Capacity planner: how many concurrent browsers a workload needs, whether a plan's cap
 * covers it, and how long jobs queue if it does not.
 *
 *   npm run plan -- --arrivals-per-min 60 --active-minutes 4 [--plan growth] [--burst 2] [--cap 300] [--json]
 *   npm run plan -- --jobs-per-day 100000 [--peak 3] [--active-minutes 4] [--approval-minutes 5] [--tenant-share 0.5] [--plan enterprise]
 *
 * The second form prints the scale table: every quota that bounds one account (see `scale.ts`).
 *
 * Model (printed with every answer):
 * - Concurrent browsers needed = arrival rate x mean active time (Little's law) x burst headroom.
 * - Queueing: M/M/c (Erlang C). Jobs arrive as a Poisson process (rate lambda per minute),
 *   hold a browser for an exponentially distributed time with the given mean S, and are
 *   served by c = the plan's cap parallel browsers, first come first served (Belay's queue).
 *   With offered load a = lambda x S < c, P(wait) = ErlangC(c, a) and the mean wait in the
 *   queue is Wq = P(wait) x S / (c - a). With a >= c the queue has no steady state: it grows
 *   by lambda - c/S jobs per minute for as long as the load lasts.
 * - The delay is given at the mean arrival rate and at the burst peak (rate x burst).
 */
import { pathToFileURL } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { isPlanName, type PlanCaps, type PlanName, planCaps } from '../../lambdas/lib/capacity/plans.ts';
import { type Queueing, queueing } from './queueing.ts';
import { DEFAULT_SCALE_INPUT, formatScaleTable, type ScaleResult, scalePlan } from './scale.ts';

export interface PlanInput {
  arrivalsPerMinute: number;
  /** Mean time a job holds a browser, in minutes. */
  activeMinutes: number;
  plan: PlanName;
  /** Headroom for bursts: peak arrival rate / mean arrival rate (>= 1). */
  burst: number;
  /** Caps per plan (default: Anchor's plans, or `BELAY_PLAN_CAPS`). */
  caps?: PlanCaps;
  /** A cap of its own instead of the plan's. */
  cap?: number;
}

export interface PlanResult {
  plan: PlanName;
  cap: number;
  /** The plan's cap, or one given with `--cap`. */
  capSource: 'plan' | 'given';
  burst: number;
  activeMinutes: number;
  /** arrivals x active minutes x burst, rounded up. */
  browsersNeeded: number;
  covered: boolean;
  average: Queueing;
  peak: Queueing;
  assumptions: string[];
}

/**
 * The plan for a workload (a pure function; the CLI prints it).
 *
 * @example
 * planCapacity({ arrivalsPerMinute: 60, activeMinutes: 4, plan: 'growth', burst: 2 });
 * // browsersNeeded 480, cap 200, covered false; the queue grows by 10 jobs/min at the mean rate
 */
export function planCapacity(input: PlanInput): PlanResult {
  const { arrivalsPerMinute: lambda, activeMinutes: s, burst } = input;
  if (!(lambda > 0)) throw new RangeError('arrivals per minute must be > 0');
  if (!(s > 0)) throw new RangeError('active minutes must be > 0');
  if (!(burst >= 1)) throw new RangeError('burst must be >= 1');
  const cap = input.cap ?? (input.caps ?? planCaps())[input.plan];
  // Rounded to the nanobrowser first, so 60 x 4 x 1.1 = 264.00000000000003 does not become 265.
  const browsersNeeded = Math.ceil(Number((lambda * s * burst).toFixed(9)));
  return {
    plan: input.plan,
    cap,
    capSource: input.cap === undefined ? 'plan' : 'given',
    burst,
    activeMinutes: s,
    browsersNeeded,
    covered: browsersNeeded <= cap,
    average: queueing(lambda, s, cap),
    peak: queueing(lambda * burst, s, cap),
    assumptions: [
      "browsers needed = arrivals/min x mean active minutes x burst headroom (Little's law)",
      `queueing model: M/M/c (Erlang C), Poisson arrivals, exponential active time with mean ${s} min, c = cap = ${cap} browsers, first come first served`,
      'an unstable queue (arrivals x active time >= cap) has no steady state: it grows for as long as the load lasts',
    ],
  };
}

const num = (n: number, digits = 2): string => (Number.isInteger(n) ? String(n) : n.toFixed(digits));

function describe(label: string, q: Queueing): string {
  if (!q.stable) {
    const after10 = q.backlogGrowthPerMinute * 10;
    return `${label}: ${num(q.arrivalsPerMinute)} jobs/min, load ${num(q.offeredLoad)} > cap: unstable, the queue grows by ${num(q.backlogGrowthPerMinute)} jobs/min (after 10 min: ${num(after10)} queued)`;
  }
  return `${label}: ${num(q.arrivalsPerMinute)} jobs/min, load ${num(q.offeredLoad)} (${num(q.utilization * 100, 1)}% of the cap), P(wait) ${num(q.probabilityOfWaiting * 100, 2)}%, mean wait ${num((q.meanWaitMinutes ?? 0) * 60, 1)} s`;
}

/** The plan as lines of text. */
export function formatPlan(r: PlanResult): string[] {
  return [
    `browsers needed: ${r.browsersNeeded} (burst x${num(r.burst)}, ${num(r.activeMinutes)} min active per job)`,
    `${r.capSource === 'plan' ? `plan ${r.plan}` : 'the given cap'}: ${r.cap} concurrent browsers: ${r.covered ? 'covers it' : `does NOT cover it (short by ${r.browsersNeeded - r.cap})`}`,
    describe('queueing at the mean rate', r.average),
    describe('queueing at the burst peak', r.peak),
    ...r.assumptions.map((a) => `assumption: ${a}`),
  ];
}

function positive(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a number > 0');
  return n;
}

function share(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > 1) throw new InvalidArgumentError('must be a number in (0, 1]');
  return n;
}

/** The volumes the scale table always shows, with the one asked for. */
export const STANDARD_VOLUMES: readonly number[] = [1000, 10_000, 100_000];

/**
 * The CLI: parses `argv`, prints the plan. Two modes:
 * - `--arrivals-per-min N --active-minutes M`: the browsers a workload needs and its queueing;
 * - `--jobs-per-day N`: the scale table (`scale.ts`) at 1,000, 10,000 and 100,000 jobs a day
 *   (and N): every quota that bounds Belay, its load, where it binds and what raises it.
 */
export function main(argv: string[], env: NodeJS.ProcessEnv = process.env): PlanResult | ScaleResult {
  const program = new Command('plan')
    .description(
      'Concurrent browsers a workload needs and its queueing (--arrivals-per-min), or how far one account scales (--jobs-per-day)',
    )
    .option('--arrivals-per-min <n>', 'jobs submitted per minute', positive)
    .option('--active-minutes <n>', 'mean minutes a job holds a browser (its steps)', positive)
    .option('--plan <name>', 'free, starter, growth or enterprise', env.BELAY_DEFAULT_PLAN ?? 'free')
    .option('--burst <x>', 'burst headroom: peak rate / mean rate', positive, 1)
    .option('--cap <n>', "a cap of your own instead of the plan's", positive)
    .option(
      '--jobs-per-day <n>',
      'the scale table, at 1,000 / 10,000 / 100,000 jobs a day and this volume',
      positive,
    )
    .option(
      '--peak <x>',
      "scale table: peak-hour rate / the day's mean rate",
      positive,
      DEFAULT_SCALE_INPUT.peakFactor,
    )
    .option(
      '--approval-minutes <n>',
      'scale table: how long a person takes to approve',
      positive,
      DEFAULT_SCALE_INPUT.approvalMinutes,
    )
    .option(
      '--tenant-share <x>',
      "scale table: the hottest tenant's share of the jobs",
      share,
      DEFAULT_SCALE_INPUT.tenantShare,
    )
    .option('--json', 'print JSON')
    .parse(argv, { from: 'user' });
  const o = program.opts<{
    arrivalsPerMin?: number;
    activeMinutes?: number;
    plan: string;
    burst: number;
    cap?: number;
    jobsPerDay?: number;
    peak: number;
    approvalMinutes: number;
    tenantShare: number;
    json?: boolean;
  }>();
  if (!isPlanName(o.plan)) program.error(`unknown plan ${o.plan}: use free, starter, growth or enterprise`);
  const caps = planCaps(env.BELAY_PLAN_CAPS ? JSON.parse(env.BELAY_PLAN_CAPS) : {});
  if (o.jobsPerDay !== undefined) {
    // One account's reach is a question about the biggest plan, unless one is asked for.
    const plan: PlanName =
      program.getOptionValueSource('plan') === 'cli' ? (o.plan as PlanName) : 'enterprise';
    const cap = o.cap !== undefined ? Math.floor(o.cap) : caps[plan];
    const result = scalePlan({
      ...DEFAULT_SCALE_INPUT,
      jobsPerDay: [...new Set([...STANDARD_VOLUMES, Math.round(o.jobsPerDay)])].sort((a, b) => a - b),
      peakFactor: o.peak,
      approvalMinutes: o.approvalMinutes,
      tenantShare: o.tenantShare,
      anchorCap: cap,
      tenantCap: cap,
      ...(o.activeMinutes !== undefined ? { activeMinutes: o.activeMinutes } : {}),
    });
    process.stdout.write(
      o.json ? `${JSON.stringify(result, null, 2)}\n` : `${formatScaleTable(result).join('\n')}\n`,
    );
    return result;
  }
  const { arrivalsPerMin, activeMinutes } = o;
  if (arrivalsPerMin === undefined || activeMinutes === undefined) {
    return program.error('give --arrivals-per-min and --active-minutes, or --jobs-per-day');
  }
  const result = planCapacity({
    arrivalsPerMinute: arrivalsPerMin,
    activeMinutes,
    plan: o.plan as PlanName,
    burst: o.burst,
    caps,
    ...(o.cap !== undefined ? { cap: Math.floor(o.cap) } : {}),
  });
  process.stdout.write(
    o.json ? `${JSON.stringify(result, null, 2)}\n` : `${formatPlan(result).join('\n')}\n`,
  );
  return result;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2));
}
