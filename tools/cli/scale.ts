/**
 * How far one account scales, on paper: the load a number of jobs a day puts on every quota of
 * `scale-quotas.ts`, at the peak hour, with the volume at which each one binds and which binds
 * first. A pure model (the CLI is `npm run plan -- --jobs-per-day N`); the per-job figures are
 * `checkout@1`'s, measured by the benchmark (`npm run bench`: cost and scale sections).
 *
 * The model, per quota (r = jobs per second at the peak = jobs a day / 86,400 x peak factor):
 * - rates (StartExecution, transitions, SendTaskSuccess, PutEvents, GetSecretValue, API) are
 *   r x the job's count of that call;
 * - concurrency (Lambda, browsers, open executions) is Little's law: r x the time each job
 *   holds one (a browser is held through a human wait shorter than the park-after time);
 * - a tenant's keys carry its share of r (`tenantShare`): its job-index GSI partitions take
 *   every write of its job items, its capacity STATE item every lease acquire and release, its
 *   queue partition every queued job's ask (each ask reads the jobs queued ahead of it);
 * - the queue is M/M/c at the tenant's cap (Erlang C, `plan.ts`); past the cap it grows
 *   without bound, and with it the reads of every ask.
 */
import { queueing } from './queueing.ts';
import { PARTITION_RCU, QUOTAS, type Quota, type QuotaId } from './scale-quotas.ts';

/** What one job asks of each service. */
export interface JobProfile {
  playbook: string;
  steps: number;
  /** States entered by one execution, happy path with one approval. */
  stateTransitions: number;
  /** History events of that execution. */
  historyEvents: number;
  /** Engine task invocations (Start, 14 RunSteps, AwaitHuman, Finish). */
  engineInvocations: number;
  /** Writes to the job item (each a transaction with an entry or a check; each copied to gsi1 and gsi2). */
  jobItemWrites: number;
  /** Ledger entries written. */
  entryWrites: number;
  /** Size of the job item, KB (write units are per KB). */
  jobItemKb: number;
  /** Size of an entry, KB. */
  entryKb: number;
  /** Item writes of the tenant's capacity partition (lease put + version, release + version, renewals). */
  leaseItemWrites: number;
  /** API requests per job (submit, one decision, one read). */
  apiRequests: number;
  /** Human waits (EventBridge notifications) and answers (SendTaskSuccess). */
  humanWaits: number;
  /** Browser sessions launched. */
  sessions: number;
  /** GetSecretValue calls (credentials at a sign-in, the Anchor key at a cold start). */
  secretReads: number;
  /** Lambda time beyond the steps' browser time, per invocation, s. */
  invocationOverheadSeconds: number;
}

/**
 * checkout@1 (14 steps, one approval). From the benchmark's cost section (docs/results/benchmark.md): 34 state
 * transitions and 17 Lambda invocations per job. From the load simulation
 * (`npm run bench -- --sections scale`, 200 jobs): 26 writes of the job item (1.5 KB) and 23
 * entries per job on the job's partition, 5 item writes on the tenant's capacity partition,
 * history of 140-160 events (a few queued asks included).
 */
export const CHECKOUT_PROFILE: JobProfile = {
  playbook: 'checkout@1',
  steps: 14,
  stateTransitions: 34,
  historyEvents: 150,
  engineInvocations: 17,
  jobItemWrites: 26,
  entryWrites: 23,
  jobItemKb: 1.5,
  entryKb: 1,
  leaseItemWrites: 5,
  apiRequests: 3,
  humanWaits: 1,
  sessions: 1,
  secretReads: 0.2,
  invocationOverheadSeconds: 0.3,
};

