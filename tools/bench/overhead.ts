/**
 * Section `overhead`: what Belay's coordination adds per step. Counted on the warm clean runs
 * (`counted.ts`: DynamoDB calls, invocations, transitions, CPU), against the naive runner's
 * job time (`wall-ratio.ts`), and timed, with warm workers and with a new process per
 * invocation (cold) on Lambda's Node 22 with and without the compile cache and on Node 20:
 * (job wall time - the steps' own browser time - the approval wait) / steps, per run; median.
 */
import type { BrowserSamples } from './browser.ts';
import { BenchContext, type MeasuredRun } from './context.ts';
import { type CountedSample, countedFigures } from './counted.ts';
import { below, type Figure, median, overheadPerStep, spread } from './figures.ts';
import type { LoadAverage, SectionResult } from './report.ts';
import { lambdaRuntime, RUNTIME_NAMES, type RuntimeName, runtimeLabel } from './runtimes.ts';
import { type CleanJobs, wallRatioFigures } from './wall-ratio.ts';

/** The per-run inputs of the overhead figure, as the JSON carries them. */
export interface OverheadSample {
  wallMs: number;
  browserMs: number;
  approvalWaitMs: number;
  steps: number;
  overheadPerStepMs: number;
  /** Where it went, per step: Start (lease, new browser session), Finish (the outcome verified in the shop). */
  startPerStepMs?: number;
  finishPerStepMs?: number;
  /** RunStep time beyond the steps' own browser time (reads, attach, precondition, checkpoint), per step. */
  runStepPerStepMs?: number;
  /** RunStep split at the step's action (`phases.ts`), per step: before it, after it, and module load with the hand-off. */
  runStepBeforeActionPerStepMs?: number;
  runStepAfterActionPerStepMs?: number;
  runStepInitPerStepMs?: number;
}

export function overheadSample(run: MeasuredRun): OverheadSample {
  const input = {
    wallMs: run.wallMs,
    browserMs: run.browserMs,
    approvalWaitMs: run.approvalWaitMs,
    steps: run.steps,
  };
  const by = run.lambdaMsByFunction;
  return {
    ...input,
    overheadPerStepMs: overheadPerStep(input),
    startPerStepMs: (by.start ?? 0) / run.steps,
    finishPerStepMs: (by.finish ?? 0) / run.steps,
    runStepPerStepMs: Math.max(0, (by['run-step'] ?? 0) - run.browserMs) / run.steps,
    ...(run.runStepPhases && run.runStepPhases.invocations > 0
      ? {
          runStepBeforeActionPerStepMs: run.runStepPhases.beforeActionMs / run.steps,
          runStepAfterActionPerStepMs: run.runStepPhases.afterActionMs / run.steps,
          runStepInitPerStepMs: run.runStepPhases.initMs / run.steps,
        }
      : {}),
  };
}

type PartKey =
  | 'startPerStepMs'
  | 'finishPerStepMs'
  | 'runStepPerStepMs'
  | 'runStepBeforeActionPerStepMs'
  | 'runStepAfterActionPerStepMs'
  | 'runStepInitPerStepMs';

/** The cold configurations' samples, each on its own Node (`runtimes.ts`). */
export interface ColdRuns {
  runtime: RuntimeName;
  /** How the report names it, e.g. `Node 22.23.5 with the compile cache`. */
  label: string;
  samples: OverheadSample[];
}

/** The cold overhead's target, on Lambda's Node with the compile cache. */
export const COLD_TARGET_MS = 400;

/**
 * The overhead figures of one configuration: `warm`, or a cold one. `short` leaves out what
 * the first configuration already showed (Start, Finish, the parts after the action, the wall
 * time and its inputs).
 */
