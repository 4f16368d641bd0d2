import { releaseJobResources } from '../lib/engine/cleanup.ts';
import type { ExecutionControl } from '../lib/engine/execution-control.ts';
import { executionName, generationOf } from '../lib/engine/executions.ts';
import type { EngineDeps } from '../lib/engine/types.ts';
import { JobNotFoundError, StaleCheckpointError } from '../lib/ledger/errors.ts';
import { TABLE_KEYS } from '../lib/ledger/schema.ts';
import { type Job, TERMINAL_STATUSES } from '../lib/ledger/types.ts';
import { withTenantScope } from '../lib/redact.ts';

/**
 * Recovery of jobs whose execution died outside the handlers (the history quota,
 * `States.DataLimitExceeded`, `States.Runtime`, RecordFailure itself failing, an operator's
 * StopExecution): nothing in the state machine can catch those, and the ledger would keep the
 * job unfinished, holding its browser lease, forever. Two ways in, one routine:
 *
 * - the EventBridge rule on the machine's "Execution Status Change" (FAILED, TIMED_OUT,
 *   ABORTED) hands over the dead execution (`recoverJob`);
 * - a scheduled sweep finds unfinished jobs whose execution is not running (an event lost, a
 *   start that never happened) in the index of unfinished jobs (`sweep`).
 *
 * For a job the ledger still holds unfinished and whose latest execution is the dead one, the
 * routine ends its sessions and releases its lease, then starts the next generation of
 * execution, which resumes at the checkpoint as every execution does (a `recovered` entry
 * records it first), at most `maxRecoveries` times; past that, or for a job older than
 * `maxJobDays`, it fails the job with the cause (`execution-lost`).
 */

export interface RecoverySettings {
  /** New executions started for one job before it is failed instead (`BELAY_MAX_RECOVERIES`). */
  maxRecoveries: number;
  /** The sweep leaves a job alone that changed this recently (its execution may be just starting). */
  graceSeconds: number;
  /** The sweep fails a job older than this instead of resuming it. */
  maxJobDays: number;
  /** Jobs the sweep recovers at most in one invocation (the rest wait for the next). */
  maxPerSweep: number;
}

export const DEFAULT_RECOVERY_SETTINGS: RecoverySettings = {
  maxRecoveries: 3,
  graceSeconds: 180,
  maxJobDays: 365,
  maxPerSweep: 200,
};

export interface RecoverDeps {
  engine: EngineDeps;
  executions: ExecutionControl;
  settings: RecoverySettings;
}

/** An execution that is no longer running, and whose job it was. */
export interface DeadExecution {
  tenantId: string;
  jobId: string;
  /** Undefined when the job was never started (no execution at all). */
  executionName?: string;
  /** FAILED, TIMED_OUT, ABORTED, or MISSING (no such execution). */
  status: string;
  error?: string;
  cause?: string;
}

export type RecoveryOutcome =
  | { action: 'none'; reason: 'job-gone' | 'finished' | 'superseded' | 'running' }
  | { action: 'restarted'; executionName: string; recovery: number }
  | { action: 'failed'; reason: string };

/** The reason a job is failed with when its executions keep dying (or it outlived the ledger's retention). */
export const EXECUTION_LOST = 'execution-lost';

/** The execution that coordinates the job now: the one Start recorded, else the first one the API started. */
export function ownerOf(job: Job): string {
  return job.executionName ?? executionName(job, 0);
}

function describeDeath(dead: DeadExecution): string {
  const what = [dead.error, dead.cause].filter(Boolean).join(': ');
  return `execution ${dead.executionName ?? '(none)'} ${dead.status}${what ? ` (${what})` : ''}`.slice(
    0,
    900,
  );
}

/**
 * Recovers one job whose execution died (see the module's comment). Idempotent: the event and
 * the sweep may both hand over the same death, and a retried invocation repeats nothing that
 * took effect (the `recovered` entry is written under the job's version, the next execution's
 * name is taken once).
 */
export function recoverJob(deps: RecoverDeps, dead: DeadExecution): Promise<RecoveryOutcome> {
  // What it writes is the job's tenant's text: redacted with that tenant's secrets.
  return withTenantScope(dead.tenantId, () => recoverInScope(deps, dead));
}

