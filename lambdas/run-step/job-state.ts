import { parkSessions } from '../lib/engine/cleanup.ts';
import type { EngineDeps, StepOutcome } from '../lib/engine/types.ts';
import type { Job } from '../lib/ledger/types.ts';

/** Moves of the job itself that RunStep makes before a step: back to RUNNING, or back to the queue. */

/** A job resumed by a person (or a new execution) may still show its waiting or queued status. */
export async function ensureRunning(deps: EngineDeps, job: Job): Promise<Job> {
  if (job.status === 'RUNNING') return job;
  if (job.wait) {
    await deps.ledger.clearWait(job.tenantId, job.jobId, { taskToken: job.wait.taskToken, to: 'RUNNING' });
    return deps.ledger.getJob(job.tenantId, job.jobId);
  }
  return deps.ledger.transition(job.tenantId, job.jobId, 'RUNNING', { expectedVersion: job.version });
}

/**
 * The job lost its lease and the cap is full: it ends its sessions (the profiles keep the
 * sign-in), records that as a `parked` entry, and goes back to Start to wait in the queue; a
 * new session from the profile picks up at this step when a slot frees.
 */
export async function leaseLost(
  deps: EngineDeps,
  job: Job,
  step: string,
  stepIndex: number,
  started: number,
): Promise<StepOutcome> {
  await parkSessions(deps, job, {
    step,
    stepIndex,
    detail: { reason: 'lease-lost' },
    cost: { lambdaInvocations: 1, lambdaMs: deps.clock().getTime() - started, dynamoWrites: 2 },
  });
  return {
    outcome: 'lease_lost',
    step,
    detail: 'the browser lease expired and the cap is full: the job waits for a slot again',
  };
}
