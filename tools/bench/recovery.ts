/**
 * Section `recovery`: what a crash in step 12 of checkout@1 costs, for the naive baseline, the
 * Temporal recipes' pattern (a checkpoint per step, a new browser per retry) and Belay. Each
 * runner does a clean run and a run killed once mid-action in step 12,
 * interleaved run by run (so a change of load hits both alike); the time lost is the median
 * wall time with the crash minus the median clean wall time, for each; then the ratio.
 */
import { siteAdmin } from '../../demo/sites/admin-client.ts';
import { describeLatency, type LatencyProfile } from '../../demo/sites/http/latency.ts';
import { localFunctionArn } from '../../local/stack.ts';
import type { BenchStack } from './belay.ts';
import type { BenchContext, MeasuredRun } from './context.ts';
import { atLeast, atMost, type Figure, lossRatio, median, spread, timeLost } from './figures.ts';
import { type NaiveRun, runNaive } from './naive-runner.ts';
import { loadAverage, type SectionResult } from './report.ts';

/**
 * Runs `fn` with RunStep's provisioned workers started and initialized, then takes them away:
 * back to one warm worker, so that the next on-demand crash's retry needs a new process (left
 * as ordinary warm workers, the former provisioned ones would take it).
 */
async function withProvisionedRunSteps<T>(b: BenchStack, fn: () => Promise<T>): Promise<T> {
  const arn = localFunctionArn('RunStep');
  await b.stack.lambdas.provision(arn, PROVISIONED_RUN_STEPS);
  try {
    return await fn();
  } finally {
    await b.stack.lambdas.provision(arn, 0);
    await b.stack.lambdas.retireIdle(arn, 1);
  }
}

/** Step 12 of 14: choose the payment card (index 11), killed between choosing and submitting. */
export const CRASH_STEP = 12;

/** Provisioned RunStep environments in the second Belay configuration (`belay:provisionedRunSteps`). */
export const PROVISIONED_RUN_STEPS = 2;

/** Raw samples of the section (also what the JSON carries). */
export interface RecoverySamples {
  naiveCleanMs: number[];
  naiveCrashedMs: number[];
  naiveStepsExecutedWithCrash: number[];
  /** Kill -> step 12 verified again, on the naive runner's crashed runs (steps 1 to 12 again). */
  naiveKillToVerifiedMs: number[];
  /** The Temporal recipes' pattern: checkpoint per step, a new browser per retry. */
  recipeCleanMs: number[];
  recipeCrashedMs: number[];
  /** Kill -> step 12 verified again: new browser, sign in, the step's page, step 12 from its start. */
  recipeKillToVerifiedMs: number[];
  recipeStepsExecutedWithCrash: number[];
  belayCleanMs: number[];
  belayCrashedMs: number[];
  /** RunStep invocation time of step 12 in the clean Belay runs (the interrupted step). */
  belayStep12Ms: number[];
  /** Belay's crashed runs: kill -> next RunStep invocation, its module load, and the re-run. */
  belayRestartMs: number[];
  belayInitMs: number[];
  belayRerunMs: number[];
  /**
   * Of the restart: the state machine's pause between the failed invocation and the next one
   * scheduled, from the execution history (none since a worker's death is caught, `WorkerDied`;
   * a Retry's jittered backoff before).
   */
  belayPauseMs?: number[];
  /** Whether the retry started a new process, per crashed run (1 or 0). */
  belayRetryNewProcess?: number[];
  /** The same crash with RunStep's provisioned concurrency at {@link PROVISIONED_RUN_STEPS}. */
  provisionedCrashedMs: number[];
  provisionedRestartMs: number[];
  provisionedInitMs: number[];
  provisionedRerunMs: number[];
  provisionedPauseMs?: number[];
}