async function recoverInScope(deps: RecoverDeps, dead: DeadExecution): Promise<RecoveryOutcome> {
  const { engine, executions, settings } = deps;
  let read: Awaited<ReturnType<EngineDeps['ledger']['readJob']>>;
  try {
    read = await engine.ledger.readJob(dead.tenantId, dead.jobId);
  } catch (err) {
    if (err instanceof JobNotFoundError) return { action: 'none', reason: 'job-gone' };
    throw err;
  }
  const { job, entries } = read;
  if (TERMINAL_STATUSES.includes(job.status)) {
    // Its end was recorded; whatever died with the execution (a session, a lease) goes now.
    await releaseJobResources(engine, job);
    return { action: 'none', reason: 'finished' };
  }
  const owner = ownerOf(job);
  if (dead.executionName !== undefined && dead.executionName !== owner) {
    return { action: 'none', reason: 'superseded' };
  }
  const recoveries = entries.filter((e) => e.type === 'recovered').length;
  const ageDays = (engine.clock().getTime() - Date.parse(job.createdAt)) / 86_400_000;
  if (recoveries >= settings.maxRecoveries || ageDays > settings.maxJobDays) {
    const message =
      ageDays > settings.maxJobDays
        ? `the job is older than ${settings.maxJobDays} days; ${describeDeath(dead)}`
        : `${describeDeath(dead)}, after ${recoveries} recoveries`;
    let failed: Job;
    try {
      // Conditioned on the version this decision was taken on: of two recoveries of one death
      // (the event twice, the event and the sweep), one writes and releases, the other nothing.
      failed = await engine.ledger.transition(job.tenantId, job.jobId, 'FAILED', {
        expectedVersion: job.version,
        failure: { reason: EXECUTION_LOST, message },
        entry: {
          type: 'failed',
          detail: { reason: EXECUTION_LOST, message, execution: owner, status: dead.status, recoveries },
          cost: { lambdaInvocations: 1, dynamoWrites: 2 },
        },
      });
    } catch (err) {
      if (err instanceof StaleCheckpointError) return { action: 'none', reason: 'superseded' };
      throw err;
    }
    await releaseJobResources(engine, failed);
    engine.log.error('job failed: its execution died and was not recovered', {
      tenantId: job.tenantId,
      jobId: job.jobId,
      execution: owner,
      status: dead.status,
      recoveries,
    });
    return { action: 'failed', reason: EXECUTION_LOST };
  }

  // The next generation nobody took yet (a start may have happened before its name was recorded).
  let generation = Math.max(0, generationOf(owner)) + 1;
  let next = executionName(job, generation);
  for (let state = await executions.describe(next); state; state = await executions.describe(next)) {
    if (state.status === 'RUNNING') return { action: 'none', reason: 'running' };
    if (generation > generationOf(owner) + 20) throw new Error(`job ${job.jobId}: no free execution name`);
    next = executionName(job, ++generation);
  }
  let recorded: Job;
  try {
    // The version read when the job was judged dead, not a fresh one: a rival that recovered it
    // meanwhile (and may have started the next generation, which opens its own session) wins,
    // and this call releases nothing of it.
    recorded = await engine.ledger.updateJob(job.tenantId, job.jobId, {
      expectedVersion: job.version,
      set: { executionName: next },
      entry: {
        type: 'recovered',
        detail: {
          execution: owner,
          status: dead.status,
          ...(dead.error ? { error: dead.error } : {}),
          ...(dead.cause ? { cause: dead.cause.slice(0, 500) } : {}),
          next,
          recovery: recoveries + 1,
          of: settings.maxRecoveries,
        },
        cost: { lambdaInvocations: 1, dynamoWrites: 2 },
      },
    });
  } catch (err) {
    // Another recovery (the event and the sweep at once) or the job moved meanwhile: theirs stands.
    if (err instanceof StaleCheckpointError) return { action: 'none', reason: 'superseded' };
    throw err;
  }
  // Only the call that won: what the dead execution held goes before the next one starts.
  await releaseJobResources(engine, recorded);
  await executions.start(next, { tenantId: job.tenantId, jobId: job.jobId });
  engine.log.warn('job recovered: its execution died; a new one resumes it at its checkpoint', {
    tenantId: job.tenantId,
    jobId: job.jobId,
    execution: owner,
    status: dead.status,
    next,
    recovery: recoveries + 1,
  });
  return { action: 'restarted', executionName: next, recovery: recoveries + 1 };
}

