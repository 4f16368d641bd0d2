/**
 * The summary of a chaos run (what `--json` prints), how it judges each job and each write, and
 * its text form.
 */

import type { FaultKind } from './faults.ts';
import type { JobOutcome, LayoutCheck, WriteCount } from './job-driver.ts';
import { type Asks, reviewsAllowed } from './ledger.ts';
import type { ReExecution } from './verify.ts';

export interface ChaosSummary {
  seed: number;
  runs: number;
  /** The playbooks the jobs took in turn. */
  playbooks: string[];
  concurrency: number;
  dataDir: string;
  wallSeconds: number;
  /** Jobs that ran (submitted). */
  jobs: number;
  faultsInjected: { total: number; byKind: Record<FaultKind, number> };
  faultsPlanned: { total: number; byKind: Record<FaultKind, number> };
  /** Faults of the usual share that no job of the run could take (no step or site where they land). */
  faultsUnplanned: Partial<Record<FaultKind, number>>;
  jobsSucceeded: number;
  /** Jobs per way they ended: SUCCEEDED, FAILED, CANCELLED, STUCK. */
  jobsByStatus: Record<string, number>;
  /**
   * Write steps counted from the sites' own records (`site`), and by what each write step's probe
   * found by the job's key (`probe`: the application lists no committed writes).
   */
  writesCountedBy: { site: number; probe: number };
  /**
   * Committed writes per write step of each job (null: it could not be counted), and the write
   * steps done without acting because their value was already set (counted apart).
   */
  sideEffectsPerJob: {
    jobId: string;
    playbook: string;
    writes: Record<string, number | null>;
    alreadySatisfied: string[];
  }[];
  /** Writes committed more than once (sum of the extra commits). */
  duplicateSideEffects: number;
  /** Write steps of jobs with no committed write (not counting those already satisfied). */
  missingSideEffects: number;
  /** Write steps done without acting, their value already set (no write of the job expected). */
  alreadySatisfiedWrites: number;
  /** Write steps whose writes could not be counted, and why. */
  uncountedWrites: { jobId: string; step: string; why: string }[];
  /** The people each job asked, per step (approvals, reviews, one-time codes), and its retry budget. */
  asksPerJob: { jobId: string; retryBudget: number; steps: Record<string, Asks> }[];
  /** Steps a job asked a person to review more often than its retry budget allows. */
  asksOverBudget: { jobId: string; step: string; reviews: number; allowed: number }[];
  completedStepsExecutedAgain: number;
  reExecutions: (ReExecution & { jobId: string })[];
  jobsStuck: number;
  stuck: { jobId: string; detail: string }[];
  jobsFailed: { jobId: string; status: string; detail: string }[];
  /** Jobs that ended FAILED although a write of theirs had been verified at its step (a caller would resubmit). */
  failedWithVerifiedWrites: number;
  /** Whether the demo sites de-duplicated writes by key during the run. */
  dedupe: boolean;
  recordProblems: { jobId: string; problems: string[] }[];
  layoutChecks: (LayoutCheck & { jobId: string })[];
  people: { approvals: number; reviews: number; mfaCodes: number };
  stackRestarts: { reason: string; downSeconds: number }[];
  /** Jobs of the plan that never started (the run's time ran out). */
  notStarted: string[];
  leftoverProcesses: { pid: number; cmdline: string }[];
  /**
   * Every job succeeded with one side effect per write step (none for one already satisfied),
   * every write counted, no completed step ran again, no job asked past its retry budget.
   */
  ok: boolean;
}

/**
 * What one write step's count says: `one` committed write; `duplicate`, more; `missing`, none;
 * `satisfied`, done without acting (the value was already set: none expected, one from an
 * earlier attempt of the job is no duplicate); `uncounted`, it could not be told.
 */
export function writeVerdict(w: WriteCount): 'one' | 'duplicate' | 'missing' | 'satisfied' | 'uncounted' {
  if (w.count !== null && w.count > 1) return 'duplicate';
  if (w.alreadySatisfied) return 'satisfied';
  if (w.count === null) return 'uncounted';
  return w.count === 1 ? 'one' : 'missing';
}

