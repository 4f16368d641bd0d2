import type { Page } from 'playwright-core';
import type { Job, LedgerEntry } from '../ledger/types.ts';
import type { Application, Playbook, ProbeResult, Step, StepContext } from '../playbooks/contract.ts';
import { checkpointCost, writeCheckpoint } from './checkpoint.ts';
import { RetryBudgetExhaustedError } from './errors.ts';
import { entriesFor, reviewedAsDone } from './history.ts';
import { type PendingCache, settlePending } from './step-cache.ts';
import type { EngineDeps, StepOutcome } from './types.ts';
import { waitRequest } from './waits.ts';
import { ownerActiveFor } from './write-owner.ts';

/**
 * Probing a write in its application, in one place for RunStep (an intent left open by a
 * previous attempt), Reconcile (a write whose outcome is unknown) and Finish (every write
 * verified before the job succeeds).
 */

/** The attempt an open intent belongs to: one per intent written for the step (at least 1). */
export function openAttempt(entries: readonly LedgerEntry[], step: string): number {
  return Math.max(1, entriesFor(entries, step).filter((e) => e.type === 'step-started').length);
}

/** Why the open intent's attempt acted without a confirmation (its `step-unconfirmed` entry), if it did. */
export function unconfirmedSinceIntent(entries: readonly LedgerEntry[], step: string): string | undefined {
  let reason: string | undefined;
  for (const e of entriesFor(entries, step)) {
    if (e.type === 'step-started') reason = undefined;
    else if (e.type === 'step-unconfirmed')
      reason = String(e.detail?.reason ?? 'the write was not confirmed');
  }
  return reason;
}

/** What the open intent's unconfirmed attempt served from and offered to the action cache, if anything. */
export function pendingCacheSinceIntent(
  entries: readonly LedgerEntry[],
  step: string,
): PendingCache | undefined {
  let pending: PendingCache | undefined;
  for (const e of entriesFor(entries, step)) {
    if (e.type === 'step-started') pending = undefined;
    else if (e.type === 'step-unconfirmed')
      pending = (e.detail?.cache as PendingCache | undefined) ?? pending;
  }
  return pending;
}

/** The unconfirmed attempt's cache, settled with its write; the cache never fails the step. */
async function settleCacheOf(
  deps: EngineDeps,
  job: Job,
  playbook: Playbook,
  step: Step,
  pending: PendingCache | undefined,
  outcome: 'done' | 'absent',
): Promise<void> {
  if (!pending) return;
  try {
    const scope = { tenantId: job.tenantId, playbookId: playbook.id };
    const settled = await settlePending(
      deps.actionCache,
      scope,
      job.jobId,
      pending,
      outcome,
      playbook.actionCache,
    );
    if (settled !== 'none') deps.log.info('action cache', { step: step.id, cache: settled, probe: outcome });
  } catch (err) {
    deps.log.warn('the action cache could not be updated', {
      step: step.id,
      error: err instanceof Error ? err.message : String(err),
    });
  }
}

/** Runs a write step's probe: does its effect show in the application? */
export function probeWrite(step: Step, page: Page, ctx: StepContext): Promise<ProbeResult> {
  if (!step.probe) throw new TypeError(`write step ${step.id} has no probe`);
  return step.probe(page, ctx);
}

/** The page shows the application's sign-in instead (the site signed the account out). */
export async function signedOutNow(
  application: Application | undefined,
  page: Page,
  ctx: StepContext,
): Promise<boolean> {
  return application ? await application.isSignedOut(page, ctx).catch(() => false) : false;
}

/** An intent with no completion after it, and what the engine has at hand to look for its effect. */
export interface OpenIntent {
  job: Job;
  entries: readonly LedgerEntry[];
  playbook: Playbook;
  stepIndex: number;
  page: Page;
  ctx: StepContext;
  sessionId: string | undefined;
  identityId: string | undefined;
  /** When the invocation began (epoch ms): a completion records the invocation's time. */
  startedMs: number;
  /**
   * The invocation ends with what is found (Reconcile): a `reconciled` entry then records the
   * invocation. RunStep goes on to act after `absent`, and records its invocation on the
   * checkpoint it writes then.
   */
  endsInvocation: boolean;
}

