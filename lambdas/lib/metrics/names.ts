/**
 * Every business metric Belay publishes, in one place: its name, unit and dimensions. The
 * code that emits them (`lambdas/lib/metrics/`), the watchdog, the CDK dashboard and alarms
 * (`cdk/constructs/operations-*.ts`) and the docs' runbook and metrics pages all read this table, so a
 * metric an alarm watches is exactly the metric the code writes.
 *
 * Dimensions stay bounded: each has a closed list of values (anything else is published as
 * `other`) or is bounded by the deployment (playbooks in the registry, applications in the
 * configuration). Job, tenant, session and execution ids are never dimensions: they are log
 * fields (searchable in CloudWatch Logs Insights), not metric series.
 */

import { STATE_MACHINE_FUNCTIONS, type StateMachineFunction } from '../engine/functions.ts';
import { JOB_STATUSES, type JobStatus, TERMINAL_STATUSES, WAIT_KINDS } from '../ledger/types.ts';

/** The CloudWatch namespace of every Belay metric. */
export const METRICS_NAMESPACE = 'Belay';
/** The `service` dimension Powertools adds to every metric; one value for all of Belay. */
export const METRICS_SERVICE = 'belay';

/** Why a job failed, as RecordFailure records it (`failure.reason`); the `Reason` dimension. */
export const FAILURE_REASONS = [
  'account-revoked',
  'retry-budget-exhausted',
  'outcome-not-verified',
  'deadline-exceeded',
  'queue-timeout',
  'misconfigured',
  'unknown-playbook',
  'wait-timed-out',
  'rejected',
  'unexpected-outcome',
  'error',
] as const;

/** What a task invocation ended with (`outcome` of its result, or `error`); the `Outcome` dimension. */
export const TASK_OUTCOMES = [
  'ready',
  'queued',
  'stopped',
  'completed',
  'finished',
  'needs_approval',
  'auth_expired',
  'mfa_required',
  'session_lost',
  'uncertain',
  'layout_changed',
  'takeover_requested',
  'retry',
  'lease_lost',
  'succeeded',
  'reused',
  'opened',
  'replaced',
  'reauthenticated',
  'done',
  'absent',
  'unknown',
  'waiting',
  'parked',
  'answered',
  // RunNextStep handing on RunStep's result without running a step (`engine/relay.ts`).
  'relayed',
  'error',
] as const;

/** Functions that publish `TaskOutcomes`: the state machine's tasks. */
export const TASK_FUNCTIONS: readonly StateMachineFunction[] = Object.freeze(
  Object.keys(STATE_MACHINE_FUNCTIONS) as StateMachineFunction[],
);

/**
 * What the recovery function (dead executions) did with a job: started a new
 * execution from the checkpoint, failed the job with its cause, or left it (it was not dead).
 */
export const RECOVERY_ACTIONS = ['resumed', 'failed', 'skipped'] as const;

/** Where people are told that a job waits for them. */
export const NOTIFICATION_CHANNELS = ['eventbridge', 'webhook'] as const;

/** A status a job can still leave. */
export type LiveStatus = Exclude<JobStatus, 'SUCCEEDED' | 'FAILED' | 'CANCELLED'>;

/** Non-terminal statuses the watchdog looks at: every status but the terminal ones. */
export const LIVE_STATUSES: readonly LiveStatus[] = Object.freeze(
  JOB_STATUSES.filter((s): s is LiveStatus => !TERMINAL_STATUSES.includes(s)),
);

/** The ledger writes whose optimistic lock (or a DynamoDB transaction) can lose a race. */
export const LEDGER_OPERATIONS = [
  'createJob',
  'append',
  'completeStep',
  'updateJob',
  'transition',
  'setWait',
  'clearWait',
] as const;

/** Value every dimension falls back to when given a value outside its list. */
export const OTHER = 'other';

/**
 * The dimensions and their values. `open: true` dimensions are bounded by the deployment, not
 * by a list: a value must be a short name (`[A-Za-z0-9@._-]`, at most 64 characters).
 */
export const DIMENSIONS = {
  Playbook: { open: true, values: [] },
  Application: { open: true, values: [] },
  Reason: { open: false, values: FAILURE_REASONS },
  Kind: { open: false, values: WAIT_KINDS },
  Status: { open: false, values: LIVE_STATUSES },
  Function: { open: false, values: TASK_FUNCTIONS },
  Outcome: { open: false, values: TASK_OUTCOMES },
  Action: { open: false, values: RECOVERY_ACTIONS },
  Channel: { open: false, values: NOTIFICATION_CHANNELS },
  Resolution: { open: false, values: ['done', 'absent'] },
  Operation: { open: false, values: LEDGER_OPERATIONS },
} as const satisfies Record<string, { open: boolean; values: readonly string[] }>;