/** The steps the job asked a person to review more often than its retry budget allows. */
export function overBudget(o: Pick<JobOutcome, 'asks' | 'retryBudget'>): { step: string; reviews: number }[] {
  return Object.entries(o.asks)
    .filter(([, a]) => a.review > reviewsAllowed(o.retryBudget))
    .map(([step, a]) => ({ step, reviews: a.review }));
}

/** The job ended as the run needs: succeeded, each write once (or already satisfied), nothing run again, asked within budget. */
export function jobOk(o: JobOutcome): boolean {
  return (
    o.status === 'SUCCEEDED' &&
    o.writes.every((w) => ['one', 'satisfied'].includes(writeVerdict(w))) &&
    o.reExecuted.length === 0 &&
    o.recordProblems.length === 0 &&
    o.layoutChecks.every((c) => c.ok) &&
    overBudget(o).length === 0
  );
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** One step's asks in words (`1 approval, 2 reviews`). */
function asksText(a: Asks): string {
  return [
    a.approval ? plural(a.approval, 'approval') : '',
    a.review ? plural(a.review, 'review') : '',
    a.mfa ? plural(a.mfa, 'one-time code') : '',
  ]
    .filter(Boolean)
    .join(', ');
}

/** A write step's count in a progress line: `place-order=1`, `c3-email=satisfied(0)`, `save-note=?`. */
function writeText(w: WriteCount): string {
  const n = w.count === null ? '?' : String(w.count);
  return `${w.step}=${w.alreadySatisfied ? `satisfied(${n})` : n}${w.countedBy === 'probe' ? ' (probe)' : ''}`;
}

/** The progress line of a finished job. */
export function jobLine(o: JobOutcome, n: number, of: number): string {
  const faults = o.faults.length
    ? o.faults.map((f) => `${f.fault}${f.injected ? '' : ' (not reached)'}`).join(', ')
    : 'none';
  const good = jobOk(o);
  const head = `${good ? 'ok  ' : 'FAIL'} ${String(n).padStart(2)}/${of} ${o.jobId} ${o.playbook} (${o.resources.join(' ')})`;
  const asked = Object.entries(o.asks).map(([step, a]) => `${step} ${asksText(a)}`);
  const tail = [
    `${o.status} in ${o.seconds.toFixed(1)}s`,
    `faults: ${faults}`,
    `side effects: ${o.writes.map(writeText).join(' ') || 'none'}`,
    `completed steps run again: ${o.reExecuted.length}`,
    `asks: ${asked.join('; ') || 'none'}`,
  ];
  for (const u of o.writes.filter((w) => writeVerdict(w) === 'uncounted'))
    tail.push(`${u.step} not counted: ${u.how ?? 'no count'}`);
  for (const b of overBudget(o))
    tail.push(`asked to review ${b.step} ${b.reviews} times (retry budget ${o.retryBudget})`);
  if (o.layoutChecks.length)
    tail.push(
      `layout: ${o.layoutChecks.map((c) => `${c.postsAfterSwitch.length} POST after the switch, review at ${c.reviewStep ?? 'none'}`).join('; ')}`,
    );
  if (o.recordProblems.length) tail.push(`records: ${o.recordProblems.join('; ')}`);
  if (o.detail && !good) tail.push(o.detail);
  return `${head}: ${tail.join(' | ')}`;
}

/** What a run's jobs add up to (the fields of the summary the jobs decide). */
export function summarizeJobs(
  outcomes: readonly JobOutcome[],
): Pick<
  ChaosSummary,
  | 'jobs'
  | 'jobsSucceeded'
  | 'jobsByStatus'
  | 'writesCountedBy'
  | 'sideEffectsPerJob'
  | 'duplicateSideEffects'
  | 'missingSideEffects'
  | 'alreadySatisfiedWrites'
  | 'uncountedWrites'
  | 'asksPerJob'
  | 'asksOverBudget'
  | 'completedStepsExecutedAgain'
  | 'reExecutions'
  | 'jobsStuck'
  | 'stuck'
  | 'jobsFailed'
  | 'failedWithVerifiedWrites'
  | 'recordProblems'
  | 'layoutChecks'
> {
  const writes = outcomes.flatMap((o) => o.writes.map((w) => ({ jobId: o.jobId, ...w, v: writeVerdict(w) })));
  const reExecutions = outcomes.flatMap((o) => o.reExecuted.map((r) => ({ jobId: o.jobId, ...r })));
  const byStatus: Record<string, number> = {};
  for (const o of outcomes) byStatus[o.status] = (byStatus[o.status] ?? 0) + 1;
  return {
    jobs: outcomes.length,
    jobsSucceeded: outcomes.filter((o) => o.status === 'SUCCEEDED').length,
    jobsByStatus: byStatus,
    writesCountedBy: {
      site: writes.filter((w) => w.countedBy === 'site').length,
      probe: writes.filter((w) => w.countedBy === 'probe').length,
    },
    sideEffectsPerJob: outcomes.map((o) => ({
      jobId: o.jobId,
      playbook: o.playbook,
      writes: Object.fromEntries(o.writes.map((w) => [w.step, w.count])),
      alreadySatisfied: o.writes.filter((w) => w.alreadySatisfied).map((w) => w.step),
    })),
    duplicateSideEffects: writes.reduce((a, w) => a + (w.v === 'duplicate' ? (w.count as number) - 1 : 0), 0),
    missingSideEffects: writes.filter((w) => w.v === 'missing').length,
    alreadySatisfiedWrites: writes.filter((w) => w.v === 'satisfied').length,
    uncountedWrites: writes
      .filter((w) => w.v === 'uncounted')
      .map((w) => ({ jobId: w.jobId, step: w.step, why: w.how ?? 'no count' })),
    asksPerJob: outcomes.map((o) => ({ jobId: o.jobId, retryBudget: o.retryBudget, steps: o.asks })),
    asksOverBudget: outcomes.flatMap((o) =>
      overBudget(o).map((b) => ({ jobId: o.jobId, ...b, allowed: reviewsAllowed(o.retryBudget) })),
    ),
    completedStepsExecutedAgain: reExecutions.length,
    reExecutions,
    jobsStuck: outcomes.filter((o) => o.stuck).length,
    stuck: outcomes.filter((o) => o.stuck).map((o) => ({ jobId: o.jobId, detail: o.detail ?? '' })),
    jobsFailed: outcomes
      .filter((o) => !o.stuck && o.status !== 'SUCCEEDED')
      .map((o) => ({ jobId: o.jobId, status: o.status, detail: o.detail ?? '' })),
    failedWithVerifiedWrites: outcomes.filter((o) => o.status === 'FAILED' && o.verifiedWrites > 0).length,
    recordProblems: outcomes
      .filter((o) => o.recordProblems.length)
      .map((o) => ({ jobId: o.jobId, problems: o.recordProblems })),
    layoutChecks: outcomes.flatMap((o) => o.layoutChecks.map((c) => ({ jobId: o.jobId, ...c }))),
  };
}

/** Whether the jobs' part of a summary passes (the run adds: every job started, nothing left running). */
export function jobsPass(s: ReturnType<typeof summarizeJobs>, planned: number): boolean {
  return (
    s.jobs === planned &&
    s.jobsSucceeded === s.jobs &&
    s.duplicateSideEffects === 0 &&
    s.missingSideEffects === 0 &&
    s.uncountedWrites.length === 0 &&
    s.asksOverBudget.length === 0 &&
    s.completedStepsExecutedAgain === 0 &&
    s.failedWithVerifiedWrites === 0 &&
    s.recordProblems.length === 0 &&
    s.layoutChecks.every((c) => c.ok)
  );
}

/** How the run counted its writes, in words. */
function countedText(s: ChaosSummary): string {
  const { site, probe } = s.writesCountedBy;
  const bySite = "the sites' own records (GET /__admin/writes)";
  const byProbe =
    "what each write step's probe found by the job's key (the final check, read from the ledger)";
  if (probe === 0) return `by ${bySite}`;
  if (site === 0) return `by ${byProbe}`;
  return `${site} write steps by ${bySite}, ${probe} by ${byProbe}`;
}

/** The text summary. */
export function formatSummary(s: ChaosSummary): string {
  const kinds = Object.entries(s.faultsInjected.byKind)
    .map(
      ([k, n]) =>
        `    ${k.padEnd(30)} ${String(n).padStart(3)}  (planned ${s.faultsPlanned.byKind[k as FaultKind]})`,
    )
    .join('\n');
  const perJob = s.sideEffectsPerJob
    .map(
      (j) =>
        `${j.jobId} ${Object.entries(j.writes)
          .map(([step, n]) => `${n ?? '?'}${j.alreadySatisfied.includes(step) ? 's' : ''}`)
          .join('+')}`,
    )
    .join(', ');
  const statuses = Object.entries(s.jobsByStatus)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const lines = [
    '',
    `Chaos summary (seed ${s.seed}, ${s.runs} runs, concurrency ${s.concurrency}, ${(s.wallSeconds / 60).toFixed(1)} min)`,
    `  playbooks                     ${s.playbooks.join(', ')}`,
    `  jobs                          ${s.jobs}${statuses ? ` (${statuses})` : ''}${s.notStarted.length ? ` (${s.notStarted.length} never started)` : ''}`,
    `  faults injected               ${s.faultsInjected.total} (planned ${s.faultsPlanned.total})`,
    kinds,
    ...(Object.keys(s.faultsUnplanned).length
      ? [
          `    not planned (nowhere to land) ${Object.entries(s.faultsUnplanned)
            .map(([k, n]) => `${k} ${n}`)
            .join(', ')}`,
        ]
      : []),
    `  sites                         ${s.dedupe ? 'de-duplicate by key' : 'de-duplicate nothing: committed requests counted; busy pages'}`,
    `  writes counted                ${countedText(s)}`,
    `  jobs succeeded                ${s.jobsSucceeded}/${s.jobs}`,
    `  side effects per write step   ${s.duplicateSideEffects} duplicated, ${s.missingSideEffects} missing, ${s.alreadySatisfiedWrites} already satisfied, ${s.uncountedWrites.length} not counted (per job: ${perJob})`,
    `  FAILED with a verified write  ${s.failedWithVerifiedWrites}`,
    `  completed steps run again     ${s.completedStepsExecutedAgain}`,
    `  jobs stuck                    ${s.jobsStuck}`,
    `  asked past the retry budget   ${s.asksOverBudget.length}`,
    `  layout checks                 ${s.layoutChecks.filter((c) => c.ok).length}/${s.layoutChecks.length} with no POST after the switch`,
    `  people                        ${s.people.approvals} approvals, ${s.people.reviews} reviews, ${s.people.mfaCodes} one-time codes`,
    `  stack restarts                ${s.stackRestarts.length}${s.stackRestarts.length ? ` (down ${s.stackRestarts.map((r) => `${r.downSeconds.toFixed(1)}s`).join(', ')})` : ''}`,
    `  processes left                ${s.leftoverProcesses.length}`,
    '  asks per job (per step: approvals, reviews, one-time codes)',
  ];
  for (const j of s.asksPerJob) {
    const steps = Object.entries(j.steps).map(([step, a]) => `${step} ${asksText(a)}`);
    lines.push(`    ${j.jobId.padEnd(22)} ${steps.join('; ') || 'none'}`);
  }
  for (const j of s.jobsFailed) lines.push(`  FAILED ${j.jobId}: ${j.status} ${j.detail}`);
  for (const j of s.stuck) lines.push(`  STUCK ${j.jobId}: ${j.detail}`);
  for (const r of s.reExecutions)
    lines.push(`  RE-RUN ${r.jobId} ${r.step}: completed ${r.completedAt}, began again ${r.startedAgainAt}`);
  for (const u of s.uncountedWrites) lines.push(`  NOT COUNTED ${u.jobId} ${u.step}: ${u.why}`);
  for (const b of s.asksOverBudget)
    lines.push(`  ASKED ${b.jobId} ${b.step}: ${b.reviews} reviews, the retry budget allows ${b.allowed}`);
  for (const r of s.recordProblems) lines.push(`  RECORDS ${r.jobId}: ${r.problems.join('; ')}`);
  for (const c of s.layoutChecks.filter((x) => !x.ok))
    lines.push(
      `  LAYOUT ${c.jobId} ${c.site} ${c.step}: ${c.postsAfterSwitch.join(', ') || 'never waited for review'}`,
    );
  for (const p of s.leftoverProcesses) lines.push(`  LEFT ${p.pid} ${p.cmdline.slice(0, 120)}`);
  lines.push(`  result                        ${s.ok ? 'PASS' : 'FAIL'}`);
  return lines.join('\n');
}
