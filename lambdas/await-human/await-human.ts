import { accountsOf } from '../lib/engine/context.ts';
import { RetryBudgetExhaustedError } from '../lib/engine/errors.ts';
import { evidenceSoFar } from '../lib/engine/history.ts';
import type { EngineDeps, JobRef, WaitEvent } from '../lib/engine/types.ts';
import {
  answeredReviews,
  decisionSinceRequest,
  isParkable,
  isWaitKind,
  WAIT_ENTRY,
  WAIT_STATUS,
  WAIT_TIMEOUT_SECONDS,
} from '../lib/engine/waits.ts';
import { type Job, type LedgerEntry, TERMINAL_STATUSES, type WaitKind } from '../lib/ledger/types.ts';
import { ApprovalRejectedError, WaitAnsweredError } from './errors.ts';
import { type ParkInput, type ParkResult, parkJob } from './park.ts';

export interface AwaitHumanInput extends JobRef {
  kind: string;
  step: string;
  reason: string;
  taskToken: string;
  /** The state machine's first-wait timeout: the job parks if nobody answers within it. */
  parkAfterSeconds?: number;
  /** The parked wait: arm the stored wait with this new token (no new request, nobody told again). */
  rearm?: boolean;
  /** The request's id (`WaitRequest`): the same on a retried attempt of this wait. */
  waitId?: string;
  /** A takeover: how long it waits (bounded by the session's idle timeout: `takeoverWaitSeconds`). */
  timeoutSeconds?: number;
  /** A takeover: what the step asks the person to do in the browser. */
  question?: string;
}

export type AwaitHumanResult =
  | { outcome: 'waiting'; kind: string; expiresAt: string; parked?: boolean }
  | { outcome: 'stopped'; status: string };

/**
 * Entry of a wait-for-task-token state: stores the token on the job (with the kind, the
 * step and the expiry) and tells the people who must act. The token never leaves the
 * backend: people answer through the API, which looks it up. A retried invocation re-arms
 * the wait with the new token.
 *
 * The job keeps its browser lease for as long as it keeps its session: until it parks
 * (approvals and reviews, after `parkAfterSeconds`) or, for an MFA wait, until the session's
 * idle timeout would end the browser anyway.
 *
 * With `action: 'park'` the same function parks the job instead (see {@link parkJob}).
 */
export async function awaitHuman(
  deps: EngineDeps,
  input: AwaitHumanInput | ParkInput,
): Promise<AwaitHumanResult | ParkResult> {
  if ('action' in input && input.action === 'park') return parkJob(deps, input);
  const wait = input as AwaitHumanInput;
  if (!isWaitKind(wait.kind)) throw new TypeError(`unknown wait kind ${wait.kind}`);
  if (!wait.taskToken) throw new TypeError('a task token is required');
  return wait.rearm ? rearm(deps, wait, wait.kind) : request(deps, wait, wait.kind);
}

async function request(deps: EngineDeps, input: AwaitHumanInput, kind: WaitKind): Promise<AwaitHumanResult> {
  const started = deps.clock().getTime();
  const { job, entries } = await deps.ledger.readJob(input.tenantId, input.jobId);
  if (TERMINAL_STATUSES.includes(job.status)) return { outcome: 'stopped', status: job.status };
  // A retry of this very wait (an earlier attempt stored its token, then failed): a decision the
  // person recorded meanwhile answers it, instead of being voided by a new request.
  if (input.waitId && isRetryOf(entries, kind, input.step, input.waitId)) {
    await answerFromLedger(deps, job, entries, kind, input.step, undefined);
  }
  const stepIndex = stepIndexOf(deps, job, input.step);
  // A review that comes back for a reason a person answered spends a retry (or fails the job).
  if (kind === 'review' && !isRetryOf(entries, kind, input.step, input.waitId))
    await askedAgain(deps, job, entries, input);
  const now = deps.clock();
  const lasts = waitSeconds(kind, input);
  const expiresAt = new Date(now.getTime() + lasts * 1000).toISOString();
  const parkAfterSeconds = input.parkAfterSeconds ?? deps.settings.parkAfterSeconds;
  const heldSeconds = isParkable(kind)
    ? parkAfterSeconds
    : kind === 'takeover'
      ? lasts
      : deps.settings.sessionIdleTimeoutMinutes * 60;
  await deps.capacity.renew(job.tenantId, job.jobId, {
    forSeconds: heldSeconds + deps.settings.leaseTtlSeconds,
  });
  await deps.ledger.setWait(
    job.tenantId,
    job.jobId,
    {
      kind,
      step: input.step,
      stepIndex,
      taskToken: input.taskToken,
      expiresAt,
      requestedAt: now.toISOString(),
      reason: input.reason,
    },
    WAIT_STATUS[kind],
    {
      type: WAIT_ENTRY[kind],
      step: input.step,
      stepIndex,
      detail: {
        reason: input.reason,
        expiresAt,
        ...(isParkable(kind) ? { parkAfterSeconds } : {}),
        ...(input.waitId ? { waitId: input.waitId } : {}),
        ...(input.question ? { question: input.question } : {}),
      },
      cost: {
        lambdaInvocations: 1,
        lambdaMs: deps.clock().getTime() - started,
        // The Await state of this wait.
        stateTransitions: 1,
        dynamoWrites: 2,
        humanInterventions: 1,
      },
    },
  );
  await deps.notifier.waiting({
    tenantId: job.tenantId,
    jobId: job.jobId,
    kind,
    step: input.step,
    reason: input.reason,
    expiresAt,
    evidence: evidenceSoFar(entries),
    ...(kind === 'takeover' ? takeoverNotice(input.question) : {}),
  });
  return { outcome: 'waiting', kind, expiresAt };
}

