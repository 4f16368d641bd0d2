/**
 * The overhead of a warm step counted, not timed: DynamoDB calls, Lambda invocations, state
 * transitions and Belay's own CPU time per step of a clean checkout@1 job. Unlike wall times on
 * a shared machine these hold on any machine: the calls are counted where each worker sends them
 * (every attempt, as the service sees it), the invocations and transitions in the execution
 * history, the CPU in each worker process.
 */
import type { MeasuredRun } from './context.ts';
import { atMost, below, type Figure, median, spread } from './figures.ts';

/** Targets of a warm step. */
export const COUNTED_TARGETS = Object.freeze({
  /** One consistent Query (the job and its ledger) and one transaction (the checkpoint), and one named extra. */
  dynamoCallsPerStep: 3,
  /**
   * A RunStep a step, Start, the approval's hand-off and Finish once a job, and at most two
   * relays (RunNextStep handing on a wait or the finish that RunStep returned): 19 on checkout@1.
   */
  invocationsPerStep: 1.4,
  transitionsPerStep: 2.2,
  cpuMsPerStep: 15,
});

/** One RunStep invocation's DynamoDB calls, by operation, and the step it ran (none: a relay, or a wait asked before acting). */
export interface StepCalls {
  stepIndex?: number;
  calls: Record<string, number>;
}

/** What one clean run counted, per step (the JSON carries it). */
export interface CountedSample {
  steps: number;
  /** RunStep's DynamoDB calls, invocation by invocation. */
  runStepCalls: StepCalls[];
  /** RunStep's DynamoDB calls, by operation, per step. */
  runStepDynamoPerStep: Record<string, number>;
  /** Every function's DynamoDB calls (Start, RunStep, the approval, Finish), per step. */
  allDynamoPerStep: Record<string, number>;
  invocationsPerStep: number;
  /** RunNextStep invocations that only handed on RunStep's result, per job. */
  relays: number;
  transitionsPerStep: number;
  /** RunStep's worker CPU (user + system), ms per step. */
  runStepCpuMsPerStep: number;
  /** The same less the step's own action (its run and verify, between `before-action` and `after-action`): Belay's own. */
  ownCpuMsPerStep: number;
  /** Every function's worker CPU, ms per step. */
  allCpuMsPerStep: number;
}

const RUN_STEP = 'run-step';

/** `DynamoDB.Query` -> `Query`; other services keep their name. */
function dynamoCalls(calls: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(calls)
      .filter(([call]) => call.startsWith('DynamoDB.'))
      .map(([call, n]) => [call.slice('DynamoDB.'.length), n]),
  );
}

function perStep(calls: Record<string, number>, steps: number): Record<string, number> {
  return Object.fromEntries(Object.entries(calls).map(([k, n]) => [k, n / steps]));
}

function sum(calls: Record<string, number>): number {
  return Object.values(calls).reduce((a, b) => a + b, 0);
}

/** The counted figures of one clean run. */
export function countedSample(run: MeasuredRun): CountedSample {
  const all: Record<string, number> = {};
  let allCpu = 0;
  for (const usage of Object.values(run.usageByFunction)) {
    allCpu += usage.cpuMs;
    for (const [call, n] of Object.entries(dynamoCalls(usage.awsCalls))) all[call] = (all[call] ?? 0) + n;
  }
  const runStep = run.usageByFunction[RUN_STEP];
  return {
    steps: run.steps,
    runStepCalls: run.runStepInvocations.map((i) => ({
      ...(i.stepIndex === undefined ? {} : { stepIndex: i.stepIndex }),
      calls: dynamoCalls(i.awsCalls),
    })),
    runStepDynamoPerStep: perStep(dynamoCalls(runStep?.awsCalls ?? {}), run.steps),
    allDynamoPerStep: perStep(all, run.steps),
    invocationsPerStep: run.invocationsScheduled / run.steps,
    relays: run.relays,
    transitionsPerStep: run.stateTransitions / run.steps,
    runStepCpuMsPerStep: (runStep?.cpuMs ?? Number.NaN) / run.steps,
    ownCpuMsPerStep: ((runStep?.cpuMs ?? Number.NaN) - run.runStepPhases.actionCpuMs) / run.steps,
    allCpuMsPerStep: allCpu / run.steps,
  };
}

/** `Query 1.00, TransactWriteItems 1.00, GetItem 1.07`: the median run's calls per step, most first. */
function breakdown(calls: Record<string, number>, digits = 2): string {
  return Object.entries(calls)
    .sort((a, b) => b[1] - a[1])
    .map(([op, n]) => `${op} ${n.toFixed(digits)}`)
    .join(', ');
}

/** The calls of a step's invocation, median over the run's steps (a step re-run counts once per invocation). */
function medianStepCalls(s: CountedSample): number {
  return median(s.runStepCalls.filter((c) => c.stepIndex !== undefined).map((c) => sum(c.calls)));
}

/**
 * What a run's steps did beyond the median one, each named: the steps above it, with their calls,
 * and the invocations that ran no step (relays, a wait asked before acting).
 */
