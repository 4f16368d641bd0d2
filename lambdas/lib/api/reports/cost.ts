import { type AgentCounters, agentCountersByStep, sumAgentCounters } from '../../agent/counters.ts';
import { type CostComponent, priceCost, RATES_AS_OF } from '../../cost/rates.ts';
import { type Cost, type Job, type JobStatus, type LedgerEntry, ZERO_COST } from '../../ledger/types.ts';
import { type ModelUsage, modelUsageOf } from './models.ts';
import { sessionSpans } from './sessions.ts';

/** A job and its ledger, as the report reads them. */
export interface JobRecord {
  job: Job;
  entries: readonly LedgerEntry[];
}

/** Browser time, split by what it was spent on. */
export interface BrowserTime {
  /** Every second a session was open (what a browser provider bills). */
  sessionSeconds: number;
  /** Spent in steps (the `browserSeconds` recorded by the steps themselves). */
  activeSeconds: number;
  /** Session time not spent in steps: human waits that kept the browser, queues, coordination. */
  idleSeconds: number;
}

/**
 * What a tenant's jobs cost over a period, and what that buys: verified completions.
 * Every figure is a sum over the jobs' ledger entries (each entry carries the cost it
 * caused), priced with the dated rates of `cost/rates.ts`.
 */
export interface CostReport {
  tenantId: string;
  /** Jobs submitted from `from` (inclusive) to `to` (exclusive), ISO times. */
  from: string;
  to: string;
  ratesAsOf: string;
  jobs: { total: number; byStatus: Partial<Record<JobStatus, number>> };
  /** SUCCEEDED jobs whose finish step verified the outcome in the target applications (`succeeded` entry). */
  verifiedCompletions: number;
  /**
   * Usage by component (counts: seconds, invocations, ms, transitions, writes, bytes, tokens,
   * people): the sum of the ledger entries' costs, except browser seconds, which are the
   * sessions' whole open time (steps' time + idle time), as a browser provider bills it.
   */
  usage: Cost;
  /** Dollars by component, and the total. */
  cost: Record<CostComponent, number> & { total: number };
  /** Total dollars / verified completions; null when there is none. */
  costPerVerifiedCompletion: number | null;
  /** Step failures retried (`step-failed` entries: each spends one unit of a job's retry budget). */
  retries: number;
  /** Times a person was asked to act (approvals, one-time codes, reviews). */
  humanInterventions: number;
  browser: BrowserTime;
  /** Agent decisions, tokens and model dollars by model spec (`local`, `bedrock:<id>`, ...). */
  models: Record<string, ModelUsage>;
  /**
   * Agent steps: model calls, actions the action cache served (in verified records only),
   * heals, cached actions of failed attempts (misses), tokens and model dollars; and how many
   * agent steps verified from the cache (`hit`, `healed`) or with a model (`miss`).
   */
  agent: AgentCounters & { steps: { hit: number; healed: number; miss: number } };
}

const round = (n: number, digits: number): number => Number(n.toFixed(digits));

/** Adds `b` into `a`, component by component. */
function addCost(a: Cost, b: Partial<Cost> | undefined): void {
  for (const key of Object.keys(ZERO_COST) as (keyof Cost)[]) {
    const v = b?.[key];
    if (typeof v === 'number' && Number.isFinite(v)) a[key] += v;
  }
}

/** Did the job's finish verify its outcome? Only a SUCCEEDED job with its `succeeded` entry counts. */
export function isVerifiedCompletion(record: JobRecord): boolean {
  return record.job.status === 'SUCCEEDED' && record.entries.some((e) => e.type === 'succeeded');
}

/**
 * Builds the cost report of `jobs` (a pure function: the route reads the jobs, this adds
 * them up). Idle browser time is session time not spent in steps: each session's open time
 * (from the ledger, see `sessionSpans`) minus the browser seconds its steps recorded.
 *
 * @example
 * const report = buildCostReport({ tenantId: 'acme', from, to, jobs: [{ job, entries }] });
 * report.costPerVerifiedCompletion; // dollars per job that verifiably did what it was asked
 */
export function buildCostReport(input: {
  tenantId: string;
  from: string;
  to: string;
  jobs: readonly JobRecord[];
  /** When the report is made: sessions still open count up to now. */
  now: Date;
}): CostReport {
  const usage: Cost = { ...ZERO_COST };
  const byStatus: Partial<Record<JobStatus, number>> = {};
  let verified = 0;
  let retries = 0;
  let idle = 0;
  const models: Record<string, ModelUsage> = {};
  const agent = { ...sumAgentCounters([]), steps: { hit: 0, healed: 0, miss: 0 } };
  for (const record of input.jobs) {
    modelUsageOf(record.entries, models);
    const steps = Object.values(agentCountersByStep(record.entries));
    sumAgentCounters(steps, agent);
    for (const s of steps) if (s.cache !== 'pending') agent.steps[s.cache] += 1;
    byStatus[record.job.status] = (byStatus[record.job.status] ?? 0) + 1;
    if (isVerifiedCompletion(record)) verified += 1;
    for (const entry of record.entries) {
      addCost(usage, entry.cost);
      if (entry.type === 'step-failed') retries += 1;
    }
    for (const span of sessionSpans(record.job, record.entries, input.now)) idle += span.idleSeconds;
  }
  const active = usage.browserSeconds;
  usage.browserSeconds = active + idle;
  const priced = priceCost(usage);
  const cost = Object.fromEntries(
    Object.entries(priced).map(([k, v]) => [k, round(v, 12)]),
  ) as CostReport['cost'];
  return {
    tenantId: input.tenantId,
    from: input.from,
    to: input.to,
    ratesAsOf: RATES_AS_OF,
    jobs: { total: input.jobs.length, byStatus },
    verifiedCompletions: verified,
    usage: Object.fromEntries(Object.entries(usage).map(([k, v]) => [k, round(v, 3)])) as unknown as Cost,
    cost,
    costPerVerifiedCompletion: verified > 0 ? round(priced.total / verified, 12) : null,
    retries,
    humanInterventions: usage.humanInterventions,
    browser: {
      sessionSeconds: round(active + idle, 3),
      activeSeconds: round(active, 3),
      idleSeconds: round(idle, 3),
    },
    models,
    agent,
  };
}