/** Figures of the section from its samples (pure: checked in `test/integration/bench`). */
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
  const target = `<= step 12 + 1 s = ${Math.round(step12 + 1000)} ms`;
  const f = (label: string, value: number, unit = 'ms'): Figure => ({
    label,
    value,
    unit,
    statistic: 'median',
    runs,
  });
  return [
    ...recipeFigures(s, naiveLost),
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
      note: `${pauseNote(s.belayPauseMs)} + ${newProcessNote(s.belayRetryNewProcess)}; module load ${Math.round(median(s.belayInitMs))} ms`,
    },
    f('Belay: re-run of step 12 (handler, with reattach)', median(s.belayRerunMs)),
    {
      ...f('Belay: time lost to the crash (wall times)', belayLost),
      note: 'on-demand RunStep (the default): the retry starts a new worker',
      verdict: atMost(belayLost, step12 + 1000, target),
    },
    ...directFigures('Belay', s.belayRestartMs, s.belayRerunMs, naiveLost, step12, target),
    ...(s.recipeKillToVerifiedMs.length > 0
      ? [recipeRatio(s.recipeKillToVerifiedMs, s.belayRestartMs, s.belayRerunMs)]
      : []),
    ...(s.provisionedCrashedMs.length > 0 ? provisionedFigures(s, naiveLost, step12, target) : []),
  ];
}

/**
 * The Temporal recipes' baseline, printed first: what it lost to the crash, by wall times and
 * measured on the crashed run (kill -> step 12 verified again), against the naive runner's.
 */
function recipeFigures(s: RecoverySamples, naiveLost: number): Figure[] {
  if (s.recipeCrashedMs.length === 0) return [];
  const runs = Math.min(s.recipeCleanMs.length, s.recipeCrashedMs.length);
  const lost = timeLost(s.recipeCleanMs, s.recipeCrashedMs);
  const direct = median(s.recipeKillToVerifiedMs);
  const f = (label: string, value: number, note?: string): Figure => ({
    label: `Temporal recipe: ${label}`,
    value,
    unit: 'ms',
    statistic: 'median',
    runs,
    ...(note ? { note } : {}),
  });
  return [
    f('wall time, clean run', median(s.recipeCleanMs)),
    f(
      'wall time, killed in step 12',
      median(s.recipeCrashedMs),
      `resumes at step 12 in a new browser: ${median(s.recipeStepsExecutedWithCrash)} steps executed for 14`,
    ),
    f('time lost to the crash (wall times)', lost),
    f(
      'kill -> step 12 verified again (direct)',
      direct,
      `new browser, sign in, the step's page again, step 12 from its start; the naive runner's: ${Math.round(median(s.naiveKillToVerifiedMs))} ms`,
    ),
    {
      label: 'ratio: naive time lost / Temporal recipe time lost',
      value: lossRatio(naiveLost, lost),
      unit: 'x',
      statistic: 'ratio',
      runs,
    },
  ];
}

/**
 * Time lost measured on the crashed run itself: from the kill until step 12 is verified again
 * (the death seen, a worker, reattach, the step from its start). It bounds what the crash cost
 * (the part of step 12 done before the kill is in it twice), and unlike a difference of wall
 * times it does not move with the clean runs' spread; the ratio is taken against it.
 */
function directFigures(
  who: string,
  restartMs: readonly number[],
  rerunMs: readonly number[],
  naiveLost: number,
  step12: number,
  target: string,
): Figure[] {
  const perRun = killToVerified(restartMs, rerunMs);
  const lost = median(perRun);
  return [
    {
      label: `${who}: kill -> step 12 verified again (direct)`,
      value: lost,
      unit: 'ms',
      statistic: 'median',
      runs: perRun.length,
      verdict: atMost(lost, step12 + 1000, target),
    },
    ratioFigure(`ratio: naive time lost / ${who} kill -> verified again`, naiveLost, lost, perRun.length),
  ];
}

/** Kill -> step 12 verified again per crashed run (restart + re-run); runs missing a part are left out. */
function killToVerified(restartMs: readonly number[], rerunMs: readonly number[]): number[] {
  return restartMs.map((r, i) => r + (rerunMs[i] ?? Number.NaN)).filter(Number.isFinite);
}

/** Belay's advantage over the pattern users pick instead, like for like: both kill -> step 12 verified again. */
export const RECIPE_RATIO_TARGET = 3;

/**
 * The Temporal recipe's kill -> step 12 verified again over Belay's, both read on the crashed
 * runs themselves: a new browser, its sign-in and the step's page, against a worker that
 * reattaches to the session that never died.
 */