export interface ScaleInput {
  /** Volumes to evaluate, jobs a day. */
  jobsPerDay: number[];
  /** Peak-hour rate / the day's mean rate. */
  peakFactor: number;
  /** Browser time of a job's steps, minutes. */
  activeMinutes: number;
  /** How long a person takes to approve, minutes. */
  approvalMinutes: number;
  /** Waits longer than this park (the browser is given back), minutes (BELAY_PARK_AFTER_SECONDS / 60). */
  parkAfterMinutes: number;
  /** The hottest tenant's share of the jobs. */
  tenantShare: number;
  /** Concurrent browsers of the Anchor plan, and the hottest tenant's cap. */
  anchorCap: number;
  tenantCap: number;
  /** Seconds between a queued job's asks (BELAY_CAPACITY_POLL_SECONDS). */
  pollSeconds: number;
  profile: JobProfile;
}

export const DEFAULT_SCALE_INPUT: Omit<ScaleInput, 'jobsPerDay'> = {
  peakFactor: 3,
  activeMinutes: 4,
  approvalMinutes: 5,
  parkAfterMinutes: 15,
  tenantShare: 0.5,
  anchorCap: 500,
  tenantCap: 500,
  pollSeconds: 5,
  profile: CHECKOUT_PROFILE,
};

export interface ScaleRow {
  quota: Quota;
  /** Load at each volume, in the quota's unit (Infinity: grows without bound). */
  demand: number[];
  /** demand / limit at each volume. */
  utilization: number[];
  /** Jobs a day at which the load reaches the limit (null: it does not grow with volume). */
  breaksAt: number | null;
}

export interface ScaleResult {
  input: ScaleInput;
  rows: ScaleRow[];
  /** The quota that binds at the lowest volume, and that volume. */
  firstToBreak: { id: QuotaId; name: string; jobsPerDay: number } | null;
  /** At each volume, the quotas over their limit, most loaded first. */
  broken: QuotaId[][];
  assumptions: string[];
}

const DAY = 86_400;

/** The seconds a job holds a browser: its steps, and a human wait too short to park. */
export function browserSecondsPerJob(input: Omit<ScaleInput, 'jobsPerDay'>): number {
  const wait = input.approvalMinutes < input.parkAfterMinutes ? input.approvalMinutes : 0;
  return (input.activeMinutes + wait * input.profile.humanWaits) * 60;
}

/** The load on one quota at `jobsPerDay`. */
export function demandOf(id: QuotaId, jobsPerDay: number, input: Omit<ScaleInput, 'jobsPerDay'>): number {
  const p = input.profile;
  const r = (jobsPerDay / DAY) * input.peakFactor;
  const tenant = r * input.tenantShare;
  const browserSeconds = browserSecondsPerJob(input);
  const lambdaSeconds =
    input.activeMinutes * 60 + (p.engineInvocations + 2 * p.apiRequests) * p.invocationOverheadSeconds;
  const jobWcu = Math.ceil(p.jobItemKb);
  switch (id) {
    case 'sfnStartExecution':
      return r;
    case 'sfnStateTransitions':
      return r * p.stateTransitions;
    case 'sfnOpenExecutions':
      return r * (input.activeMinutes + input.approvalMinutes * p.humanWaits) * 60;
    case 'sfnHistory':
      return p.historyEvents;
    case 'sfnSendTask':
      return r * p.humanWaits;
    case 'lambdaConcurrency':
      return r * lambdaSeconds;
    case 'ddbTable':
      // Transactions cost two units per item; each job-item write is copied to both GSIs.
      return (
        r *
        (2 * (p.jobItemWrites * jobWcu + p.entryWrites * Math.ceil(p.entryKb)) +
          2 * p.jobItemWrites * jobWcu +
          2 * p.leaseItemWrites)
      );
    case 'ddbTenantGsi':
      return tenant * p.jobItemWrites * jobWcu;
    case 'ddbCapState':
      return tenant * 2;
    case 'ddbQueueReads':
      return queueReads(tenant, browserSeconds, input);
    case 'apiAccount':
    case 'apiStage':
      return r * p.apiRequests;
    case 'apiKey':
      return tenant * p.apiRequests;
    case 'eventBridge':
      return r * p.humanWaits;
    case 'secrets':
      return r * p.secretReads;
    case 'anchorConcurrency':
      return r * browserSeconds;
    case 'anchorLaunches':
      return r * 60 * p.sessions;
    case 'tenantCap':
      return tenant * browserSeconds;
  }
}

