import type { Cost, Evidence, Job, ScreenshotRef } from '../ledger/types.ts';
import type { Playbook, Step } from '../playbooks/contract.ts';
import { approvesEffect } from './effect-approval.ts';
import { idempotencyKeyOf } from './job-identity.ts';
import type { EngineDeps, StepOutcome } from './types.ts';
import { waitRequest } from './waits.ts';

/** Where in a job a step's checkpoint is written, and by which attempt, session and identity. */
export interface CheckpointAt {
  job: Job;
  playbook: Playbook;
  stepIndex: number;
  /** The attempt whose effect the evidence shows (at least 1). */
  attempt: number;
  sessionId?: string | undefined;
  identityId?: string | undefined;
  /** The page when the step was verified, if the playbook's policy kept one. */
  screenshot?: ScreenshotRef | undefined;
}

/**
 * What one invocation cost when it ends by writing a checkpoint: the invocation, its time,
 * the browser time (the step's own work when known, else the whole invocation) and the
 * transaction's two writes. Its states are the metered ledger's to stamp (`statesOf`): they
 * depend on the state that invoked it (`RunStep` alone, `RunNextStep` with `Route`).
 */
export function checkpointCost(elapsedMs: number, actionMs?: number, heartbeats = 0): Partial<Cost> {
  return {
    lambdaInvocations: 1,
    lambdaMs: elapsedMs,
    browserSeconds: (actionMs ?? elapsedMs) / 1000,
    // The transaction's two, and the write owner's heartbeats (`write-owner.ts`).
    dynamoWrites: 2 + heartbeats,
  };
}

/**
 * Advances the checkpoint past a verified step: ONE transaction puts the `step-completed`
 * entry (with its evidence, `reconciled` when a probe or a person found the effect) and moves
 * the job's pointer under its version, so two workers can never both advance it.
 * Returns the job as the transaction left it.
 */
export async function writeCheckpoint(
  deps: EngineDeps,
  at: CheckpointAt,
  evidence: Evidence,
  cost: Partial<Cost>,
  options: { reconciled?: boolean; detail?: Record<string, unknown> } = {},
): Promise<Job> {
  const { job, playbook, stepIndex } = at;
  const step = playbook.steps[stepIndex] as Step;
  const pending = deps.ledger.completeStep({
    tenantId: job.tenantId,
    jobId: job.jobId,
    expectedVersion: job.version,
    // Nothing is read back: the job it leaves follows from the job as read.
    job,
    stepIndex,
    step: step.id,
    attempt: Math.max(1, at.attempt),
    sessionId: at.sessionId,
    identityId: at.identityId,
    idempotencyKey: step.kind === 'write' ? idempotencyKeyOf(job, step.id) : undefined,
    evidence: options.reconciled ? { ...evidence, reconciled: true } : evidence,
    cost,
    ...(options.detail ? { detail: options.detail } : {}),
    ...(at.screenshot ? { screenshot: at.screenshot } : {}),
  });
  // A kill here lands while the transaction is in flight: it either committed or it did not.
  const [done] = await Promise.all([
    pending,
    deps.faultPoint('during-checkpoint', { jobId: job.jobId, step: step.id, stepIndex }),
  ]);
  return done;
}

/**
 * The step waits for a person's approval before it runs (its own flag, or the job's approvals
 * policy). Not a step approved on its effect: RunStep asks once it has prepared what the write
 * would submit (`effect-approval.ts`); nor any step of a drift check.
 */
export function needsApproval(job: Job, step: Step): boolean {
  // A drift check commits nothing: there is nothing to approve.
  if (approvesEffect(step) || job.mode === 'check') return false;
  return step.needsApproval === true || job.approvals.includes(step.id);
}

/** The next step waits for a person's approval: the wait the state machine arms. */
export function approvalNeeded(deps: EngineDeps, job: Job, step: string, stepIndex: number): StepOutcome {
  const wait = waitRequest(job, 'approval', step, 'needs_approval', deps.settings.parkAfterSeconds);
  return { outcome: 'needs_approval', step, stepIndex, wait };
}

/** Where the job goes after the checkpoint of step `stepIndex`: the next step, its approval, or the finish check. */
export function afterCheckpoint(
  deps: EngineDeps,
  playbook: Playbook,
  done: Job,
  stepIndex: number,
): StepOutcome {
  const completed = (playbook.steps[stepIndex] as Step).id;
  const next = done.nextStep;
  if (next >= playbook.steps.length)
    return { outcome: 'finished', step: completed, stepCount: playbook.steps.length };
  const nextStep = playbook.steps[next] as Step;
  if (needsApproval(done, nextStep)) return approvalNeeded(deps, done, nextStep.id, next);
  return {
    outcome: 'completed',
    step: completed,
    stepIndex,
    nextStep: next,
    stepCount: playbook.steps.length,
  };
}