function recipeRatio(
  recipeDirectMs: readonly number[],
  restartMs: readonly number[],
  rerunMs: readonly number[],
): Figure {
  const perRun = killToVerified(restartMs, rerunMs);
  const ratio = lossRatio(median(recipeDirectMs), median(perRun));
  return {
    label: 'ratio: Temporal recipe / Belay, kill -> step 12 verified again (both direct)',
    value: ratio,
    unit: 'x',
    statistic: 'ratio',
    runs: Math.min(recipeDirectMs.length, perRun.length),
    verdict: atLeast(ratio, RECIPE_RATIO_TARGET, `>= ${RECIPE_RATIO_TARGET}x`),
    ...(ratio === null ? { note: 'Belay lost no measurable time: no ratio' } : {}),
  };
}

function ratioFigure(label: string, naiveLost: number, belayLost: number, runs: number): Figure {
  const ratio = lossRatio(naiveLost, belayLost);
  return {
    label,
    value: ratio,
    unit: 'x',
    statistic: 'ratio',
    runs,
    verdict: atLeast(ratio, 10, '>= 10x'),
    ...(ratio === null ? { note: 'Belay lost no measurable time: no ratio' } : {}),
  };
}

/** The figures of the same crash with provisioned RunStep environments. */
function provisionedFigures(s: RecoverySamples, naiveLost: number, step12: number, target: string): Figure[] {
  const runs = Math.min(s.belayCleanMs.length, s.provisionedCrashedMs.length);
  const lost = timeLost(s.belayCleanMs, s.provisionedCrashedMs);
  const p = `Belay, ${PROVISIONED_RUN_STEPS} provisioned RunSteps`;
  const f = (label: string, value: number): Figure => ({
    label: `${p}: ${label}`,
    value,
    unit: 'ms',
    statistic: 'median',
    runs,
  });
  return [
    f('wall time, killed in step 12', median(s.provisionedCrashedMs)),
    {
      ...f('kill -> next RunStep invocation starts', median(s.provisionedRestartMs)),
      note: `${pauseNote(s.provisionedPauseMs)}; an initialized worker took it (module load ${Math.round(median(s.provisionedInitMs))} ms, at its init)`,
    },
    f('re-run of step 12 (handler, with reattach)', median(s.provisionedRerunMs)),
    { ...f('time lost to the crash (wall times)', lost), verdict: atMost(lost, step12 + 1000, target) },
    ...directFigures(p, s.provisionedRestartMs, s.provisionedRerunMs, naiveLost, step12, target),
  ];
}

/** The restart's note: whether the retry needed a new worker process, in how many of the runs when known. */
function newProcessNote(newProcess: readonly number[] = []): string {
  const n = newProcess.filter((v) => v === 1).length;
  return n === newProcess.length
    ? 'new worker process'
    : `new worker process in ${n} of ${newProcess.length} runs (an idle warm worker took the others)`;
}

/** The restart's note: the state machine's pause between the death and the re-run, when the history showed it. */
function pauseNote(pauseMs: readonly number[] | undefined): string {
  const seen = (pauseMs ?? []).filter(Number.isFinite);
  if (seen.length === 0) return 'death caught, re-run at once';
  const range = spread(seen);
  const at = range && range[0] !== range[1] ? ` (${Math.round(range[0])} to ${Math.round(range[1])})` : '';
  return `death caught -> re-run scheduled ${Math.round(median(seen))} ms${at}, no backoff`;
}

/** Runs the section: `ctx.runs` rounds of naive clean, naive crashed, Belay clean, Belay crashed. */
export async function runRecovery(
  ctx: BenchContext,
  options: { latency?: LatencyProfile } = {},
): Promise<{ result: SectionResult; samples: RecoverySamples }> {
  const b = await ctx.stack('warm');
  const shop = b.stack.sites.shop.baseUrl;
  const latency = options.latency;
  if (!latency) return await recoveryRuns(ctx, b, shop);
  // The shop answers as slowly as the profile says, for the naive runner and Belay alike.
  const admin = siteAdmin(shop, b.stack.sites.adminToken);
  await admin.setFaults({ latency });
  try {
    return await recoveryRuns(ctx, b, shop, latency);
  } finally {
    await admin.setFaults({ latency: null });
  }
}

