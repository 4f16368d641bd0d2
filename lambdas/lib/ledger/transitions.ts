import { type LedgerEntryInput, prepareEntry } from './entries.ts';
import { expireEntries } from './entry-ttl.ts';
import { IllegalTransitionError, InvalidInputError, LedgerError, StaleCheckpointError } from './errors.ts';
import { UpdateBuilder } from './expression.ts';
import { type JobSnapshot, plain } from './items.ts';
import { observedState, storedFailure } from './job-writes.ts';
import { assertId } from './keys.ts';
import {
  applyStatus,
  assertStatus,
  assertWait,
  bumpVersion,
  isWaitingStatus,
  statusIn,
  type WaitingStatus,
} from './status.ts';
import { getLiveJob, type LedgerContext, NOOP, writeJob } from './store.ts';
import {
  JOB_STATUSES,
  type Job,
  type JobStatus,
  LEGAL_TRANSITIONS,
  type PendingWait,
  TERMINAL_STATUSES,
} from './types.ts';

/** `IllegalTransitionError` from the status the job had; a job item without one is corrupt. */
function illegal(jobId: string, from: JobStatus | undefined, to: JobStatus): Error {
  return from === undefined
    ? new LedgerError(`job ${jobId} has no valid status; cannot go to ${to}`)
    : new IllegalTransitionError(jobId, from, to);
}

export interface TransitionOptions {
  /** Refuse (`StaleCheckpointError`) unless the job is at this version. */
  expectedVersion?: number;
  /** Only from these statuses (intersected with `LEGAL_TRANSITIONS`). */
  from?: JobStatus[];
  /** Entry to write in the same transaction. */
  entry?: LedgerEntryInput;
  /** Why the job failed or was parked; stored on the job (redacted). */
  failure?: { reason: string; message: string };
  /** Required when going to a waiting status, refused otherwise. */
  wait?: PendingWait;
}

/**
 * Changes the job's status if `LEGAL_TRANSITIONS` (and `from`) allow it. Legality is part
 * of the write's condition (the status the job has at write time), so two racing
 * transitions cannot both pass. Leaving a waiting status removes the pending wait; a
 * terminal status sets `finishedAt` and the TTL.
 *
 * Same status: a transition to the status the job already has writes nothing (no entry,
 * no version bump) and returns the job, so a retried call (a re-run Lambda, a redriven
 * execution) succeeds instead of failing as illegal. With `expectedVersion` the optimistic
 * lock comes first: if the job moved past that version, the caller gets
 * `StaleCheckpointError` even though the status matches, because it cannot tell its own
 * earlier write from a rival's (two workers claiming a QUEUED job must not both win).
 * SDK-level retries of a write whose response was lost are safe either way: every job
 * write is a transaction with a `ClientRequestToken`, which DynamoDB applies once.
 */
export async function transition(
  ctx: LedgerContext,
  tenantId: string,
  jobId: string,
  to: JobStatus,
  options: TransitionOptions = {},
): Promise<Job> {
  assertId('tenantId', tenantId);
  assertId('jobId', jobId);
  assertStatus('to', to);
  for (const s of options.from ?? []) assertStatus('from', s);
  const { expectedVersion, wait } = options;
  if (isWaitingStatus(to)) {
    if (wait === undefined)
      throw new InvalidInputError('wait', `is required to go to ${to} (or use setWait)`);
    assertWait(wait, to);
  } else if (wait !== undefined) {
    throw new InvalidInputError('wait', `only a waiting status takes a wait, not ${to}`);
  }

  const decide = (s: Pick<JobSnapshot, 'status' | 'version' | 'nextStep'>): Error | typeof NOOP => {
    if (s.status === to && (expectedVersion === undefined || s.version === expectedVersion)) return NOOP;
    if (expectedVersion !== undefined && s.version !== expectedVersion) {
      return new StaleCheckpointError(jobId, undefined, expectedVersion, observedState(s));
    }
    return illegal(jobId, s.status, to);
  };
  const allowedFrom = JOB_STATUSES.filter(
    (s) => LEGAL_TRANSITIONS[s].includes(to) && (options.from === undefined || options.from.includes(s)),
  );
  if (allowedFrom.length === 0) {
    // No status may lead here: the outcome depends only on where the job is now.
    const job = await getLiveJob(ctx, tenantId, jobId, 'transition');
    const verdict = decide(job);
    if (verdict === NOOP) return job;
    throw verdict;
  }

  const now = ctx.now();
  const u = new UpdateBuilder();
  applyStatus(u, tenantId, to, now, ctx.terminalTtlDays);
  if (wait !== undefined) u.set('wait', plain(wait));
  else u.remove('wait');
  if (options.failure !== undefined) {
    u.set('failure', storedFailure(tenantId, options.failure));
  }
  bumpVersion(u, now);
  u.when(statusIn(u, allowedFrom));
  if (expectedVersion !== undefined) u.when(`${u.path('version')} = ${u.value(expectedVersion)}`);
  const entry =
    options.entry === undefined ? undefined : await prepareEntry(ctx, tenantId, jobId, options.entry);
  const { job } = await writeJob(ctx, {
    operation: 'transition',
    tenantId,
    jobId,
    update: u,
    ...(entry === undefined ? {} : { entry }),
    onConditionFailed: decide,
  });
  // A finished job's entries expire with it; a repeated transition (a retried RecordFailure or
  // Finish, a no-op on the job) finishes a stamping that was interrupted.
  if (TERMINAL_STATUSES.includes(to)) await expireEntries(ctx, job);
  return job;
}

