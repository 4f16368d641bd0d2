/**
 * The summary of a chaos run (what `--json` prints) and its text form.
 */

import type { FaultKind } from './faults.ts';
import type { JobOutcome, LayoutCheck } from './job-driver.ts';
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
  /** Committed writes per write step of each job, from the sites' own records. */
  sideEffectsPerJob: { jobId: string; playbook: string; writes: Record<string, number> }[];
  /** Writes committed more than once (sum of the extra commits). */
  duplicateSideEffects: number;
  /** Write steps of jobs with no committed write. */
  missingSideEffects: number;
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
  /** Every job succeeded with one side effect per write step and no completed step ran again. */
  ok: boolean;
}

/** The progress line of a finished job. */
export function jobLine(o: JobOutcome, n: number, of: number): string {
  const faults = o.faults.length
    ? o.faults.map((f) => `${f.fault}${f.injected ? '' : ' (not reached)'}`).join(', ')
    : 'none';
  const effects = Object.entries(o.sideEffects)
    // A key is `<jobId>:<step>:<digest of the job's incarnation>`: the step names the write.
    .map(([key, count]) => `${key.split(':').at(-2) ?? key}=${count}`)
    .join(' ');
  const good =
    o.status === 'SUCCEEDED' &&
    Object.values(o.sideEffects).every((c) => c === 1) &&
    o.reExecuted.length === 0 &&
    o.recordProblems.length === 0 &&
    o.layoutChecks.every((c) => c.ok);
  const head = `${good ? 'ok  ' : 'FAIL'} ${String(n).padStart(2)}/${of} ${o.jobId} ${o.playbook} (${o.resource})`;
  const tail = [
    `${o.status} in ${o.seconds.toFixed(1)}s`,
    `faults: ${faults}`,
    `side effects: ${effects}`,
    `completed steps run again: ${o.reExecuted.length}`,
  ];
  if (o.layoutChecks.length)
    tail.push(
      `layout: ${o.layoutChecks.map((c) => `${c.postsAfterSwitch.length} POST after the switch, review at ${c.reviewStep ?? 'none'}`).join('; ')}`,
    );
  if (o.recordProblems.length) tail.push(`records: ${o.recordProblems.join('; ')}`);
  if (o.detail && !good) tail.push(o.detail);
  return `${head}: ${tail.join(' | ')}`;
}

/** The text summary. */
export function formatSummary(s: ChaosSummary): string {
  const kinds = Object.entries(s.faultsInjected.byKind)
    .map(
      ([k, n]) =>
        `    ${k.padEnd(30)} ${String(n).padStart(3)}  (planned ${s.faultsPlanned.byKind[k as FaultKind]})`,
    )
    .join('\n');
  const perJob = s.sideEffectsPerJob.map((j) => `${j.jobId} ${Object.values(j.writes).join('+')}`).join(', ');
  const lines = [
    '',
    `Chaos summary (seed ${s.seed}, ${s.runs} runs, concurrency ${s.concurrency}, ${(s.wallSeconds / 60).toFixed(1)} min)`,
    `  jobs                          ${s.jobs}${s.notStarted.length ? ` (${s.notStarted.length} never started)` : ''}`,
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
    `  jobs succeeded                ${s.jobsSucceeded}/${s.jobs}`,
    `  side effects per write step   ${s.duplicateSideEffects} duplicated, ${s.missingSideEffects} missing (per job: ${perJob})`,
    `  FAILED with a verified write  ${s.failedWithVerifiedWrites}`,
    `  completed steps run again     ${s.completedStepsExecutedAgain}`,
    `  jobs stuck                    ${s.jobsStuck}`,
    `  layout checks                 ${s.layoutChecks.filter((c) => c.ok).length}/${s.layoutChecks.length} with no POST after the switch`,
    `  people                        ${s.people.approvals} approvals, ${s.people.reviews} reviews, ${s.people.mfaCodes} one-time codes`,
    `  stack restarts                ${s.stackRestarts.length}${s.stackRestarts.length ? ` (down ${s.stackRestarts.map((r) => `${r.downSeconds.toFixed(1)}s`).join(', ')})` : ''}`,
    `  processes left                ${s.leftoverProcesses.length}`,
  ];
  for (const j of s.jobsFailed) lines.push(`  FAILED ${j.jobId}: ${j.status} ${j.detail}`);
  for (const j of s.stuck) lines.push(`  STUCK ${j.jobId}: ${j.detail}`);
  for (const r of s.reExecutions)
    lines.push(`  RE-RUN ${r.jobId} ${r.step}: completed ${r.completedAt}, began again ${r.startedAgainAt}`);
  for (const r of s.recordProblems) lines.push(`  RECORDS ${r.jobId}: ${r.problems.join('; ')}`);
  for (const c of s.layoutChecks.filter((x) => !x.ok))
    lines.push(
      `  LAYOUT ${c.jobId} ${c.site} ${c.step}: ${c.postsAfterSwitch.join(', ') || 'never waited for review'}`,
    );
  for (const p of s.leftoverProcesses) lines.push(`  LEFT ${p.pid} ${p.cmdline.slice(0, 120)}`);
  lines.push(`  result                        ${s.ok ? 'PASS' : 'FAIL'}`);
  return lines.join('\n');
}