/**
 * RCU per second on the tenant's queue partition: queued jobs (Lq, Erlang C at the tenant's cap)
 * each ask every `pollSeconds`, and each ask reads the jobs ahead of it (Lq / 2 on average,
 * eventually consistent: half a unit per 4 KB, at least half a unit). Infinity past the cap.
 */
function queueReads(
  lambdaPerSecond: number,
  serviceSeconds: number,
  input: Omit<ScaleInput, 'jobsPerDay'>,
): number {
  if (lambdaPerSecond <= 0) return 0;
  const q = queueing(lambdaPerSecond * 60, serviceSeconds / 60, input.tenantCap);
  if (!q.stable) return Number.POSITIVE_INFINITY;
  const lq = q.meanWaitMinutes === null ? 0 : lambdaPerSecond * 60 * q.meanWaitMinutes;
  const perAsk = Math.max(0.5, ((lq / 2) * input.profile.jobItemKb * 0.5) / 4);
  return (lq / input.pollSeconds) * perAsk;
}

/** Limits that depend on the plan chosen. */
function limitOf(quota: Quota, input: Omit<ScaleInput, 'jobsPerDay'>): number {
  if (quota.id === 'anchorConcurrency' || quota.id === 'anchorLaunches') return input.anchorCap;
  if (quota.id === 'tenantCap') return input.tenantCap;
  return quota.limit;
}

/** The lowest volume (jobs a day, to 1%) at which `id` reaches its limit; null if it never does. */
function breakingVolume(quota: Quota, limit: number, input: Omit<ScaleInput, 'jobsPerDay'>): number | null {
  if (quota.perJob) return null;
  if (quota.id !== 'ddbQueueReads') {
    const at = demandOf(quota.id, DAY, input);
    return at > 0 ? (DAY * limit) / at : null;
  }
  // Not linear: search the volume at which the reads reach the partition's limit.
  let lo = 0;
  let hi = 1e9;
  for (let i = 0; i < 200 && hi - lo > lo * 0.01 + 1; i++) {
    const mid = (lo + hi) / 2;
    if (demandOf(quota.id, mid, input) >= PARTITION_RCU) hi = mid;
    else lo = mid;
  }
  return hi;
}

/**
 * The scale table for `input`.
 *
 * @example
 * scalePlan({ ...DEFAULT_SCALE_INPUT, jobsPerDay: [1000, 10000, 100000] }).firstToBreak;
 * // { id: 'anchorConcurrency', ... }
 */
