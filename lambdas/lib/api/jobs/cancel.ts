import type { Principal } from '../../auth/api-keys.ts';
import { releaseJobResources } from '../../engine/cleanup.ts';
import { executionName } from '../../engine/executions.ts';
import { hasOpenIntent } from '../../engine/history.ts';
import { IllegalTransitionError } from '../../ledger/errors.ts';
import type { Job, LedgerEntry } from '../../ledger/types.ts';
import type { Playbook } from '../../playbooks/contract.ts';
import type { ApiDeps } from '../deps.ts';
import { ConflictError } from '../errors.ts';
import { stopExecution } from '../step-functions.ts';

/** The error an execution stopped by a cancellation carries. */
export const CANCELLED_ERROR = 'Belay.Cancelled';

export interface CancelResult {
  job: Job;
  /** False when the job had already been cancelled (the call is idempotent). */
  cancelled: boolean;
  /**
   * A write was in flight: the job finishes settling it (its checkpoint, or its probe) and
   * then cancels itself; it stays RUNNING until then, and nothing after the write runs.
   */
  settling?: boolean;
}

/**
 * Cancels a job: CANCELLED with a `cancelled` entry (who cancelled it) first, so that a
 * step still running can no longer checkpoint or write its intent (both are conditioned on
 * the job's status and version) and is abandoned before its side effect; then stops the
 * execution, ends the job's browser sessions and gives its capacity leases back.
 *
 * Idempotent: cancelling a cancelled job repeats the stop and the release (both harmless)
 * in case an earlier call died half-way, and answers with the job. A job that succeeded
 * or failed cannot be cancelled (409).
 */
export async function cancelJob(deps: ApiDeps, principal: Principal, jobId: string): Promise<CancelResult> {
  const { ledger } = deps.engine;
  const read = await ledger.readJob(principal.tenantId, jobId);
  let job = read.job;
  const inFlight = writeInFlight(deps, job, read.entries);
  if (job.status === 'RUNNING' && inFlight) {
    // Ending the session now would abandon a write that may have reached its application,
    // with no record of whether it did: the engine settles it, then cancels.
    if (!job.cancelRequested) {
      job = await ledger.requestCancel(principal.tenantId, jobId, principal.keyId, {
        type: 'cancel-requested',
        actor: principal.keyId,
        step: inFlight,
        stepIndex: job.nextStep,
        detail: { cancelledBy: principal.keyId, step: inFlight },
        cost: { dynamoWrites: 2 },
      });
    }
    return { job, cancelled: false, settling: true };
  }
  let cancelled = false;
  if (job.status !== 'CANCELLED') {
    assertCancellable(job);
    try {
      job = await ledger.transition(principal.tenantId, jobId, 'CANCELLED', {
        entry: {
          type: 'cancelled',
          actor: principal.keyId,
          ...(job.nextStep < job.stepCount ? { stepIndex: job.nextStep } : {}),
          detail: { cancelledBy: principal.keyId, previousStatus: job.status },
          cost: { dynamoWrites: 2 },
        },
      });
      cancelled = true;
    } catch (err) {
      if (!(err instanceof IllegalTransitionError)) throw err;
      // It finished (or was cancelled by someone else) while we looked.
      job = await ledger.getJob(principal.tenantId, jobId);
      if (job.status !== 'CANCELLED') assertCancellable(job);
    }
  }
  await stopExecution(
    deps.sfn,
    deps.stateMachineArn,
    job.executionName ?? executionName(job, 0),
    CANCELLED_ERROR,
    `job cancelled by ${principal.keyId}`,
  );
  await releaseJobResources(deps.engine, job);
  return { job, cancelled };
}

/** The write step whose intent is open (it may be in flight, or may have happened), if any. */
function writeInFlight(deps: ApiDeps, job: Job, entries: readonly LedgerEntry[]): string | undefined {
  let playbook: Playbook;
  try {
    playbook = deps.engine.playbooks.get(job.playbook);
  } catch {
    return undefined;
  }
  const step = playbook.steps[job.nextStep];
  return step?.kind === 'write' && hasOpenIntent(entries, step.id) ? step.id : undefined;
}

function assertCancellable(job: Job): void {
  if (job.status === 'SUCCEEDED' || job.status === 'FAILED') {
    throw new ConflictError(
      'job_finished',
      `job ${job.jobId} has already finished (${job.status}); there is nothing to cancel`,
      {
        details: { status: job.status },
      },
    );
  }
}