/**
 * The parked wait: the first wait's token timed out when the job parked, so the stored wait
 * gets this one. A decision recorded in the meantime (the API records before it resumes, so
 * it may have answered the old token) is taken from the ledger instead of being waited for:
 * checked before the new token is stored and again after, so no decision can slip between.
 */
async function rearm(deps: EngineDeps, input: AwaitHumanInput, kind: WaitKind): Promise<AwaitHumanResult> {
  const { job, entries } = await deps.ledger.readJob(input.tenantId, input.jobId);
  if (TERMINAL_STATUSES.includes(job.status)) throw new WaitAnsweredError(job.jobId, input.step, 'finished');
  await answerFromLedger(deps, job, entries, kind, input.step, undefined);
  // An account revoked while the job parked fails it now (AccountRevokedError), not in 7 days.
  await accountsOf(deps, job);
  const stepIndex = stepIndexOf(deps, job, input.step);
  const now = deps.clock();
  const stored = job.wait?.kind === kind && job.wait.step === input.step ? job.wait : undefined;
  const expiresAt =
    stored?.expiresAt ?? new Date(now.getTime() + WAIT_TIMEOUT_SECONDS[kind] * 1000).toISOString();
  await deps.ledger.setWait(
    job.tenantId,
    job.jobId,
    {
      kind,
      step: input.step,
      stepIndex,
      taskToken: input.taskToken,
      expiresAt,
      requestedAt: stored?.requestedAt ?? now.toISOString(),
      reason: stored?.reason ?? input.reason,
    },
    WAIT_STATUS[kind],
  );
  const after = await deps.ledger.readJob(input.tenantId, input.jobId);
  await answerFromLedger(deps, after.job, after.entries, kind, input.step, input.taskToken);
  return { outcome: 'waiting', kind, expiresAt, parked: true };
}

/** Throws when the ledger already answers the wait: approved (go on) or rejected (fail). */
async function answerFromLedger(
  deps: EngineDeps,
  job: Job,
  entries: readonly LedgerEntry[],
  kind: WaitKind,
  step: string,
  ownToken: string | undefined,
): Promise<void> {
  const decision = decisionSinceRequest(entries, kind, step);
  if (decision === undefined) return;
  if (decision === 'reject') throw new ApprovalRejectedError(job.jobId, step);
  // The API may not have cleared the wait (it answered a token that had timed out): clear it.
  if (job.wait) {
    await deps.ledger.clearWait(job.tenantId, job.jobId, {
      ...(ownToken ? { taskToken: ownToken } : { taskToken: job.wait.taskToken }),
      to: 'RUNNING',
    });
  }
  throw new WaitAnsweredError(job.jobId, step, 'approve');
}

/**
 * A review of a write that comes back for the reason a person already answered (they said it did
 * not happen, it was tried again, and it is uncertain again) has not been settled by the answer:
 * asking again spends a retry, and once the budget is spent the job fails with the history of
 * the answers, instead of asking the person again and again.
 */
async function askedAgain(
  deps: EngineDeps,
  job: Job,
  entries: readonly LedgerEntry[],
  input: AwaitHumanInput,
): Promise<void> {
  const earlier = answeredReviews(entries, input.step, input.reason);
  if (earlier.length === 0) return;
  const history = earlier.map((a) => `${a.answer} by ${a.by} at ${a.at}`).join('; ');
  const used = job.retriesUsed + 1;
  if (used > job.retryBudget)
    throw new RetryBudgetExhaustedError(
      input.step,
      job.retriesUsed,
      `a person was asked ${earlier.length} time${earlier.length === 1 ? '' : 's'} about the same write (${input.reason}) and it came back each time: ${history}`,
    );
  await deps.ledger.updateJob(job.tenantId, job.jobId, {
    expectedVersion: job.version,
    set: { retriesUsed: used },
    entry: {
      type: 'step-failed',
      step: input.step,
      detail: {
        reason: `the write came back to review (${input.reason}) after a person answered: ${history}`,
        retriesUsed: used,
      },
      cost: { dynamoWrites: 2 },
    },
  });
}

/** How long a wait of `kind` lasts: a takeover as its request says (never past the cap), the others fixed. */
function waitSeconds(kind: WaitKind, input: AwaitHumanInput): number {
  if (kind !== 'takeover') return WAIT_TIMEOUT_SECONDS[kind];
  const asked = input.timeoutSeconds;
  if (typeof asked !== 'number' || !Number.isFinite(asked) || asked <= 0) {
    throw new TypeError('a takeover wait needs its timeoutSeconds');
  }
  return Math.min(asked, WAIT_TIMEOUT_SECONDS.takeover);
}

/**
 * What a takeover's notification adds: the question, and nothing of the browser. The live view
 * lets whoever holds it act, and a notification goes to a tenant's webhook (a chat channel) with
 * no check of who reads it; it links to the decision page, where an approver gets the view.
 */
function takeoverNotice(question: string | undefined): Pick<WaitEvent, 'question'> {
  return question ? { question } : {};
}

/** The latest request of this kind at `step` was made by an earlier attempt of the same wait. */
function isRetryOf(
  entries: readonly LedgerEntry[],
  kind: WaitKind,
  step: string,
  waitId: string | undefined,
): boolean {
  if (!waitId) return false;
  const last = entries.findLast((e) => e.step === step && e.type === WAIT_ENTRY[kind]);
  return last?.detail?.waitId === waitId;
}

function stepIndexOf(deps: EngineDeps, job: Job, step: string): number {
  const playbook = deps.playbooks.get(job.playbook);
  return Math.max(
    0,
    playbook.steps.findIndex((s) => s.id === step),
  );
}
