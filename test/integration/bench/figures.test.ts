/**
 * The benchmark's arithmetic on hand-made inputs: if these are right, a figure printed by
 * `npm run bench` is the stated statistic of what was measured.
 */
import { describe, expect, it } from 'vitest';
import { RATES } from '../../../lambdas/lib/cost/rates.ts';
import { browserFigures } from '../../../tools/bench/browser.ts';
import { concurrencyFigures, concurrencyViolations } from '../../../tools/bench/concurrency.ts';
import { type CostSample, costFigures, medianUsage } from '../../../tools/bench/cost.ts';
import { type CountedSample, countedFigures, countedSample } from '../../../tools/bench/counted.ts';
import {
  atLeast,
  atMost,
  below,
  capViolations,
  jobsPerMinute,
  lossRatio,
  median,
  overheadPerStep,
  percentile,
  pricePer1000,
  stats,
  timeLost,
} from '../../../tools/bench/figures.ts';
import { type ColdRuns, overheadFigures, overheadSample } from '../../../tools/bench/overhead.ts';
import { RunStepPhases } from '../../../tools/bench/phases.ts';
import { type RecoverySamples, recoveryFigures } from '../../../tools/bench/recovery.ts';
import { formatReport, newReport } from '../../../tools/bench/report.ts';
import { wallRatioFigures } from '../../../tools/bench/wall-ratio.ts';

const byLabel = (figures: { label: string; value: number | null }[], label: string): number | null => {
  const f = figures.find((x) => x.label === label);
  if (!f) throw new Error(`no figure "${label}"`);
  return f.value;
};

