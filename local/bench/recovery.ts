/**
 * Section `recovery`: what a crash in step 12 of checkout@1 costs, for the naive baseline and
 * for Belay. Each runner does a clean run and a run killed once mid-action in step 12,
 * interleaved run by run (so a change of load hits both alike); the time lost is the median
 * wall time with the crash minus the median clean wall time, for each; then the ratio.
 */
import { siteAdmin } from '../../demo/sites/admin-client.ts';
import type { BenchContext, MeasuredRun } from './context.ts';
import { atLeast, atMost, type Figure, lossRatio, median, timeLost } from './figures.ts';
import { type NaiveRun, runNaive } from './naive-runner.ts';
import { loadAverage, type SectionResult } from './report.ts';

/** Step 12 of 14: choose the payment card (index 11), killed between choosing and submitting. */
export const CRASH_STEP = 12;

/** Raw samples of the section (also what the JSON carries). */
export interface RecoverySamples {
  naiveCleanMs: number[];
  naiveCrashedMs: number[];
  naiveStepsExecutedWithCrash: number[];
  belayCleanMs: number[];
  belayCrashedMs: number[];
  /** RunStep invocation time of step 12 in the clean Belay runs (the interrupted step). */
  belayStep12Ms: number[];
  /** Belay's crashed runs: kill -> next RunStep invocation, its module load, and the re-run. */
  belayRestartMs: number[];
  belayInitMs: number[];
  belayRerunMs: number[];
}

/** Figures of the section from its samples (pure: checked in `test/bench`). */
export function recoveryFigures(s: RecoverySamples): Figure[] {
  const runs = Math.min(
    s.naiveCleanMs.length,
    s.naiveCrashedMs.length,
    s.belayCleanMs.length,
    s.belayCrashedMs.length,
  );
  const naiveLost = timeLost(s.naiveCleanMs, s.naiveCrashedMs);
  const belayLost = timeLost(s.belayCleanMs, s.belayCrashedMs);
  const step12 = median(s.belayStep12Ms);
  const ratio = lossRatio(naiveLost, belayLost);
  const f = (label: string, value: number, unit = 'ms'): Figure => ({
    label,
    value,
    unit,
    statistic: 'median',
    runs,
  });
  return [
    f('naive: wall time, clean run', median(s.naiveCleanMs)),
    f('naive: wall time, killed in step 12', median(s.naiveCrashedMs)),
    {
      ...f('naive: time lost to the crash', naiveLost),
      note: `restarts at step one in a new browser: ${median(s.naiveStepsExecutedWithCrash)} steps executed for 14`,
    },
    f('Belay: wall time, clean run', median(s.belayCleanMs)),
    f('Belay: wall time, killed in step 12', median(s.belayCrashedMs)),
    f('Belay: step 12 alone (RunStep invocation, clean)', step12),
    {
      ...f('Belay: kill -> next RunStep invocation starts', median(s.belayRestartMs)),
      note: `retry backoff + new worker process; of which module load ${Math.round(median(s.belayInitMs))} ms`,
    },
    f('Belay: re-run of step 12 (handler, with reattach)', median(s.belayRerunMs)),
    {
      ...f('Belay: time lost to the crash', belayLost),
      verdict: atMost(belayLost, step12 + 1000, `<= step 12 + 1 s = ${Math.round(step12 + 1000)} ms`),
    },
    {
      label: 'ratio: naive time lost / Belay time lost',
      value: ratio,
      unit: 'x',
      statistic: 'ratio',
      runs,
      verdict: atLeast(ratio, 10, '>= 10x'),
      ...(ratio === null ? { note: 'Belay lost no measurable time: no ratio' } : {}),
    },
  ];
}