function modeFigures(
  prefix: string,
  samples: OverheadSample[],
  options: { cold: boolean; limitMs?: number; short?: boolean },
): Figure[] {
  const runs = samples.length;
  const f = (label: string, values: number[], unit = 'ms'): Figure => {
    const range = spread(values);
    return {
      label: `${prefix}: ${label}`,
      value: median(values),
      unit,
      statistic: 'median',
      runs,
      ...(range ? { range } : {}),
    };
  };
  const perStep = f(
    'coordinator overhead per step',
    samples.map((s) => s.overheadPerStepMs),
  );
  const part = (key: PartKey): number[] =>
    samples.map((s) => s[key]).filter((v): v is number => typeof v === 'number');
  const parts = part('runStepPerStepMs').length > 0;
  // Only when every run has the split: a median over some of the runs would not add up with the rest.
  const split = samples.length > 0 && part('runStepBeforeActionPerStepMs').length === samples.length;
  const { limitMs, short = false } = options;
  return [
    limitMs === undefined
      ? perStep
      : { ...perStep, verdict: below(perStep.value, limitMs, `< ${limitMs} ms`) },
    ...(parts && !short
      ? [
          {
            ...f('  of which Start per step', part('startPerStepMs')),
            note: 'once per job: lease, accounts, a new browser session',
          },
          {
            ...f('  of which Finish per step', part('finishPerStepMs')),
            note: 'once per job: the order verified in the shop',
          },
        ]
      : []),
    ...(parts
      ? [
          {
            ...f('  of which RunStep beyond the step itself', part('runStepPerStepMs')),
            note: 'reads, attach, precondition, checkpoint',
          },
        ]
      : []),
    ...(split
      ? [
          ...(options.cold
            ? [
                {
                  ...f('    RunStep module load and hand-off', part('runStepInitPerStepMs')),
                  note: 'a new process per invocation: Node, the bundle, the AWS SDK (playwright-core loads later, at the attach)',
                },
              ]
            : []),
          {
            ...f("    RunStep before the step's action", part('runStepBeforeActionPerStepMs')),
            note: "the job's read, the account, the attach, the precondition, a write's intent",
          },
          ...(short
            ? []
            : [
                {
                  ...f("    RunStep after the step's verify", part('runStepAfterActionPerStepMs')),
                  note: "a screenshot when kept, the checkpoint, the action cache, the invocation's record",
                },
              ]),
        ]
      : []),
    ...(short
      ? []
      : [
          f(
            'job wall time, submission to SUCCEEDED',
            samples.map((s) => s.wallMs),
          ),
          f(
            "steps' own browser time (sum of 14)",
            samples.map((s) => s.browserMs),
          ),
          f(
            'approval wait (answered at once)',
            samples.map((s) => s.approvalWaitMs),
          ),
        ]),
  ];
}

/** Figures of the section (pure). `browser` is the browser section's samples, when it ran. */
export function overheadFigures(
  warm: OverheadSample[],
  cold: readonly ColdRuns[],
  browser?: BrowserSamples,
): Figure[] {
  const figures: Figure[] = [];
  if (warm.length) figures.push(...modeFigures('warm', warm, { cold: false }));
  cold.forEach((c, i) => {
    if (c.samples.length === 0) return;
    figures.push(
      ...modeFigures(`cold, ${c.label}`, c.samples, {
        cold: true,
        ...(c.runtime === 'node22-cache' ? { limitMs: COLD_TARGET_MS } : {}),
        short: i > 0,
      }),
    );
  });
  if (browser) {
    figures.push(
      {
        label: 'reattach, fresh process (attach only)',
        value: median(browser.reattachFreshMs),
        unit: 'ms',
        statistic: 'median',
        runs: browser.reattachFreshMs.length,
        note: 'from the browser section',
      },
      {
        label: 'reattach, warm process (cached connection)',
        value: median(browser.reattachWarmMs),
        unit: 'ms',
        statistic: 'median',
        runs: browser.reattachWarmMs.length,
        note: 'from the browser section',
      },
    );
  }
  return figures;
}

/**
 * Clean runs on the cold stack (a process per invocation), on each runtime in turn, run by run
 * (so that a change of load hits them alike); the stack is stopped afterwards.
 */