export function scalePlan(input: ScaleInput): ScaleResult {
  for (const v of input.jobsPerDay) if (!(v > 0)) throw new RangeError('jobs per day must be > 0');
  if (!(input.peakFactor >= 1)) throw new RangeError('peak factor must be >= 1');
  if (!(input.tenantShare > 0 && input.tenantShare <= 1))
    throw new RangeError('tenant share must be in (0, 1]');
  const rows: ScaleRow[] = QUOTAS.map((quota) => {
    const limit = limitOf(quota, input);
    const demand = input.jobsPerDay.map((v) => demandOf(quota.id, v, input));
    return {
      quota: { ...quota, limit },
      demand,
      utilization: demand.map((d) => d / limit),
      breaksAt: breakingVolume(quota, limit, input),
    };
  });
  const breaking = rows
    .filter((r) => r.breaksAt !== null)
    .sort((a, b) => (a.breaksAt ?? 0) - (b.breaksAt ?? 0));
  const first = breaking[0];
  return {
    input,
    rows,
    firstToBreak: first
      ? { id: first.quota.id, name: first.quota.name, jobsPerDay: Math.round(first.breaksAt ?? 0) }
      : null,
    broken: input.jobsPerDay.map((_, i) =>
      rows
        .filter((r) => (r.utilization[i] ?? 0) >= 1)
        .sort((a, b) => (b.utilization[i] ?? 0) - (a.utilization[i] ?? 0))
        .map((r) => r.quota.id),
    ),
    assumptions: [
      `peak hour = ${input.peakFactor} x the day's mean rate; all quotas are read at the peak`,
      `a job: ${input.profile.playbook}, ${input.activeMinutes} min of browser time in its steps, one approval answered in ${input.approvalMinutes} min (${input.approvalMinutes < input.parkAfterMinutes ? 'the browser is held: shorter than the park-after time' : 'parked: the browser is given back'})`,
      `the hottest tenant has ${Math.round(input.tenantShare * 100)}% of the jobs, one API key and a cap of ${input.tenantCap} browsers; the Anchor plan allows ${input.anchorCap}`,
      'per job: ' +
        `${input.profile.stateTransitions} state transitions, ${input.profile.engineInvocations} engine invocations (+ ${input.profile.apiRequests} API requests, each with its authorizer), ` +
        `${input.profile.jobItemWrites} job-item writes of ${input.profile.jobItemKb} KB and ${input.profile.entryWrites} entries of ${input.profile.entryKb} KB, in transactions (2 units per item), ` +
        `${input.profile.historyEvents} history events`,
      'estimates are marked (~): the capacity STATE item assumes 8 ms per DynamoDB round trip; Anchor publishes no launch rate',
    ],
  };
}

const fmt = (n: number): string => {
  if (!Number.isFinite(n)) return 'unbounded';
  if (n < 0.001) return '0';
  if (n >= 100) return Math.round(n).toLocaleString('en-US');
  if (n >= 10) return n.toFixed(1);
  return n.toPrecision(2);
};
const pct = (u: number): string =>
  Number.isFinite(u)
    ? `${u >= 10 ? Math.round(u * 100).toLocaleString('en-US') : (u * 100).toFixed(u < 0.01 ? 2 : 0)}%`
    : '∞';

/** The table as Markdown (the scale table of docs/operate/scale.md is this output). */
export function formatScaleTable(result: ScaleResult): string[] {
  const volumes = result.input.jobsPerDay.map((v) => `${v.toLocaleString('en-US')}/day`);
  const lines = [
    `| quota | default (source) | ${volumes.join(' | ')} | binds at (jobs/day) | what raises it |`,
    `|---|---|${volumes.map(() => '---|').join('')}---|---|`,
  ];
  for (const row of result.rows) {
    const q = row.quota;
    const cells = row.demand.map((d, i) => {
      const u = row.utilization[i] ?? 0;
      return `${fmt(d)} (${pct(u)})${u >= 1 ? ' **over**' : ''}`;
    });
    const binds =
      row.breaksAt === null ? 'per job, not volume' : Math.round(row.breaksAt).toLocaleString('en-US');
    lines.push(
      `| ${q.estimate ? '~' : ''}${q.name} | ${q.limit.toLocaleString('en-US')} ${q.unit} (${q.source}) | ${cells.join(' | ')} | ${binds} | ${q.raise} |`,
    );
  }
  lines.push('');
  const first = result.firstToBreak;
  if (first)
    lines.push(
      `Binds first: ${first.name}, at about ${first.jobsPerDay.toLocaleString('en-US')} jobs a day.`,
    );
  result.input.jobsPerDay.forEach((v, i) => {
    const over = result.broken[i] ?? [];
    lines.push(
      `At ${v.toLocaleString('en-US')} jobs a day: ${over.length === 0 ? 'every quota holds' : `over the limit: ${over.map((id) => result.rows.find((r) => r.quota.id === id)?.quota.name).join('; ')}`}.`,
    );
  });
  lines.push('', ...result.assumptions.map((a) => `Assumption: ${a}.`));
  return lines;
}
