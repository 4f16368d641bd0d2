/**
 * Capacity planner: how many concurrent browsers a workload needs, whether a plan's cap
 * covers it, and how long jobs queue if it does not.
 *
 *   npm run plan -- --arrivals-per-min 60 --active-minutes 4 [--plan growth] [--burst 2] [--cap 300] [--json]
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

/** Queueing at one arrival rate, M/M/c with c = the cap. */
export interface Queueing {
  arrivalsPerMinute: number;
  /** a = lambda x S: the mean number of browsers busy (Erlangs). */
  offeredLoad: number;
  /** a / c. */
  utilization: number;
  stable: boolean;
  /** Probability that a job has to wait for a browser (Erlang C); 1 when unstable. */
  probabilityOfWaiting: number;
  /** Mean wait for a browser in minutes (Wq); null when unstable (it grows without bound). */
  meanWaitMinutes: number | null;
  /** Unstable only: jobs the queue grows by per minute (lambda - c/S). */
  backlogGrowthPerMinute: number;
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
 * Erlang C: the probability that an arriving job waits, with `c` servers and offered load
 * `a` Erlangs (a < c). Computed through the Erlang B recursion, stable for large c.
 *
 * @example
 * erlangC(2, 1.5); // 0.642857... (= 9/14)
 */
export function erlangC(c: number, a: number): number {
  if (!Number.isInteger(c) || c < 1) throw new RangeError('c must be a positive integer');
  if (a < 0) throw new RangeError('a must be >= 0');
  if (a >= c) return 1;
  let b = 1;
  for (let k = 1; k <= c; k++) b = (a * b) / (k + a * b);
  return b / (1 - (a / c) * (1 - b));
}

/** M/M/c queueing at arrival rate `lambda` (per minute), mean service `s` minutes, `c` servers. */
export function queueing(lambda: number, s: number, c: number): Queueing {
  const a = lambda * s;
  const stable = a < c;
  const p = stable ? erlangC(c, a) : 1;
  return {
    arrivalsPerMinute: lambda,
    offeredLoad: a,
    utilization: a / c,
    stable,
    probabilityOfWaiting: p,
    meanWaitMinutes: stable ? (p * s) / (c - a) : null,
    backlogGrowthPerMinute: stable ? 0 : lambda - c / s,
  };
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

/** The CLI: parses `argv`, prints the plan. */
export function main(argv: string[], env: NodeJS.ProcessEnv = process.env): PlanResult {
  const program = new Command('plan')
    .description('Concurrent browsers a workload needs, and the queueing if the plan does not cover it')
    .requiredOption('--arrivals-per-min <n>', 'jobs submitted per minute', positive)
    .requiredOption('--active-minutes <n>', 'mean minutes a job holds a browser', positive)
    .option('--plan <name>', 'free, starter, growth or enterprise', env.BELAY_DEFAULT_PLAN ?? 'free')
    .option('--burst <x>', 'burst headroom: peak rate / mean rate', positive, 1)
    .option('--cap <n>', "a cap of your own instead of the plan's", positive)
    .option('--json', 'print JSON')
    .parse(argv, { from: 'user' });
  const o = program.opts<{
    arrivalsPerMin: number;
    activeMinutes: number;
    plan: string;
    burst: number;
    cap?: number;
    json?: boolean;
  }>();
  if (!isPlanName(o.plan)) program.error(`unknown plan ${o.plan}: use free, starter, growth or enterprise`);
  const caps = planCaps(env.BELAY_PLAN_CAPS ? JSON.parse(env.BELAY_PLAN_CAPS) : {});
  const result = planCapacity({
    arrivalsPerMinute: o.arrivalsPerMin,
    activeMinutes: o.activeMinutes,
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