function extras(s: CountedSample, limit: number): string {
  const stepped = s.runStepCalls.filter((c) => c.stepIndex !== undefined);
  const typical = stepped.find((c) => sum(c.calls) === Math.round(medianStepCalls(s)));
  const above = stepped
    .filter((c) => sum(c.calls) > limit)
    .map((c) => `step ${(c.stepIndex ?? 0) + 1}: ${sum(c.calls)} (${breakdown(c.calls, 0)})`);
  const none = s.runStepCalls.filter((c) => c.stepIndex === undefined);
  const noneCalls: Record<string, number> = {};
  for (const c of none)
    for (const [op, n] of Object.entries(c.calls)) noneCalls[op] = (noneCalls[op] ?? 0) + n;
  return [
    `a step: ${typical ? breakdown(typical.calls, 0) : 'n/a'}`,
    ...(above.length > 0 ? [`above ${limit}: ${above.join('; ')}`] : []),
    ...(none.length > 0
      ? [
          `${none.length} invocations that ran no step (relays, a wait asked): ${breakdown(noneCalls, 0)} in all`,
        ]
      : []),
  ].join('; ');
}

/** The run whose total is the median (the lower middle for an even count): its breakdown is printed. */
function medianRun(
  samples: readonly CountedSample[],
  total: (s: CountedSample) => number,
): CountedSample | undefined {
  const sorted = [...samples].sort((a, b) => total(a) - total(b));
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

/** Figures of the counted overhead (pure). */
export function countedFigures(samples: readonly CountedSample[]): Figure[] {
  if (samples.length === 0) return [];
  const runs = samples.length;
  const f = (label: string, values: number[], unit: string): Figure => {
    const range = spread(values);
    return { label, value: median(values), unit, statistic: 'median', runs, ...(range ? { range } : {}) };
  };
  const t = COUNTED_TARGETS;
  const runStepTotal = (s: CountedSample): number => sum(s.runStepDynamoPerStep);
  const allTotal = (s: CountedSample): number => sum(s.allDynamoPerStep);
  const dynamo = f(
    'warm: DynamoDB calls of a step (RunStep, median step)',
    samples.map(medianStepCalls),
    'calls',
  );
  const dynamoMean = f(
    'warm: DynamoDB calls per step (RunStep, all / steps)',
    samples.map(runStepTotal),
    'calls',
  );
  const everyDynamo = f('warm: DynamoDB calls per step (every function)', samples.map(allTotal), 'calls');
  const invocations = f(
    'warm: Lambda invocations per step',
    samples.map((s) => s.invocationsPerStep),
    'invocations',
  );
  const transitions = f(
    'warm: state transitions per step',
    samples.map((s) => s.transitionsPerStep),
    'transitions',
  );
  const cpu = f(
    "warm: Belay's own CPU per step (RunStep)",
    samples.map((s) => s.ownCpuMsPerStep),
    'ms',
  );
  const withAction = f(
    'warm: RunStep CPU per step, with the step itself',
    samples.map((s) => s.runStepCpuMsPerStep),
    'ms',
  );
  const everyCpu = f(
    'warm: CPU per step, every function (steps included)',
    samples.map((s) => s.allCpuMsPerStep),
    'ms',
  );
  return [
    {
      ...dynamo,
      verdict: atMost(dynamo.value, t.dynamoCallsPerStep, `<= ${t.dynamoCallsPerStep}`),
      note: (() => {
        const run = medianRun(samples, medianStepCalls);
        return run ? extras(run, t.dynamoCallsPerStep) : '';
      })(),
    },
    {
      ...dynamoMean,
      note: `by operation: ${breakdown(medianRun(samples, runStepTotal)?.runStepDynamoPerStep ?? {})}`,
    },
    {
      ...everyDynamo,
      note: `Start, RunStep, the approval, Finish: ${breakdown(medianRun(samples, allTotal)?.allDynamoPerStep ?? {})}`,
    },
    {
      ...invocations,
      verdict: atMost(invocations.value, t.invocationsPerStep, `<= ${t.invocationsPerStep}`),
      note: `the execution history: every task scheduled (RunStep once a step; Start, the approval and Finish once a job; relays: ${median(samples.map((s) => s.relays))} a job, RunNextStep handing on a wait or the finish)`,
    },
    {
      ...transitions,
      verdict: atMost(transitions.value, t.transitionsPerStep, `<= ${t.transitionsPerStep}`),
      note: 'the execution history, as AWS bills them (RunStep, RunNextStep, Route for two steps)',
    },
    {
      ...cpu,
      verdict: below(cpu.value, t.cpuMsPerStep, `< ${t.cpuMsPerStep} ms`),
      note: "RunStep's worker process, user + system, over its invocations, less the step's own run and verify (between its before-action and after-action points)",
    },
    { ...withAction, note: "the playbook's page work driven from the process included" },
    {
      ...everyCpu,
      note: "every function of the job's workers (Start opens the browser session, Finish verifies the order)",
    },
  ];
}
