import { parkSessions } from '../lib/engine/cleanup.ts';
import type { EngineDeps, JobRef } from '../lib/engine/types.ts';
import { decisionSinceRequest, isParkable, isWaitKind, sinceWaitRequested } from '../lib/engine/waits.ts';
import { TERMINAL_STATUSES, type WaitKind } from '../lib/ledger/types.ts';
import { ApprovalRejectedError } from './errors.ts';

export interface ParkInput extends JobRef {
  action: 'park';
  kind: string;
  step: string;
}

export type ParkResult =
  | { outcome: 'parked'; step: string; sessionsEnded: number }
  /** Approved while the first wait timed out: the job still has its browser and goes on. */
  | { outcome: 'answered'; step: string }
  | { outcome: 'stopped'; status: string };

/**
 * Parks a job whose approval or review has waited longer than `parkAfterSeconds`: ends its
 * browser sessions gracefully (the profiles are persisted, so the next session starts signed
 * in), records a `parked` entry (the job keeps its waiting status and its wait), clears the
 * job's sessions and gives its lease back. When the person answers, the job takes a lease
 * again, opens a new session from the profile and RunStep's precondition brings the page
 * back to the step it stopped at (signing in again if the profile did not keep the sign-in).
 *
 * Safe to repeat after a crash at any line: ending a session and releasing a lease are
 * idempotent, and the `parked` entry is written once per wait.
 */
export async function parkJob(deps: EngineDeps, input: ParkInput): Promise<ParkResult> {
  const started = deps.clock().getTime();
  if (!isWaitKind(input.kind) || !isParkable(input.kind)) {
    throw new TypeError(`a ${input.kind} wait does not park`);
  }
  const kind: WaitKind = input.kind;
  const { job, entries } = await deps.ledger.readJob(input.tenantId, input.jobId);
  if (TERMINAL_STATUSES.includes(job.status)) return { outcome: 'stopped', status: job.status };
  const decision = decisionSinceRequest(entries, kind, input.step);
  if (decision === 'reject') throw new ApprovalRejectedError(job.jobId, input.step);
  if (decision === 'approve') return { outcome: 'answered', step: input.step };

  const ended = await parkSessions(
    deps,
    job,
    {
      step: input.step,
      ...(job.wait?.step === input.step ? { stepIndex: job.wait.stepIndex } : {}),
      detail: { kind, parkAfterSeconds: deps.settings.parkAfterSeconds },
      cost: {
        lambdaInvocations: 1,
        lambdaMs: deps.clock().getTime() - started,
        // ParkWait, Parked (AwaitParked is recorded by its own invocation).
        stateTransitions: 2,
        // The entry with the job, then the lease's release (delete + state version).
        dynamoWrites: 4,
      },
    },
    // Written once per wait: a repeat after a crash finds it.
    !sinceWaitRequested(entries, kind, input.step, 'parked'),
  );
  await deps.capacity.release(job.tenantId, job.jobId);
  return { outcome: 'parked', step: input.step, sessionsEnded: ended.length };
}