/**
 * Parks a RUNNING job in a waiting status with its pending wait (kind, step, task token,
 * expiry) in one conditional write. From the same waiting status it re-arms the wait with
 * a new token; from anything else it is `IllegalTransitionError`.
 */
export async function setWait(
  ctx: LedgerContext,
  tenantId: string,
  jobId: string,
  wait: PendingWait,
  status: WaitingStatus,
  entryInput?: LedgerEntryInput,
): Promise<Job> {
  assertId('tenantId', tenantId);
  assertId('jobId', jobId);
  assertStatus('status', status);
  if (!isWaitingStatus(status)) throw new InvalidInputError('status', `${status} is not a waiting status`);
  assertWait(wait, status);
  const now = ctx.now();
  const u = new UpdateBuilder();
  applyStatus(u, tenantId, status, now, ctx.terminalTtlDays);
  u.set('wait', plain(wait));
  bumpVersion(u, now);
  u.when(statusIn(u, ['RUNNING', status]));
  const entry = entryInput === undefined ? undefined : await prepareEntry(ctx, tenantId, jobId, entryInput);
  const { job } = await writeJob(ctx, {
    operation: 'setWait',
    tenantId,
    jobId,
    update: u,
    ...(entry === undefined ? {} : { entry }),
    onConditionFailed: (s) => illegal(jobId, s.status, status),
  });
  return job;
}

export interface ClearWaitOptions {
  /** Clear only if the stored wait has this token (a late or forged callback clears nothing). */
  taskToken?: string;
  /** Status to leave the wait for (default RUNNING); must be legal from the waiting status. */
  to?: JobStatus;
  entry?: LedgerEntryInput;
}

const CLEAR_ATTEMPTS = 3;

/**
 * Removes the pending wait and moves the job to `to`, returning the wait it removed, or
 * `null` when there is none (or it has another token). The write is conditioned on the
 * token it read, so of two racing callers exactly one gets the wait back.
 */
export async function clearWait(
  ctx: LedgerContext,
  tenantId: string,
  jobId: string,
  options: ClearWaitOptions = {},
): Promise<PendingWait | null> {
  assertId('tenantId', tenantId);
  assertId('jobId', jobId);
  const to = options.to ?? 'RUNNING';
  assertStatus('to', to);
  if (isWaitingStatus(to)) throw new InvalidInputError('to', `clearing a wait cannot leave the job in ${to}`);
  const entry =
    options.entry === undefined ? undefined : await prepareEntry(ctx, tenantId, jobId, options.entry);
  for (let attempt = 1; attempt <= CLEAR_ATTEMPTS; attempt++) {
    const current = await getLiveJob(ctx, tenantId, jobId, 'clearWait');
    const wait = current.wait;
    if (wait === undefined) return null;
    if (options.taskToken !== undefined && wait.taskToken !== options.taskToken) return null;
    if (current.status !== to && !LEGAL_TRANSITIONS[current.status].includes(to)) {
      throw new IllegalTransitionError(jobId, current.status, to);
    }
    const now = ctx.now();
    const u = new UpdateBuilder();
    if (current.status !== to) applyStatus(u, tenantId, to, now, ctx.terminalTtlDays);
    u.remove('wait');
    bumpVersion(u, now);
    u.when(`${u.path('wait', 'taskToken')} = ${u.value(wait.taskToken)}`).when(
      `${u.path('status')} = ${u.value(current.status)}`,
    );
    let changed = false;
    const { job } = await writeJob(ctx, {
      operation: 'clearWait',
      tenantId,
      jobId,
      update: u,
      ...(entry === undefined ? {} : { entry }),
      onConditionFailed: () => {
        changed = true;
        return NOOP;
      },
    });
    if (!changed) {
      if (TERMINAL_STATUSES.includes(to)) await expireEntries(ctx, job);
      return wait;
    }
  }
  throw new StaleCheckpointError(
    jobId,
    undefined,
    undefined,
    {},
    {
      cause: new Error(`clearWait: the job changed ${CLEAR_ATTEMPTS} times while clearing its wait`),
    },
  );
}