async function recoveryRuns(
  ctx: BenchContext,
  b: BenchStack,
  shop: string,
  latency?: LatencyProfile,
): Promise<{ result: SectionResult; samples: RecoverySamples }> {
  const started = performance.now();
  const load = loadAverage();
  const slow = latency ? ` (site latency ${describeLatency(latency)})` : '';
  const samples: RecoverySamples = {
    naiveCleanMs: [],
    naiveCrashedMs: [],
    naiveStepsExecutedWithCrash: [],
    naiveKillToVerifiedMs: [],
    recipeCleanMs: [],
    recipeCrashedMs: [],
    recipeKillToVerifiedMs: [],
    recipeStepsExecutedWithCrash: [],
    belayCleanMs: [],
    belayCrashedMs: [],
    belayStep12Ms: [],
    belayRestartMs: [],
    belayInitMs: [],
    belayRerunMs: [],
    belayPauseMs: [],
    belayRetryNewProcess: [],
    provisionedCrashedMs: [],
    provisionedRestartMs: [],
    provisionedInitMs: [],
    provisionedRerunMs: [],
    provisionedPauseMs: [],
  };
  const admin = siteAdmin(shop, b.stack.sites.adminToken);
  const naive = async (o: {
    jobId: string;
    username: string;
    crashAtStep?: number;
    resume?: boolean;
  }): Promise<NaiveRun> => {
    const run = await runNaive({ shopBaseUrl: shop, log: ctx.log, ...o });
    const orders = (await admin.writes()).countsByKey[`${o.jobId}:place-order`] ?? 0;
    if (orders !== 1) throw new Error(`naive run ${o.jobId} placed ${orders} orders, not 1`);
    return run;
  };
  // The clean job times of both runners at this speed: the overhead section's reference.
  const cleanJobs = ctx.cleanJobsAt(latency ? describeLatency(latency) : 'own', latency !== undefined);
  for (let i = 1; i <= ctx.runs; i++) {
    const clean = await naive({ jobId: ctx.jobId('naive-clean'), username: 'shopper03@example.com' });
    samples.naiveCleanMs.push(clean.wallMs);
    cleanJobs.naiveMs.push(clean.wallMs);
    ctx.log(`recovery ${i}/${ctx.runs}: naive clean ${(clean.wallMs / 1000).toFixed(1)} s`);
    const crashed = await naive({
      jobId: ctx.jobId('naive-crash'),
      username: 'shopper03@example.com',
      crashAtStep: CRASH_STEP,
    });
    if (!crashed.crashed) throw new Error('the naive runner was never killed');
    samples.naiveCrashedMs.push(crashed.wallMs);
    samples.naiveStepsExecutedWithCrash.push(crashed.stepsExecuted);
    samples.naiveKillToVerifiedMs.push(crashed.killToVerifiedMs);
    ctx.log(`recovery ${i}/${ctx.runs}: naive killed in step 12 ${(crashed.wallMs / 1000).toFixed(1)} s`);

    const recipeClean = await naive({
      jobId: ctx.jobId('recipe-clean'),
      username: 'shopper03@example.com',
      resume: true,
    });
    samples.recipeCleanMs.push(recipeClean.wallMs);
    ctx.log(`recovery ${i}/${ctx.runs}: Temporal recipe clean ${(recipeClean.wallMs / 1000).toFixed(1)} s`);
    const recipeCrashed = await naive({
      jobId: ctx.jobId('recipe-crash'),
      username: 'shopper03@example.com',
      crashAtStep: CRASH_STEP,
      resume: true,
    });
    if (!recipeCrashed.crashed) throw new Error('the Temporal recipe runner was never killed');
    samples.recipeCrashedMs.push(recipeCrashed.wallMs);
    samples.recipeKillToVerifiedMs.push(recipeCrashed.killToVerifiedMs);
    samples.recipeStepsExecutedWithCrash.push(recipeCrashed.stepsExecuted);
    ctx.log(
      `recovery ${i}/${ctx.runs}: Temporal recipe killed in step 12 ${(recipeCrashed.wallMs / 1000).toFixed(1)} s`,
    );

    const belayClean = await ctx.measuredRun('warm', {
      kind: 'clean',
      accountId: ctx.measuredAccount('warm'),
    });
    // The overhead section reads the warm clean runs: only those at the sites' own speed.
    if (!latency) ctx.cleanWarm.push(belayClean);
    samples.belayCleanMs.push(belayClean.wallMs);
    cleanJobs.belayMs.push(belayClean.wallMs);
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
    samples.belayPauseMs?.push(belayCrashed.recovery?.pauseMs ?? Number.NaN);
    samples.belayRetryNewProcess?.push(belayCrashed.recovery?.newProcess ? 1 : 0);
    ctx.log(
      `recovery ${i}/${ctx.runs}: Belay killed in step 12 ${(belayCrashed.wallMs / 1000).toFixed(1)} s`,
    );

    const provisioned = await withProvisionedRunSteps(b, () =>
      ctx.measuredRun('warm', {
        kind: 'crash-provisioned',
        accountId: ctx.measuredAccount('warm'),
        crashAtStep: CRASH_STEP,
      }),
    );
    samples.provisionedCrashedMs.push(provisioned.wallMs);
    samples.provisionedRestartMs.push(provisioned.recovery?.restartMs ?? Number.NaN);
    samples.provisionedInitMs.push(provisioned.recovery?.initMs ?? Number.NaN);
    samples.provisionedRerunMs.push(provisioned.recovery?.rerunMs ?? Number.NaN);
    samples.provisionedPauseMs?.push(provisioned.recovery?.pauseMs ?? Number.NaN);
    ctx.log(
      `recovery ${i}/${ctx.runs}: Belay (${PROVISIONED_RUN_STEPS} provisioned RunSteps) killed in step 12 ${(provisioned.wallMs / 1000).toFixed(1)} s`,
    );
  }
  const result: SectionResult = {
    section: 'recovery',
    title: `Recovery from a crash in step 12 of checkout@1: naive baseline, Temporal recipe and Belay${slow}`,
    loadAverage: { start: load, end: loadAverage() },
    figures: recoveryFigures(samples),
    notes: [
      'Each runner is killed once with SIGKILL mid-action in step 12 (card chosen, not yet submitted).',
      'Naive: one process runs every step with its own headless Chromium (playwright-core); its browser dies with it, and it is restarted at once from step one in a new browser (no restart delay charged).',
      "Temporal recipe (the pattern of Steel's and Browserbase's Temporal recipes): the same process, but its supervisor keeps a checkpoint of every verified step (its evidence), and a retry resumes at the first unverified step in a new browser: it signs in again and goes to the step's start page (the shop keeps the cart and the checkout's choices with the account, so nothing else needs rebuilding here), then runs step 12 from its start. No activity timeout or retry backoff is charged (Temporal would detect the dead worker only at the activity's heartbeat or start-to-close timeout); its checkpoints are kept in the supervisor's memory, not a Temporal server (no per-step overhead). Its clean run is one browser through all 14 steps, as the naive runner's.",
      "Belay: the RunStep worker is SIGKILLed by the local Lambda runner (lambdaMode warm); the state machine catches the dead worker's Lambda.Unknown (WorkerDied) and runs the step again at once, with no backoff; a new worker (Lambda's Node 22 reading the bundle's compile cache, unless --lambda-runtime says otherwise) reattaches to the same browser session and resumes step 12.",
      `Belay with ${PROVISIONED_RUN_STEPS} provisioned RunSteps (\`-c belay:provisionedRunSteps=${PROVISIONED_RUN_STEPS}\` in the stack): the retry lands on a worker Lambda initialized ahead of it (module and playwright-core loaded at init), and the killed one is replaced in the background. Its clean runs are the same as the on-demand ones (warm workers either way).`,
      "Belay's place-order approval is given through the API the moment it is asked, in clean and crashed runs alike; nothing is subtracted for it. The naive runner has no approval.",
      'Wall time: naive = first process start to order confirmed; Belay = job created (POST /jobs) to SUCCEEDED, from the job item.',
      "Time lost (wall times) = median crashed wall time - median clean wall time: what the issue defines, but it moves with the clean runs' spread (it can even come out below zero). Kill -> step 12 verified again (direct) is read on each crashed run from the local Lambda runner's events; the ratios use it.",
      "Each run placed exactly one order (checked in the shop's own record).",
      ...(latency
        ? [
            `Site latency: every shop page and form answer waited a log-normal delay (${describeLatency(latency)}, seeded), for both runners; the section above ran at the shop's own speed.`,
          ]
        : []),
    ],
    violations: [],
    durationSeconds: (performance.now() - started) / 1000,
  };
  return { result, samples };
}
