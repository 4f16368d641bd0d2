/**
 * Section `cost`: what one verified checkout@1 job uses (state transitions, Lambda
 * invocations and time, DynamoDB writes, browser time) and what 1,000 of them cost at the
 * rates in `lambdas/lib/cost/rates.ts`.
 */
import { RATES, RATES_AS_OF } from '../../lambdas/lib/cost/rates.ts';
import { BenchContext, type MeasuredRun } from './context.ts';
import { atMost, type Figure, type JobUsage, median, pricePer1000 } from './figures.ts';
import type { SectionResult } from './report.ts';

/** Per-run usage, as the JSON carries it. */
export interface CostSample {
  steps: number;
  stateTransitions: number;
  invocationsScheduled: number;
  invocationsRunner: number;
  invocationsLedger: number;
  lambdaMsRunner: number;
  lambdaMsLedger: number;
  dynamoWritesLedger: number;
  sessionSeconds: number;
  humanInterventions: number;
  /** States entered by name (the transitions, itemised). */
  statesEntered: Record<string, number>;
  /** Ledger entries by type, with the invocations and writes they record. */
  ledgerByType: MeasuredRun['ledgerByType'];
}

export function costSample(run: MeasuredRun): CostSample {
  return {
    steps: run.steps,
    stateTransitions: run.stateTransitions,
    invocationsScheduled: run.invocationsScheduled,
    invocationsRunner: run.runnerInvocations,
    invocationsLedger: run.ledgerCost.lambdaInvocations,
    lambdaMsRunner: run.runnerLambdaMs,
    lambdaMsLedger: run.ledgerCost.lambdaMs,
    dynamoWritesLedger: run.ledgerCost.dynamoWrites,
    sessionSeconds: run.sessionSeconds,
    humanInterventions: run.ledgerCost.humanInterventions,
    statesEntered: run.statesEntered,
    ledgerByType: run.ledgerByType,
  };
}

/** The usage priced for one job: medians of the samples. */
export function medianUsage(samples: readonly CostSample[]): JobUsage {
  const m = (pick: (s: CostSample) => number): number => median(samples.map(pick));
  return {
    stateTransitions: m((s) => s.stateTransitions),
    lambdaInvocations: m((s) => s.invocationsScheduled),
    lambdaMs: m((s) => s.lambdaMsRunner),
    dynamoWrites: m((s) => s.dynamoWritesLedger),
    browserSeconds: m((s) => s.sessionSeconds),
    humanInterventions: m((s) => s.humanInterventions),
  };
}

/** Figures of the section (pure). */
export function costFigures(samples: readonly CostSample[]): Figure[] {
  const runs = samples.length;
  const m = (pick: (s: CostSample) => number): number => median(samples.map(pick));
  const f = (label: string, value: number, unit: string, note?: string): Figure => ({
    label,
    value,
    unit,
    statistic: 'median',
    runs,
    ...(note ? { note } : {}),
  });
  const perStep = m((s) => s.stateTransitions / s.steps);
  const price = pricePer1000(medianUsage(samples));
  const usd = (label: string, value: number, note: string): Figure => f(label, value, '$', note);
  return [
    { ...f('state transitions per step', perStep, 'transitions'), verdict: atMost(perStep, 2.5, '<= 2.5') },
    f(
      'state transitions per job',
      m((s) => s.stateTransitions),
      'transitions',
      'execution history, as AWS bills them',
    ),
    f(
      'Lambda invocations per job (state machine)',
      m((s) => s.invocationsScheduled),
      'invocations',
      'history: every Task scheduled, retries included',
    ),
    f(
      'Lambda invocations per job (ledger cost records)',
      m((s) => s.invocationsLedger),
      'invocations',
      'what the handlers record in ledger entries',
    ),
    f(
      'Lambda time per job (measured)',
      m((s) => s.lambdaMsRunner),
      'ms',
      'sum of invocation durations seen by the local Lambda runner',
    ),
    f(
      'DynamoDB writes per job (ledger cost records)',
      m((s) => s.dynamoWritesLedger),
      'write units',
      "sum of every ledger entry's cost.dynamoWrites",
    ),
    f(
      'browser session time per job',
      m((s) => s.sessionSeconds),
      's',
      'session created -> ended in the browser service',
    ),
    usd(
      'per 1,000 jobs: Step Functions transitions',
      price.byComponent.stateTransitions,
      `$${RATES.stateTransition * 1000}/1,000 transitions (published)`,
    ),
    usd(
      'per 1,000 jobs: Lambda requests',
      price.byComponent.lambdaInvocations,
      `$${RATES.lambdaRequest * 1e6}/1M requests (published)`,
    ),
    usd(
      'per 1,000 jobs: Lambda duration',
      price.byComponent.lambdaMs,
      `$${RATES.lambdaGbSecond}/GB-s (published) x ${RATES.lambdaMemoryGb} GB (ASSUMED memory), local durations`,
    ),
    usd(
      'per 1,000 jobs: DynamoDB writes',
      price.byComponent.dynamoWrites,
      `$${RATES.dynamoWriteUnit * 1e6}/1M write units (published)`,
    ),
    usd(
      'per 1,000 jobs: AWS subtotal',
      price.published,
      'Step Functions + Lambda + DynamoDB, published prices only',
    ),
    usd(
      'per 1,000 jobs: browser time',
      price.byComponent.browserSeconds,
      `$${RATES.browserHour}/browser-hour: ASSUMED, not a published price`,
    ),
    usd(
      'per 1,000 verified jobs: machines',
      price.published + price.byComponent.browserSeconds,
      'AWS subtotal + browser time (assumed rate)',
    ),
    usd(
      'per 1,000 jobs: approvals by a person',
      price.byComponent.humanInterventions,
      `$${RATES.humanIntervention} per intervention: internal ESTIMATE, not a price`,
    ),
    usd('per 1,000 verified jobs: total with people', price.total, 'machines + approvals (estimate)'),
  ];
}