/** Runs the section: `ctx.runs` rounds of naive clean, naive crashed, Belay clean, Belay crashed. */
export async function runRecovery(
  ctx: BenchContext,
): Promise<{ result: SectionResult; samples: RecoverySamples }> {
  const started = performance.now();
  const load = loadAverage();
  const b = await ctx.stack('warm');
  const shop = b.stack.sites.shop.baseUrl;
  const samples: RecoverySamples = {
    naiveCleanMs: [],
    naiveCrashedMs: [],
    naiveStepsExecutedWithCrash: [],
    belayCleanMs: [],
    belayCrashedMs: [],
    belayStep12Ms: [],
    belayRestartMs: [],
    belayInitMs: [],
    belayRerunMs: [],
  };
  const admin = siteAdmin(shop, b.stack.sites.adminToken);
  const naive = async (o: { jobId: string; username: string; crashAtStep?: number }): Promise<NaiveRun> => {
    const run = await runNaive({ shopBaseUrl: shop, log: ctx.log, ...o });
    const orders = (await admin.writes()).countsByKey[`${o.jobId}:place-order`] ?? 0;
    if (orders !== 1) throw new Error(`naive run ${o.jobId} placed ${orders} orders, not 1`);
    return run;
  };
  for (let i = 1; i <= ctx.runs; i++) {
    const clean = await naive({ jobId: ctx.jobId('naive-clean'), username: 'shopper03@example.com' });
    samples.naiveCleanMs.push(clean.wallMs);
    ctx.log(`recovery ${i}/${ctx.runs}: naive clean ${(clean.wallMs / 1000).toFixed(1)} s`);
    const crashed = await naive({
      jobId: ctx.jobId('naive-crash'),
      username: 'shopper03@example.com',
      crashAtStep: CRASH_STEP,
    });
    if (!crashed.crashed) throw new Error('the naive runner was never killed');
    samples.naiveCrashedMs.push(crashed.wallMs);
    samples.naiveStepsExecutedWithCrash.push(crashed.stepsExecuted);
    ctx.log(`recovery ${i}/${ctx.runs}: naive killed in step 12 ${(crashed.wallMs / 1000).toFixed(1)} s`);

    const belayClean = await ctx.measuredRun('warm', {
      kind: 'clean',
      accountId: ctx.measuredAccount('warm'),
    });
    ctx.cleanWarm.push(belayClean);
    samples.belayCleanMs.push(belayClean.wallMs);
    samples.belayStep12Ms.push(belayClean.stepInvocationMs[CRASH_STEP - 1] ?? Number.NaN);
    ctx.log(`recovery ${i}/${ctx.runs}: Belay clean ${(belayClean.wallMs / 1000).toFixed(1)} s`);
    const belayCrashed: MeasuredRun = await ctx.measuredRun('warm', {
      kind: 'crash',
      accountId: ctx.measuredAccount('warm'),
      crashAtStep: CRASH_STEP,
    });
    samples.belayCrashedMs.push(belayCrashed.wallMs);
    samples.belayRestartMs.push(belayCrashed.recovery?.restartMs ?? Number.NaN);
    samples.belayInitMs.push(belayCrashed.recovery?.initMs ?? Number.NaN);
    samples.belayRerunMs.push(belayCrashed.recovery?.rerunMs ?? Number.NaN);
    ctx.log(
      `recovery ${i}/${ctx.runs}: Belay killed in step 12 ${(belayCrashed.wallMs / 1000).toFixed(1)} s`,
    );
  }
  const result: SectionResult = {
    section: 'recovery',
    title: 'Recovery from a crash in step 12 of checkout@1: naive baseline vs Belay',
    loadAverage: { start: load, end: loadAverage() },
    figures: recoveryFigures(samples),
    notes: [
      'Each runner is killed once with SIGKILL mid-action in step 12 (card chosen, not yet submitted).',
      'Naive: one process runs every step with its own headless Chromium (playwright-core); its browser dies with it, and it is restarted at once from step one in a new browser (no restart delay charged).',
      'Belay: the RunStep worker is SIGKILLed by the local Lambda runner (lambdaMode warm); Step Functions retries after its configured backoff (1 s, full jitter), a new worker reattaches to the same browser session and resumes step 12.',
      "Belay's place-order approval is given through the API the moment it is asked, in clean and crashed runs alike; nothing is subtracted for it. The naive runner has no approval.",
      'Wall time: naive = first process start to order confirmed; Belay = job created (POST /jobs) to SUCCEEDED, from the job item.',
      "Each run placed exactly one order (checked in the shop's own record).",
    ],
    violations: [],
    durationSeconds: (performance.now() - started) / 1000,
  };
  return { result, samples };
}
