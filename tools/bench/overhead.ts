/**
 * Section `overhead`: what Belay's coordination adds per step, with warm workers and with a
 * new process per invocation (cold):
 * (job wall time - the steps' own browser time - the approval wait) / steps, per run; median.
 */
import type { BrowserSamples } from './browser.ts';
import { BenchContext, type MeasuredRun } from './context.ts';
import { below, type Figure, median, overheadPerStep, spread } from './figures.ts';
import type { LoadAverage, SectionResult } from './report.ts';

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

function modeFigures(mode: 'warm' | 'cold', samples: OverheadSample[], limitMs: number): Figure[] {
  const runs = samples.length;
  const f = (label: string, values: number[], unit = 'ms'): Figure => {
    const range = spread(values);
    return {
      label: `${mode}: ${label}`,
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
  return [
    { ...perStep, verdict: below(perStep.value, limitMs, `< ${limitMs} ms`) },
    ...(parts
      ? [
          {
            ...f('  of which Start per step', part('startPerStepMs')),
            note: 'once per job: lease, accounts, a new browser session',
          },
          {
            ...f('  of which Finish per step', part('finishPerStepMs')),
            note: 'once per job: the order verified in the shop',
          },
          {
            ...f('  of which RunStep beyond the step itself', part('runStepPerStepMs')),
            note: 'reads, attach, precondition, checkpoint',
          },
        ]
      : []),
    ...(split
      ? [
          ...(mode === 'cold'
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
          {
            ...f("    RunStep after the step's verify", part('runStepAfterActionPerStepMs')),
            note: "a screenshot when kept, the checkpoint, the action cache, the invocation's record",
          },
        ]
      : []),
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
  ];
}

/** Figures of the section (pure). `browser` is the browser section's samples, when it ran. */
export function overheadFigures(
  warm: OverheadSample[],
  cold: OverheadSample[],
  browser?: BrowserSamples,
): Figure[] {
  const figures: Figure[] = [];
  if (warm.length) figures.push(...modeFigures('warm', warm, 60));
  if (cold.length) figures.push(...modeFigures('cold', cold, 500));
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

/** Clean runs on the cold stack (a process per invocation); the stack is stopped afterwards. */
export async function runColdOverhead(
  ctx: BenchContext,
): Promise<{ samples: OverheadSample[]; load: { start: LoadAverage; end: LoadAverage }; seconds: number }> {
  const started = performance.now();
  const samples: OverheadSample[] = [];
  const runs: MeasuredRun[] = [];
  try {
    for (let i = 1; i <= ctx.runs; i++) {
      const run = await ctx.measuredRun('cold', { kind: 'cold', accountId: ctx.measuredAccount('cold') });
      runs.push(run);
      samples.push(overheadSample(run));
      ctx.log(
        `overhead cold ${i}/${ctx.runs}: ${(run.wallMs / 1000).toFixed(1)} s, ${samples.at(-1)?.overheadPerStepMs.toFixed(0)} ms/step (${run.coldStarts} processes)`,
      );
    }
  } finally {
    await ctx.stopStack('cold');
  }
  return { samples, load: BenchContext.loadOf(runs), seconds: (performance.now() - started) / 1000 };
}

/** Assembles the section once every input is measured. */
export function overheadSection(
  warm: { samples: OverheadSample[]; load: { start: LoadAverage; end: LoadAverage }; seconds: number },
  cold: { samples: OverheadSample[]; load: { start: LoadAverage; end: LoadAverage }; seconds: number },
  browser: BrowserSamples | undefined,
): SectionResult {
  return {
    section: 'overhead',
    title: 'Coordinator overhead per step (checkout@1, 14 steps)',
    loadAverage: { start: warm.load.start, end: cold.load.end },
    figures: overheadFigures(warm.samples, cold.samples, browser),
    notes: [
      "Per run: (job wall time from submission to SUCCEEDED - sum of the 14 completed steps' own browser time (ledger browserSeconds: run + verify) - the approval wait (approval requested -> recorded)) / 14; the figure is the median over runs.",
      "It includes every state transition and Lambda invocation (Start with the session's new Chromium, RunStep reads/attach/precondition/checkpoint, AwaitApproval, Finish). The 'of which' lines split it by the local runner's invocation times: Start and Finish happen once per job, so per step they shrink as jobs grow; RunStep beyond the step is paid on every step; the rest is state transitions, hand-offs and the approval's round trip.",
      "Every measured run starts signed in to the shop: the stack's first, uncounted job signed the measured account in, and its browser profile keeps the sign-in.",
      "warm: one worker process per function, reused (after the uncounted warm-up job); the warm runs are the recovery section's Belay clean runs when it ran. cold: a new Node process per invocation (module load included), as a cold Lambda, each loading the function's bundle as deployed.",
      `Load average: warm runs ${warm.load.start.join('/')} -> ${warm.load.end.join('/')}; cold runs ${cold.load.start.join('/')} -> ${cold.load.end.join('/')}.`,
    ],
    violations: [],
    durationSeconds: warm.seconds + cold.seconds,
  };
}