export type DimensionName = keyof typeof DIMENSIONS;

/** CloudWatch units Belay uses (Powertools' `MetricUnit` values). */
export type Unit = 'Count' | 'Seconds' | 'Milliseconds' | 'Percent' | 'None';

interface MetricSpec {
  readonly unit: Unit;
  readonly dimensions: readonly DimensionName[];
  /** What it counts, for people (dashboard, docs). */
  readonly what: string;
  /** Who emits it. */
  readonly from: string;
}

/**
 * The metrics. `from` says where each is emitted: `ledger` metrics are read off the ledger
 * writes as they succeed (`observeLedger`), so they count what the ledger recorded, once.
 */
export const METRICS = {
  JobsSubmitted: {
    unit: 'Count',
    dimensions: ['Playbook'],
    what: 'jobs created (a repeated submit is not counted)',
    from: 'ledger',
  },
  JobsStarted: {
    unit: 'Count',
    dimensions: ['Playbook'],
    what: 'jobs that took their first browser lease (left the queue)',
    from: 'ledger',
  },
  JobsSucceeded: {
    unit: 'Count',
    dimensions: ['Playbook'],
    what: 'verified completions (Finish verified every write in its application)',
    from: 'ledger',
  },
  JobsFailed: {
    unit: 'Count',
    dimensions: ['Playbook', 'Reason'],
    what: 'jobs failed, by reason',
    from: 'ledger',
  },
  JobsCancelled: {
    unit: 'Count',
    dimensions: ['Playbook'],
    what: 'jobs cancelled by a caller',
    from: 'ledger',
  },
  JobDuration: {
    unit: 'Seconds',
    dimensions: ['Playbook'],
    what: 'submission to verified completion, human waits and queueing included',
    from: 'ledger',
  },
  QueueWait: {
    unit: 'Seconds',
    dimensions: ['Playbook'],
    what: 'submission to first browser lease',
    from: 'ledger',
  },
  StepsCompleted: {
    unit: 'Count',
    dimensions: ['Playbook'],
    what: 'steps verified and checkpointed',
    from: 'ledger',
  },
  StepDuration: {
    unit: 'Milliseconds',
    dimensions: ['Playbook'],
    what: 'the RunStep invocation that verified a step (reattach, step, verify, checkpoint)',
    from: 'ledger',
  },
  StepsRetried: {
    unit: 'Count',
    dimensions: ['Playbook'],
    what: 'failed step attempts that spent the retry budget',
    from: 'ledger',
  },
  ReSignIns: {
    unit: 'Count',
    dimensions: ['Application'],
    what: 'sign-ins the engine made again because a site signed the account out',
    from: 'ledger',
  },
  SessionsReplaced: {
    unit: 'Count',
    dimensions: ['Application'],
    what: 'browser sessions found dead and replaced from the profile',
    from: 'ledger',
  },
  Reconciliations: {
    unit: 'Count',
    dimensions: ['Resolution'],
    what: 'uncertain writes resolved by probing the application',
    from: 'ledger',
  },
  HumanWaitsRequested: {
    unit: 'Count',
    dimensions: ['Kind'],
    what: 'waits for a person (approval, MFA code, review)',
    from: 'ledger',
  },
  HumanWaitDuration: {
    unit: 'Seconds',
    dimensions: ['Kind'],
    what: 'wait requested to wait cleared (answered, or ended)',
    from: 'ledger',
  },
  JobsParked: {
    unit: 'Count',
    dimensions: [],
    what: 'jobs that gave their browser back during a long wait or after losing their lease',
    from: 'ledger',
  },
  BrowserActiveSeconds: {
    unit: 'Seconds',
    dimensions: ['Playbook'],
    what: 'browser time spent inside steps',
    from: 'ledger',
  },
  BrowserSessionSeconds: {
    unit: 'Seconds',
    dimensions: ['Application'],
    what: 'lifetime of each browser session the engine ended (what a provider bills)',
    from: 'ledger',
  },
  CostUsd: {
    unit: 'None',
    dimensions: ['Playbook'],
    what: 'dollars recorded on ledger entries at lambdas/lib/cost/rates.ts (SUM / JobsSucceeded = cost per verified completion)',
    from: 'ledger',
  },
  LedgerConflicts: {
    unit: 'Count',
    dimensions: ['Operation'],
    what: 'ledger writes that lost an optimistic-lock race (StaleCheckpointError)',
    from: 'ledger',
  },
  TaskOutcomes: {
    unit: 'Count',
    dimensions: ['Function', 'Outcome'],
    what: 'state machine task invocations by how they ended',
    from: 'engine handler',
  },
  ModelCalls: {
    unit: 'Count',
    dimensions: ['Playbook'],
    what: "model calls of agent steps and agent probes (read off the ledger's action and probe-answered entries)",
    from: 'ledger',
  },
  ModelCacheHits: {
    unit: 'Count',
    dimensions: ['Playbook'],
    what: 'agent actions served from the action cache in steps that verified with them (read off the completion entry)',
    from: 'ledger',
  },
  NotificationFailures: {
    unit: 'Count',
    dimensions: ['Channel'],
    what: 'wait notifications that could not be delivered',
    from: 'notifier',
  },
  RecoveryActions: {
    unit: 'Count',
    dimensions: ['Action'],
    what: 'what the recovery function did with a job whose execution died',
    from: 'recovery function',
  },
  RecoveryErrors: {
    unit: 'Count',
    dimensions: [],
    what: 'recovery-function invocations that failed',
    from: 'recovery function',
  },
  StuckJobs: {
    unit: 'Count',
    dimensions: ['Status'],
    what: 'non-terminal jobs with no progress for longer than their status allows',
    from: 'watchdog',
  },
  LiveJobs: { unit: 'Count', dimensions: ['Status'], what: 'non-terminal jobs by status', from: 'watchdog' },
  QueueDepth: { unit: 'Count', dimensions: [], what: 'QUEUED jobs, all tenants', from: 'watchdog' },
  OldestQueuedAge: {
    unit: 'Seconds',
    dimensions: [],
    what: 'how long the longest-queued job has waited for a browser',
    from: 'watchdog',
  },
  OldestWaitAge: {
    unit: 'Seconds',
    dimensions: ['Kind'],
    what: 'how long the oldest open human wait of each kind has been open',
    from: 'watchdog',
  },
  BrowsersInUse: {
    unit: 'Count',
    dimensions: [],
    what: 'browser leases held, all tenants',
    from: 'watchdog',
  },
  BrowserCap: {
    unit: 'Count',
    dimensions: [],
    what: 'sum of the plan caps of tenants holding or waiting for a browser',
    from: 'watchdog',
  },
  BrowserCapUtilization: {
    unit: 'Percent',
    dimensions: [],
    what: 'the fullest tenant: leases held / plan cap',
    from: 'watchdog',
  },
} as const satisfies Record<string, MetricSpec>;