/** What one sweep looked at and did. */
export interface SweepResult {
  /** Unfinished jobs in the index. */
  open: number;
  /** Of those, the ones whose execution was not running. */
  candidates: number;
  outcomes: ({ tenantId: string; jobId: string } & RecoveryOutcome)[];
}

/**
 * The scheduled sweep: every unfinished job (the sparse index gsi3) whose execution is not
 * among the machine's running ones, and that has not changed for `graceSeconds`, is recovered
 * as if its execution's death had been reported.
 */
export async function sweep(deps: RecoverDeps): Promise<SweepResult> {
  const { engine, executions, settings } = deps;
  const running = await executions.runningNames();
  const result: SweepResult = { open: 0, candidates: 0, outcomes: [] };
  const candidates: { tenantId: string; jobId: string }[] = [];
  for (let shard = 0; shard < TABLE_KEYS.gsi3.shards; shard++) {
    let cursor: Record<string, unknown> | undefined;
    do {
      const page = await engine.ledger.listOpenJobs(shard, cursor ? { cursor } : {});
      cursor = page.next;
      for (const ref of page.jobs) {
        result.open++;
        if (ref.executionName && running.has(ref.executionName)) continue;
        candidates.push(ref);
      }
    } while (cursor);
  }
  result.candidates = candidates.length;
  const now = engine.clock().getTime();
  for (const ref of candidates) {
    if (result.outcomes.length >= settings.maxPerSweep) break;
    let job: Job;
    try {
      job = await engine.ledger.getJob(ref.tenantId, ref.jobId);
    } catch (err) {
      if (err instanceof JobNotFoundError) continue;
      throw err;
    }
    if (TERMINAL_STATUSES.includes(job.status)) continue;
    if (now - Date.parse(job.updatedAt) < settings.graceSeconds * 1000) continue;
    const owner = ownerOf(job);
    if (running.has(owner)) continue;
    const state = await executions.describe(owner);
    if (state?.status === 'RUNNING') continue;
    const outcome = await recoverJob(deps, {
      tenantId: job.tenantId,
      jobId: job.jobId,
      executionName: owner,
      status: state?.status ?? 'MISSING',
      ...(state?.error ? { error: state.error } : state ? {} : { error: 'ExecutionDoesNotExist' }),
      ...(state?.cause ? { cause: state.cause } : {}),
    });
    result.outcomes.push({ tenantId: job.tenantId, jobId: job.jobId, ...outcome });
  }
  return result;
}

/** The event of the rule on the machine's status changes (EventBridge's shape; only what is read). */
export interface ExecutionStatusChange {
  'detail-type': 'Step Functions Execution Status Change';
  source: 'aws.states';
  detail: {
    name: string;
    status: string;
    input?: string | null;
    error?: string | null;
    cause?: string | null;
  };
}

/** The scheduled rule's event. */
export interface ScheduledEvent {
  'detail-type': 'Scheduled Event';
  source: 'aws.events';
}

/**
 * The recovery function's core: a status change recovers its execution's job (the job from the
 * execution's input), a scheduled event sweeps.
 */
export async function handleRecoveryEvent(
  deps: RecoverDeps,
  event: ExecutionStatusChange | ScheduledEvent,
): Promise<RecoveryOutcome | SweepResult> {
  if (event['detail-type'] === 'Scheduled Event') return sweep(deps);
  const { detail } = event;
  let input: { tenantId?: unknown; jobId?: unknown } = {};
  try {
    input = JSON.parse(detail.input ?? '{}') as typeof input;
  } catch {
    // Not one of ours.
  }
  if (typeof input.tenantId !== 'string' || typeof input.jobId !== 'string') {
    deps.engine.log.warn('status change of an execution that is no job', { execution: detail.name });
    return { action: 'none', reason: 'job-gone' };
  }
  if (!['FAILED', 'TIMED_OUT', 'ABORTED'].includes(detail.status))
    return { action: 'none', reason: 'running' };
  return recoverJob(deps, {
    tenantId: input.tenantId,
    jobId: input.jobId,
    executionName: detail.name,
    status: detail.status,
    ...(detail.error ? { error: detail.error } : {}),
    ...(detail.cause ? { cause: detail.cause } : {}),
  });
}