/** The first run's transitions and ledger records, itemised (what the figures include). */
export function itemised(sample: CostSample): string[] {
  const states = Object.entries(sample.statesEntered)
    .sort((a, b) => b[1] - a[1])
    .map(([name, n]) => `${name} ${n}`)
    .join(', ');
  const ledger = Object.entries(sample.ledgerByType)
    .map(([type, t]) => `${type} x${t.entries}: ${t.lambdaInvocations} inv, ${t.dynamoWrites} writes`)
    .join('; ');
  return [`States entered (run 1): ${states}.`, `Ledger cost records by entry type (run 1): ${ledger}.`];
}

/** Runs (or reuses) `ctx.runs` clean warm jobs and prices them. */
export async function runCost(ctx: BenchContext): Promise<{ result: SectionResult; samples: CostSample[] }> {
  const started = performance.now();
  const runs = await ctx.ensureCleanWarm(ctx.runs);
  const samples = runs.map(costSample);
  const first = samples[0];
  const result: SectionResult = {
    section: 'cost',
    title: `Cost per verified checkout@1 job (rates as of ${RATES_AS_OF}, us-east-1 on-demand)`,
    loadAverage: BenchContext.loadOf(runs),
    figures: costFigures(samples),
    notes: [
      `Rates from lambdas/lib/cost/rates.ts, RATES_AS_OF ${RATES_AS_OF}. Published: Step Functions Standard, Lambda arm64 requests and GB-seconds, DynamoDB on-demand writes. ASSUMED: the functions' memory (${RATES.lambdaMemoryGb} GB) and the browser-hour rate; ESTIMATE: a person's intervention.`,
      "The jobs priced are the clean warm runs (the recovery section's Belay clean runs when it ran: same jobs, not run again).",
      'A verified job = one that ended SUCCEEDED after Finish verified the order in the shop; each placed exactly one order.',
      'State transitions are counted from the execution history as AWS counts them (every state entered, plus each retry).',
      "Lambda invocations (state machine): every Task the execution scheduled: Start, RunStep x14 plus the ones that end without a completion (needs_approval, mfa_required), AwaitApproval, Finish (and Reauthenticate, OpenSession, Reconcile when a run needed them). The API's own invocations (POST /jobs, the decision, status reads) are not included.",
      "Ledger invocation records: every engine invocation records itself once, on the entry it writes (a completed step, a wait, the finish) or on an `invocation` entry of its own; one killed before it ended records nothing, so a crashed run's ledger figure can be below the state machine's.",
      "DynamoDB writes: the sum of every ledger entry's recorded cost.dynamoWrites (itemised below; an entry written with its job-item update in one transaction records 2). Writes no entry records: Start's job updates (execution name, QUEUED -> RUNNING), the session-owner item, capacity lease writes, and the API's rate-limit writes.",
      ...(first ? itemised(first) : []),
      'Lambda time is measured on this machine (loaded, 2 cores) by the local runner; AWS durations would differ.',
    ],
    violations: [],
    durationSeconds: (performance.now() - started) / 1000,
  };
  return { result, samples };
}