export type MetricName = keyof typeof METRICS;

/** The dimensions a metric takes, each a string (checked against its list when published). */
export type DimensionsOf<N extends MetricName> = {
  [D in (typeof METRICS)[N]['dimensions'][number]]: string;
};

const NAME = /^[A-Za-z0-9@._-]{1,64}$/;

/** The value published for `value` of dimension `name`: itself when allowed, else `other`. */
export function boundedValue(name: DimensionName, value: unknown): string {
  const spec = DIMENSIONS[name];
  if (typeof value !== 'string') return OTHER;
  if (spec.open) return NAME.test(value) ? value : OTHER;
  return (spec.values as readonly string[]).includes(value) ? value : OTHER;
}

/**
 * The CloudWatch dimensions of a metric as the code publishes it: Powertools' `service` and
 * the metric's own. The CDK dashboard and alarms build their metrics with this.
 *
 * @example
 * metricDimensions('JobsFailed', { Playbook: 'checkout@1', Reason: 'queue-timeout' });
 * // { service: 'belay', Playbook: 'checkout@1', Reason: 'queue-timeout' }
 */
export function metricDimensions<N extends MetricName>(
  name: N,
  dimensions: DimensionsOf<N>,
): Record<string, string> {
  return { service: METRICS_SERVICE, ...boundedDimensions(name, dimensions) };
}

/**
 * A metric's own dimensions as published: only those it declares, each value bounded
 * ({@link boundedValue}). The recorder groups values by these; Powertools adds `service`.
 */
export function boundedDimensions<N extends MetricName>(
  name: N,
  dimensions: DimensionsOf<N>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const d of METRICS[name].dimensions as readonly DimensionName[]) {
    out[d] = boundedValue(d, (dimensions as Record<string, unknown>)[d]);
  }
  return out;
}