export async function runColdOverhead(ctx: BenchContext): Promise<{
  cold: ColdRuns[];
  load: { start: LoadAverage; end: LoadAverage };
  seconds: number;
}> {
  const started = performance.now();
  const runs: MeasuredRun[] = [];
  const cold: ColdRuns[] = [];
  try {
    const b = await ctx.stack('cold');
    const runtimes = await Promise.all(
      RUNTIME_NAMES.map(async (name) => ({ name, runtime: await lambdaRuntime(name, ctx.log) })),
    );
    const version = runtimes.find((r) => r.runtime.node)?.runtime.node?.version;
    for (const { name } of runtimes)
      cold.push({ runtime: name, label: runtimeLabel(name, version), samples: [] });
    for (let i = 1; i <= ctx.runs; i++) {
      for (const [k, { name, runtime }] of runtimes.entries()) {
        await b.stack.lambdas.setRuntime(runtime);
        const run = await ctx.measuredRun('cold', {
          kind: `cold-${name}`,
          accountId: ctx.measuredAccount('cold'),
        });
        runs.push(run);
        const sample = overheadSample(run);
        cold[k]?.samples.push(sample);
        ctx.log(
          `overhead cold ${i}/${ctx.runs}, ${cold[k]?.label}: ${(run.wallMs / 1000).toFixed(1)} s, ${sample.overheadPerStepMs.toFixed(0)} ms/step (${run.coldStarts} processes)`,
        );
      }
    }
    // The stack's own runtime again, for whatever runs on it next.
    await b.stack.lambdas.setRuntime(ctx.lambdaRuntime);
  } finally {
    await ctx.stopStack('cold');
  }
  return { cold, load: BenchContext.loadOf(runs), seconds: (performance.now() - started) / 1000 };
}

/** Assembles the section once every input is measured. */
export function overheadSection(
  warm: { samples: OverheadSample[]; load: { start: LoadAverage; end: LoadAverage }; seconds: number },
  cold: { cold: ColdRuns[]; load: { start: LoadAverage; end: LoadAverage }; seconds: number },
  browser: BrowserSamples | undefined,
  counted: CountedSample[],
  cleanJobs: readonly CleanJobs[],
): SectionResult {
  const wall = wallRatioFigures(cleanJobs);
  return {
    section: 'overhead',
    title: 'Coordinator overhead per step (checkout@1, 14 steps)',
    loadAverage: { start: warm.load.start, end: cold.load.end },
    figures: [...countedFigures(counted), ...wall, ...overheadFigures(warm.samples, cold.cold, browser)],
    notes: [
      "Counted (warm, the clean runs): each worker counts the AWS calls it sends (every attempt, as DynamoDB sees and bills them) and its process's CPU time during each invocation; invocations and transitions come from the execution history. They do not move with the machine's load.",
      ...(wall.length === 0
        ? [
            'Belay / naive clean job time: needs the recovery section in the same run (`--sections recovery,overhead`), whose clean runs it compares.',
          ]
        : [
            "Belay / naive: the recovery section's clean runs of both, in the same run, interleaved (a change of load hits both); with --site-latency also at the shop's latency profile, where the target applies. The naive time starts at its process's start (Node, then its own Chromium); Belay's at the job's creation (POST /jobs), with a new browser session, the approval and Finish's check of the order included.",
          ]),
      "Wall overhead per run: (job wall time from submission to SUCCEEDED - sum of the 14 completed steps' own browser time (ledger browserSeconds: run + verify) - the approval wait (approval requested -> recorded)) / 14; the figure is the median over runs. Its warm target gave way to the counted figures and the ratio to the naive runner above; the cold one is judged on Lambda's Node with the compile cache.",
      "It includes every state transition and Lambda invocation (Start with the session's new Chromium, RunStep reads/attach/precondition/checkpoint, AwaitApproval, Finish). The 'of which' lines split it by the local runner's invocation times: Start and Finish happen once per job, so per step they shrink as jobs grow; RunStep beyond the step is paid on every step; the rest is state transitions, hand-offs and the approval's round trip.",
      "Every measured run starts signed in to the shop: the stack's first, uncounted job signed the measured account in, and its browser profile keeps the sign-in.",
      "warm: one worker process per function, reused (after the uncounted warm-up job); the warm runs are the recovery section's Belay clean runs when it ran. cold: a new Node process per invocation (module load included), as a cold Lambda, each loading the function's bundle as deployed, started with the flags Lambda's runtime gives Node for the function's memory; the three Node configurations run one after another in each round.",
      "The compile cache: built when the bundle is, by the same Node 22 with the same flags; it holds the bundle and playwright-core (what a function ships), not the AWS SDK (the runtime's own in Lambda); each worker reads a private copy, as Lambda's read-only /var/task lets nothing be added.",
      `Load average: warm runs ${warm.load.start.join('/')} -> ${warm.load.end.join('/')}; cold runs ${cold.load.start.join('/')} -> ${cold.load.end.join('/')}.`,
    ],
    violations: [],
    durationSeconds: warm.seconds + cold.seconds,
  };
}