describe('statistics', () => {
  it('median of odd and even counts, unsorted input untouched', () => {
    const input = [5, 1, 3];
    expect(median(input)).toBe(3);
    expect(input).toEqual([5, 1, 3]);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('nearest-rank percentiles', () => {
    const twenty = Array.from({ length: 20 }, (_, i) => i + 1);
    expect(percentile(twenty, 0.5)).toBe(10);
    expect(percentile(twenty, 0.95)).toBe(19);
    expect(percentile([7], 0.95)).toBe(7);
    expect(() => percentile([1], 0)).toThrow(RangeError);
    expect(stats([3, 1, 2])).toEqual({ runs: 3, median: 2, p95: 3, min: 1, max: 3 });
  });
});

/** The recovery section's samples of three rounds, with `over` in place of some. */
const recoverySamples = (over: Partial<RecoverySamples> = {}): RecoverySamples => ({
  naiveCleanMs: [7_000, 8_000, 9_000],
  naiveCrashedMs: [12_000, 13_000, 11_000],
  naiveStepsExecutedWithCrash: [25, 25, 25],
  naiveKillToVerifiedMs: [],
  recipeCleanMs: [],
  recipeCrashedMs: [],
  recipeKillToVerifiedMs: [],
  recipeStepsExecutedWithCrash: [],
  belayCleanMs: [10_000, 10_400, 10_200],
  belayCrashedMs: [10_700, 10_600, 10_800],
  belayStep12Ms: [300, 250, 350],
  belayRestartMs: [900, 1000, 1100],
  belayInitMs: [400, 500, 600],
  belayRerunMs: [350, 300, 400],
  provisionedCrashedMs: [10_500, 10_600, 10_400],
  provisionedRestartMs: [500, 400, 600],
  provisionedInitMs: [700, 700, 700],
  provisionedRerunMs: [300, 300, 300],
  ...over,
});

describe('recovery', () => {
  it('time lost is the difference of medians; the ratio is naive over Belay', () => {
    expect(timeLost([10_000, 11_000, 12_000], [20_000, 19_000, 30_000])).toBe(9_000);
    expect(lossRatio(9_000, 900)).toBe(10);
    expect(lossRatio(9_000, 0)).toBeNull();
    expect(lossRatio(9_000, -5)).toBeNull();
  });

  it('judges Belay against step 12 + 1 s and the naive baseline against 10x', () => {
    const figures = recoveryFigures(recoverySamples());
    expect(byLabel(figures, 'naive: time lost to the crash')).toBe(4_000);
    // Difference of medians: 10,700 - 10,200.
    expect(byLabel(figures, 'Belay: time lost to the crash (wall times)')).toBe(500);
    const wall = figures.find((f) => f.label === 'Belay: time lost to the crash (wall times)');
    expect(wall?.verdict).toEqual({ target: '<= step 12 + 1 s = 1300 ms', pass: true });
    // Direct, per crashed run: restart + re-run = 1,250 / 1,300 / 1,500; median 1,300 (at the target).
    expect(byLabel(figures, 'Belay: kill -> step 12 verified again (direct)')).toBe(1_300);
    expect(
      figures.find((f) => f.label === 'Belay: kill -> step 12 verified again (direct)')?.verdict?.pass,
    ).toBe(true);
    // The ratio is taken against the direct time: 4,000 / 1,300.
    expect(byLabel(figures, 'ratio: naive time lost / Belay kill -> verified again')).toBeCloseTo(3.08, 2);
    expect(figures.find((f) => f.label.startsWith('ratio'))?.verdict?.pass).toBe(false);
    // The provisioned configuration: wall times against the same clean runs (10,500 - 10,200),
    // direct 800 ms, ratio 5.
    const p = 'Belay, 2 provisioned RunSteps';
    expect(byLabel(figures, `${p}: time lost to the crash (wall times)`)).toBe(300);
    expect(byLabel(figures, `${p}: kill -> step 12 verified again (direct)`)).toBe(800);
    expect(byLabel(figures, `ratio: naive time lost / ${p} kill -> verified again`)).toBe(5);
    expect(figures.every((f) => f.runs === 3)).toBe(true);
    expect(figures.some((f) => f.label.startsWith('Temporal recipe'))).toBe(false);
    // Without the pause samples (older JSON), nothing is made up about it.
    expect(figures.find((f) => f.label === 'Belay: kill -> next RunStep invocation starts')?.note).toMatch(
      /^death caught, re-run at once \+ new worker/,
    );
  });

  it("reads the state machine's pause between the death and the re-run from the history", () => {
    const figures = recoveryFigures(
      recoverySamples({
        belayPauseMs: [3, 5, 4],
        belayRetryNewProcess: [1, 0, 1],
        provisionedPauseMs: [2, 2, 2],
      }),
    );
    expect(figures.find((f) => f.label === 'Belay: kill -> next RunStep invocation starts')?.note).toBe(
      'death caught -> re-run scheduled 4 ms (3 to 5), no backoff + new worker process in 2 of 3 runs (an idle warm worker took the others); module load 500 ms',
    );
    const p = 'Belay, 2 provisioned RunSteps';
    expect(figures.find((f) => f.label === `${p}: kill -> next RunStep invocation starts`)?.note).toMatch(
      /^death caught -> re-run scheduled 2 ms, no backoff; an initialized worker took it/,
    );
    // The direct figure is the restart and the re-run, as measured: 1,250, 1,300, 1,500.
    expect(byLabel(figures, 'Belay: kill -> step 12 verified again (direct)')).toBe(1_300);
  });

  it('prints the Temporal recipe first: its time lost by wall times and direct, against naive and Belay', () => {
    const figures = recoveryFigures(
      recoverySamples({
        naiveStepsExecutedWithCrash: [26, 26, 26],
        naiveKillToVerifiedMs: [4_500, 4_000, 5_000],
        recipeCleanMs: [8_000, 8_200, 7_900],
        recipeCrashedMs: [10_000, 9_500, 9_000],
        recipeKillToVerifiedMs: [1_600, 1_400, 1_500],
        recipeStepsExecutedWithCrash: [14, 14, 14],
        provisionedCrashedMs: [],
        provisionedRestartMs: [],
        provisionedInitMs: [],
        provisionedRerunMs: [],
      }),
    );
    expect(figures[0]?.label).toBe('Temporal recipe: wall time, clean run');
    // 9,500 - 8,000.
    expect(byLabel(figures, 'Temporal recipe: time lost to the crash (wall times)')).toBe(1_500);
    expect(byLabel(figures, 'Temporal recipe: kill -> step 12 verified again (direct)')).toBe(1_500);
    // Naive lost 4,000: 4,000 / 1,500.
    expect(byLabel(figures, 'ratio: naive time lost / Temporal recipe time lost')).toBeCloseTo(2.667, 3);
    // Like for like against Belay's direct 1,300 ms, judged against 3x.
    const recipe = figures.find(
      (f) => f.label === 'ratio: Temporal recipe / Belay, kill -> step 12 verified again (both direct)',
    );
    expect(recipe?.value).toBeCloseTo(1_500 / 1_300, 6);
    expect(recipe?.verdict).toEqual({ target: '>= 3x', pass: false });
    const wall = figures.find((f) => f.label === 'Temporal recipe: wall time, killed in step 12');
    expect(wall?.note).toContain('14 steps executed for 14');
  });
});

describe('coordinator overhead', () => {
  it('subtracts browser time and the approval wait, then divides by the steps', () => {
    expect(overheadPerStep({ wallMs: 10_000, browserMs: 6_000, approvalWaitMs: 600, steps: 14 })).toBeCloseTo(
      3_400 / 14,
    );
    expect(() => overheadPerStep({ wallMs: 1, browserMs: 0, approvalWaitMs: 0, steps: 0 })).toThrow();
  });

  it("is the median of per-run overheads with their range; cold judged against 400 ms on Lambda's Node with the cache", () => {
    const sample = (overheadPerStepMs: number) => ({
      wallMs: 0,
      browserMs: 0,
      approvalWaitMs: 0,
      steps: 14,
      overheadPerStepMs,
    });
    const coldRuns = (runtime: ColdRuns['runtime'], label: string, values: number[]): ColdRuns => ({
      runtime,
      label,
      samples: values.map(sample),
    });
    const figures = overheadFigures(
      [sample(50), sample(150), sample(40)],
      [
        coldRuns('node22-cache', 'Node 22 with the cache', [350, 450]),
        coldRuns('node22', 'Node 22 without it', [600, 400]),
      ],
      {
        createMs: [],
        reattachFreshMs: [70, 80, 90],
        libraryLoadMs: [],
        freshProcessWallMs: [],
        reattachWarmMs: [0.1, 0.2, 0.3],
        screenshotCaptureMs: [],
        screenshotStoreMs: [],
        screenshotBytes: [],
      },
    );
    const warm = figures.find((f) => f.label === 'warm: coordinator overhead per step');
    const cached = figures.find(
      (f) => f.label === 'cold, Node 22 with the cache: coordinator overhead per step',
    );
    const uncached = figures.find(
      (f) => f.label === 'cold, Node 22 without it: coordinator overhead per step',
    );
    expect(warm?.value).toBe(50);
    // The warm wall figure is printed beside the counted ones, which carry the targets.
    expect(warm?.verdict).toBeUndefined();
    expect(cached?.value).toBe(400);
    expect(cached?.verdict).toEqual({ target: '< 400 ms', pass: false });
    expect(uncached?.value).toBe(500);
    expect(uncached?.verdict).toBeUndefined();
    // How much the runs differ is printed beside the median.
    expect(warm?.range).toEqual([40, 150]);
    expect(uncached?.range).toEqual([400, 600]);
    const text = formatReport({
      ...newReport(3, 20),
      sections: [
        {
          section: 'overhead',
          title: 'Coordinator overhead',
          figures: [warm, uncached].filter((f) => f !== undefined),
          violations: [],
          notes: [],
          loadAverage: { start: [0, 0, 0], end: [0, 0, 0] },
          durationSeconds: 1,
        },
      ],
    });
    expect(text).toMatch(
      /warm: coordinator overhead per step\s+50\.0 ms\s+\(median of 3 runs, 40\.0 to 150\)/,
    );
    expect(text).toMatch(
      /cold, Node 22 without it: coordinator overhead per step\s+500 ms\s+\(median of 2 runs, 400 to 600\)/,
    );
    expect(byLabel(figures, 'reattach, fresh process (attach only)')).toBe(80);
    expect(byLabel(figures, 'reattach, warm process (cached connection)')).toBe(0.2);
    // Without the per-function split (older samples), no breakdown is made up.
    expect(figures.some((f) => f.label.includes('of which'))).toBe(false);
  });

  it('splits the overhead into Start, Finish and RunStep beyond the step, from the runner', () => {
    const run = (lambda: Record<string, number>) =>
      overheadSample({
        wallMs: 5_000,
        browserMs: 3_500,
        approvalWaitMs: 100,
        steps: 14,
        lambdaMsByFunction: lambda,
      } as unknown as Parameters<typeof overheadSample>[0]);
    const samples = [
      run({ start: 350, finish: 500, 'run-step': 4_200 }),
      run({ start: 420, finish: 560, 'run-step': 4_340 }),
      run({ start: 280, finish: 420, 'run-step': 4_060 }),
    ];
    expect(samples[0]?.overheadPerStepMs).toBeCloseTo(1_400 / 14);
    const figures = overheadFigures(samples, []);
    expect(byLabel(figures, 'warm:   of which Start per step')).toBeCloseTo(25);
    expect(byLabel(figures, 'warm:   of which Finish per step')).toBeCloseTo(500 / 14);
    expect(byLabel(figures, 'warm:   of which RunStep beyond the step itself')).toBeCloseTo(50);
    // Samples without the split at the action print no such lines.
    expect(figures.some((f) => f.label.includes("before the step's action"))).toBe(false);
  });

  it("splits RunStep's invocations at the step's action, from the runner's events", () => {
    const phases = new RunStepPhases();
    const started = (requestId: string, functionName = 'belay-run-step') => ({
      functionName,
      requestId,
      pid: 1,
      cold: false,
    });
    const ended = (requestId: string, durationMs: number, functionName = 'belay-run-step') => ({
      functionName,
      requestId,
      pid: 1,
      durationMs,
      outcome: 'success' as const,
    });
    const point = (requestId: string | undefined, p: 'before-action' | 'after-action' | 'mid-action') => ({
      functionName: 'belay-run-step',
      pid: 1,
      requestId,
      point: p,
      info: {},
    });
    // A step: handed over at 100 (the call began at 70), its action from 130 to 330, ended at 370.
    phases.started(started('a'), 100);
    phases.point(point('a', 'before-action'), 130);
    phases.point(point('a', 'mid-action'), 200);
    phases.point(point('b', 'before-action'), 210); // not a RunStep invocation seen: ignored
    phases.point(point(undefined, 'after-action'), 220); // no request id: ignored
    phases.point(point('a', 'after-action'), 330);
    phases.ended(ended('a', 300), 370);
    // One that asks for approval: no action, all of it before.
    phases.started(started('c'), 400);
    phases.ended(ended('c', 20), 420);
    // Another function's invocation is not RunStep's.
    phases.started(started('d', 'belay-finish'), 500);
    phases.ended(ended('d', 50, 'belay-finish'), 550);
    expect(phases.totals()).toEqual({
      initMs: 30,
      beforeActionMs: 30 + 20,
      actionMs: 200,
      afterActionMs: 40,
      invocations: 2,
      actionCpuMs: 0,
    });

    const sample = (before: number, after: number, init: number) =>
      overheadSample({
        wallMs: 5_000,
        browserMs: 3_500,
        approvalWaitMs: 100,
        steps: 14,
        lambdaMsByFunction: { start: 350, finish: 500, 'run-step': 4_200 },
        runStepPhases: {
          initMs: init,
          beforeActionMs: before,
          actionMs: 3_500,
          afterActionMs: after,
          invocations: 15,
        },
      } as unknown as Parameters<typeof overheadSample>[0]);
    const warm = [sample(280, 420, 0), sample(420, 560, 14), sample(140, 280, 28)];
    const cold: ColdRuns[] = [
      { runtime: 'node22-cache', label: 'Node 22 with the cache', samples: [sample(2_800, 700, 7_000)] },
      { runtime: 'node20', label: 'Node 20', samples: [sample(4_200, 700, 8_400)] },
    ];
    const figures = overheadFigures(warm, cold);
    expect(byLabel(figures, "warm:     RunStep before the step's action")).toBeCloseTo(20);
    expect(byLabel(figures, "warm:     RunStep after the step's verify")).toBeCloseTo(30);
    expect(figures.some((f) => f.label === 'warm:     RunStep module load and hand-off')).toBe(false);
    const c = 'cold, Node 22 with the cache';
    expect(byLabel(figures, `${c}:     RunStep module load and hand-off`)).toBeCloseTo(500);
    expect(byLabel(figures, `${c}:     RunStep before the step's action`)).toBeCloseTo(200);
    // The next configuration, beside it: the same split, without what the first already showed.
    expect(byLabel(figures, 'cold, Node 20:     RunStep module load and hand-off')).toBeCloseTo(600);
    expect(figures.some((f) => f.label === 'cold, Node 20:   of which Start per step')).toBe(false);
    expect(figures.some((f) => f.label === `${c}:   of which Start per step`)).toBe(true);
    // A run without the split leaves the lines out rather than a median of the others.
    const mixed = overheadFigures(
      [...warm, { ...warm[0], runStepBeforeActionPerStepMs: undefined } as never],
      [],
    );
    expect(mixed.some((f) => f.label.includes("before the step's action"))).toBe(false);
  });
});

describe('cost', () => {
  const sample = (over: Partial<CostSample>): CostSample => ({
    steps: 14,
    stateTransitions: 42,
    invocationsScheduled: 21,
    invocationsRunner: 21,
    invocationsLedger: 17,
    lambdaMsRunner: 7_200,
    lambdaMsLedger: 5_000,
    dynamoWritesLedger: 40,
    sessionSeconds: 36,
    humanInterventions: 1,
    statesEntered: {},
    ledgerByType: {},
    ...over,
  });

  it('prices one job with the rates file and scales to 1,000 jobs', () => {
    const usage = medianUsage([
      sample({}),
      sample({ stateTransitions: 30 }),
      sample({ stateTransitions: 50 }),
    ]);
    expect(usage.stateTransitions).toBe(42);
    const price = pricePer1000(usage);
    expect(price.byComponent.stateTransitions).toBeCloseTo(42 * 0.025, 10); // $0.025 per 1,000
    expect(price.byComponent.lambdaInvocations).toBeCloseTo(21 * 1000 * RATES.lambdaRequest, 12);
    expect(price.byComponent.lambdaMs).toBeCloseTo(
      7.2 * RATES.lambdaMemoryGb * RATES.lambdaGbSecond * 1000,
      10,
    );
    expect(price.byComponent.dynamoWrites).toBeCloseTo(40 * 1000 * RATES.dynamoWriteUnit, 12);
    expect(price.byComponent.browserSeconds).toBeCloseTo((36 / 3600) * RATES.browserHour * 1000, 10);
    const published =
      price.byComponent.stateTransitions +
      price.byComponent.lambdaInvocations +
      price.byComponent.lambdaMs +
      price.byComponent.dynamoWrites;
    expect(price.published).toBeCloseTo(published, 10);
    expect(price.total).toBeCloseTo(
      published + price.byComponent.browserSeconds + RATES.humanIntervention * 1000,
      8,
    );
  });

  it('reports transitions per step against 2.5', () => {
    const figures = costFigures([sample({ stateTransitions: 35 }), sample({ stateTransitions: 42 })]);
    const perStep = figures.find((f) => f.label === 'state transitions per step');
    expect(perStep?.value).toBeCloseTo((2.5 + 3) / 2);
    expect(perStep?.verdict?.pass).toBe(false);
    expect(byLabel(figures, 'Lambda invocations per job (ledger cost records)')).toBe(17);
  });
});

describe('concurrency', () => {
  const base = {
    jobs: 20,
    cap: 5,
    elapsedMs: 240_000,
    jobMs: Array.from({ length: 20 }, (_, i) => (i + 1) * 1000),
    succeeded: 20,
    ordersPlacedTotal: 20,
  };

  it('jobs per minute, the most browsers at once, p50/p95 job time', () => {
    const figures = concurrencyFigures({
      ...base,
      samples: [0, 3, 5, 4].map((running, i) => ({ atMs: i * 250, running })),
    });
    expect(byLabel(figures, 'jobs per minute (20 jobs, cap 5)')).toBe(5);
    expect(byLabel(figures, 'most browsers alive at once')).toBe(5);
    expect(byLabel(figures, 'job time p50 (queueing included)')).toBe(10_000);
    expect(byLabel(figures, 'job time p95 (queueing included)')).toBe(19_000);
    expect(jobsPerMinute(3, 0)).toBeNaN();
  });

  it('a sample over the cap is a VIOLATION, and so is a job that failed or ordered twice', () => {
    const samples = [
      { atMs: 0, running: 5 },
      { atMs: 250, running: 6 },
    ];
    expect(capViolations(samples, 5)).toEqual([{ atMs: 250, running: 6 }]);
    const lines = concurrencyViolations({ ...base, samples, succeeded: 19, ordersPlacedTotal: 21 });
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/6 browsers alive at \+0\.25 s, above the cap of 5/);
    expect(concurrencyViolations({ ...base, samples: [{ atMs: 0, running: 5 }] })).toEqual([]);
  });
});

describe('verdicts and the browser section', () => {
  it('PASS/MISS helpers never pass on NaN or null', () => {
    expect(atMost(1, 1, 't').pass).toBe(true);
    expect(below(1, 1, 't').pass).toBe(false);
    expect(atLeast(Number.NaN, 1, 't').pass).toBe(false);
    expect(atMost(null, 1, 't').pass).toBe(false);
  });

  it('browser figures are medians over the runs, fresh reattach judged against 1 s', () => {
    const figures = browserFigures({
      createMs: [300, 200, 250],
      reattachFreshMs: [80, 1200, 70],
      libraryLoadMs: [300, 320, 280],
      freshProcessWallMs: [900, 1000, 1100],
      reattachWarmMs: [0.01, 0.02, 0.03],
      screenshotCaptureMs: [60, 80, 70],
      screenshotStoreMs: [10, 20, 5],
      screenshotBytes: [90 * 1024, 100 * 1024, 300 * 1024],
    });
    expect(byLabel(figures, 'create session (Chromium launched, CDP ready)')).toBe(250);
    expect(byLabel(figures, 'screenshot: what it adds to a step (capture + store)')).toBe(75);
    const size = figures.find((f) => f.label === '  screenshot: size');
    expect(size?.value).toBe(100);
    expect(size?.verdict?.pass).toBe(true);
    const fresh = figures.find((f) => f.label === 'reattach, fresh process (attach only)');
    expect(fresh?.value).toBe(80);
    expect(fresh?.verdict?.pass).toBe(true);
    expect(byLabel(figures, '  fresh process: playwright-core load before it')).toBe(300);
  });
});

describe('counted overhead of a warm step', () => {
  const read = { Query: 1, GetItem: 1, TransactWriteItems: 1 };
  /** 14 steps of 3 calls, the write step's 5, a relay's one. */
  const calls = [
    ...Array.from({ length: 12 }, (_, i) => ({ stepIndex: i, calls: read })),
    { stepIndex: 12, calls: { ...read, TransactWriteItems: 2, UpdateItem: 1 } },
    { stepIndex: 13, calls: read },
    { calls: { TransactWriteItems: 1 } },
  ];
  const sample = (over: Partial<CountedSample> = {}): CountedSample => ({
    steps: 14,
    runStepCalls: calls,
    runStepDynamoPerStep: { Query: 1, TransactWriteItems: 1.07, GetItem: 1 },
    allDynamoPerStep: { Query: 1.2, TransactWriteItems: 1.3, GetItem: 1.1 },
    invocationsPerStep: 17 / 14,
    relays: 1,
    transitionsPerStep: 27 / 14,
    runStepCpuMsPerStep: 30,
    ownCpuMsPerStep: 12,
    allCpuMsPerStep: 20,
    ...over,
  });

  it('judges calls, invocations, transitions and CPU per step against their targets, naming every call', () => {
    const figures = countedFigures([
      sample(),
      sample({ ownCpuMsPerStep: 18, transitionsPerStep: 34 / 14 }),
      sample({ ownCpuMsPerStep: 10 }),
    ]);
    const step = figures.find((f) => f.label === 'warm: DynamoDB calls of a step (RunStep, median step)');
    expect(step?.value).toBe(3);
    expect(step?.verdict).toEqual({ target: '<= 3', pass: true });
    // Each call beyond the median step is named: the write step's, and the invocations that ran none.
    expect(step?.note).toBe(
      'a step: Query 1, GetItem 1, TransactWriteItems 1; above 3: step 13: 5 (TransactWriteItems 2, Query 1, GetItem 1, UpdateItem 1); 1 invocations that ran no step (relays, a wait asked): TransactWriteItems 1 in all',
    );
    const mean = figures.find((f) => f.label === 'warm: DynamoDB calls per step (RunStep, all / steps)');
    expect(mean?.value).toBeCloseTo(3.07);
    expect(mean?.verdict).toBeUndefined();
    expect(mean?.note).toBe('by operation: TransactWriteItems 1.07, Query 1.00, GetItem 1.00');
    const transitions = figures.find((f) => f.label === 'warm: state transitions per step');
    expect(transitions?.value).toBeCloseTo(27 / 14);
    expect(transitions?.verdict?.pass).toBe(true);
    expect(figures.find((f) => f.label === 'warm: Lambda invocations per step')?.verdict).toEqual({
      target: '<= 1.4',
      pass: true,
    });
    expect(figures.find((f) => f.label === 'warm: Lambda invocations per step')?.note).toContain(
      'relays: 1 a job',
    );
    const cpu = figures.find((f) => f.label === "warm: Belay's own CPU per step (RunStep)");
    expect(cpu?.value).toBe(12);
    expect(cpu?.range).toEqual([10, 18]);
    expect(cpu?.verdict).toEqual({ target: '< 15 ms', pass: true });
    expect(countedFigures([])).toEqual([]);
  });

  it("counts a run's calls and CPU by function, per step", () => {
    const run = {
      steps: 14,
      invocationsScheduled: 17,
      relays: 0,
      stateTransitions: 27,
      runStepPhases: {
        initMs: 0,
        beforeActionMs: 0,
        actionMs: 0,
        afterActionMs: 0,
        invocations: 14,
        actionCpuMs: 56,
      },
      runStepInvocations: [
        { stepIndex: 0, awsCalls: { 'DynamoDB.Query': 1, 'S3.PutObject': 1 } },
        { awsCalls: {} },
      ],
      usageByFunction: {
        'run-step': {
          invocations: 14,
          cpuMs: 140,
          awsCalls: { 'DynamoDB.Query': 14, 'DynamoDB.TransactWriteItems': 14, 'S3.PutObject': 2 },
        },
        start: {
          invocations: 1,
          cpuMs: 28,
          awsCalls: { 'DynamoDB.Query': 1, 'DynamoDB.TransactWriteItems': 3 },
        },
      },
    } as unknown as Parameters<typeof countedSample>[0];
    expect(countedSample(run)).toEqual({
      steps: 14,
      runStepCalls: [{ stepIndex: 0, calls: { Query: 1 } }, { calls: {} }],
      runStepDynamoPerStep: { Query: 1, TransactWriteItems: 1 },
      allDynamoPerStep: { Query: 15 / 14, TransactWriteItems: 17 / 14 },
      invocationsPerStep: 17 / 14,
      relays: 0,
      transitionsPerStep: 27 / 14,
      runStepCpuMsPerStep: 10,
      ownCpuMsPerStep: 6,
      allCpuMsPerStep: 12,
    });
  });
});

describe('Belay against the naive runner, clean job times', () => {
  it('is the ratio of medians at each speed, judged against 1.15 only with the site latency', () => {
    const figures = wallRatioFigures([
      { speed: 'own', latency: false, naiveMs: [5_000, 6_000, 5_500], belayMs: [6_600, 6_500, 7_000] },
      {
        speed: 'p50=300 ms, p95=1200 ms',
        latency: true,
        naiveMs: [20_000, 21_000, 19_000],
        belayMs: [22_000, 23_500, 22_500],
      },
      { speed: 'p50=50 ms, p95=100 ms', latency: true, naiveMs: [], belayMs: [1] },
    ]);
    expect(figures).toHaveLength(2);
    expect(figures[0]?.label).toBe("Belay / naive clean job time (shop's own speed)");
    expect(figures[0]?.value).toBeCloseTo(6_600 / 5_500);
    expect(figures[0]?.verdict).toBeUndefined();
    expect(figures[1]?.label).toBe('Belay / naive clean job time (site latency p50=300 ms, p95=1200 ms)');
    expect(figures[1]?.value).toBeCloseTo(22_500 / 20_000);
    expect(figures[1]?.verdict).toEqual({ target: '<= 1.15', pass: true });
  });
});