export type Resolution =
  /** The write happened: the checkpoint is written with the evidence found; it is never done again. */
  | { status: 'done'; job: Job }
  /** It did not: a `reconciled` entry says so, and acting again (same idempotency key) is safe. */
  | { status: 'absent'; job: Job }
  /**
   * Not there yet, but the attempt that owns the write may still be running (and commit): do
   * not act before it released the write or went silent, in `retryAfterSeconds`.
   */
  | { status: 'owner_active'; retryAfterSeconds: number }
  /** The application holds it more than once: a person decides; it is never success by itself. */
  | { status: 'duplicate'; count: number; detail: string }
  /** The application cannot tell: nothing is recorded, a person reconciles. */
  | { status: 'unknown'; detail: string };

/**
 * Resolves an open intent from what the application shows: a reviewer's word that the write
 * happened, else the step's probe. `done` writes the checkpoint with that evidence
 * (`reconciled`), `absent` records a `reconciled` entry, `unknown` records nothing.
 */
export async function resolveOpenIntent(deps: EngineDeps, intent: OpenIntent): Promise<Resolution> {
  const { job, entries, playbook, stepIndex, page, ctx } = intent;
  const step = playbook.steps[stepIndex] as Step;
  const attempt = openAttempt(entries, step.id);
  const reviewed = reviewedAsDone(entries, step.id);
  const found: ProbeResult = reviewed
    ? { status: 'done', evidence: { reviewedBy: reviewed.actor ?? 'reviewer' } }
    : await probeWrite(step, page, ctx);
  if (found.status === 'unknown') return { status: 'unknown', detail: found.detail };
  if (found.status === 'duplicate') return { status: 'duplicate', count: found.count, detail: found.detail };
  const pending = pendingCacheSinceIntent(entries, step.id);
  if (found.status === 'absent') {
    const activeFor = ownerActiveFor(job, step.id, deps.clock());
    if (activeFor > 0) return { status: 'owner_active', retryAfterSeconds: Math.ceil(activeFor / 1000) };
    // An attempt that acted and got no confirmation, and did not happen: a failed attempt.
    const failed = unconfirmedSinceIntent(entries, step.id);
    const used = job.retriesUsed + (failed ? 1 : 0);
    const after = await deps.ledger.updateJob(job.tenantId, job.jobId, {
      expectedVersion: job.version,
      ...(failed ? { set: { retriesUsed: used } } : {}),
      entry: {
        type: 'reconciled',
        step: step.id,
        stepIndex,
        sessionId: intent.sessionId,
        identityId: intent.identityId,
        attempt,
        detail: {
          probe: 'absent',
          ...(found.detail ? { note: found.detail } : {}),
          ...(failed ? { failedAttempt: failed, retriesUsed: used } : {}),
        },
        cost: { ...(intent.endsInvocation ? { lambdaInvocations: 1 } : {}), dynamoWrites: 2 },
      },
    });
    await settleCacheOf(deps, job, playbook, step, pending, 'absent');
    if (used > job.retryBudget) {
      throw new RetryBudgetExhaustedError(step.id, job.retriesUsed, `the write did not happen: ${failed}`);
    }
    return { status: 'absent', job: after };
  }
  const elapsedMs = deps.clock().getTime() - intent.startedMs;
  const done = await writeCheckpoint(
    deps,
    { job, playbook, stepIndex, attempt, sessionId: intent.sessionId, identityId: intent.identityId },
    found.evidence,
    checkpointCost(elapsedMs),
    { reconciled: true },
  );
  await settleCacheOf(deps, job, playbook, step, pending, 'done');
  return { status: 'done', job: done };
}

/**
 * The application holds a write more than once: the job waits for a person (a review), who
 * says whether it is done (the extra records dealt with) or not.
 */
export function duplicateFound(deps: EngineDeps, job: Job, step: string, detail: string): StepOutcome {
  return {
    outcome: 'needs_review',
    step,
    detail,
    wait: waitRequest(job, 'review', step, 'duplicate', deps.settings.parkAfterSeconds),
  };
}
