import type { Page } from 'playwright-core';
import { releaseJobResources } from '../lib/engine/cleanup.ts';
import { attachFor, browserLost, stepContext } from '../lib/engine/context.ts';
import { OutcomeNotVerifiedError } from '../lib/engine/errors.ts';
import { reviewedAsDone } from '../lib/engine/history.ts';
import { probeWrite, signedOutNow } from '../lib/engine/probe.ts';
import { signInAgain } from '../lib/engine/sign-in.ts';
import type { EngineDeps, JobRef } from '../lib/engine/types.ts';
import { DECISION_ENTRY, sinceWaitRequested, type WaitRequest, waitRequest } from '../lib/engine/waits.ts';
import type { Evidence, Job, LedgerEntry } from '../lib/ledger/types.ts';
import type { Playbook, ProbeResult, Step } from '../lib/playbooks/contract.ts';

export type FinishResult =
  | { outcome: 'succeeded'; verified: Record<string, Evidence> }
  | { outcome: 'session_lost'; app: string; detail: string }
  /** Signing in again to verify needs a person's one-time code: the state machine waits for it (AwaitMfa). */
  | { outcome: 'mfa_required'; app: string; step: string; detail: string }
  /** The check could not conclude (the site briefly unavailable, a page it could not read): look again later. */
  | { outcome: 'retry'; step: string; retryAfterSeconds: number; detail: string }
  /** A person looks: the write is there more than once, not there, or the check stayed inconclusive. */
  | { outcome: 'needs_review'; step: string; detail: string; wait: WaitRequest }
  | { outcome: 'stopped'; status: string };

/**
 * Inconclusive checks of one write, in a row, before a person is asked to look: each is
 * retried after a backoff (the site may be briefly down), never turned into FAILED.
 */
export const FINISH_CHECKS_BEFORE_REVIEW = 3;

/**
 * Verifies the job's outcome in the target applications (every write step's probe must find
 * its effect exactly once), marks the job SUCCEEDED (a verified completion), then ends its
 * sessions (profiles persisted) and releases its leases. Every write was verified at its
 * step, so a check that cannot conclude never fails the job: it is tried again, then a person
 * decides, as for a write found more than once or not at all (a reviewer's word that it is
 * done verifies it; so does their word on the step's uncertain attempt, for a check that
 * cannot conclude: {@link settledByReviewer}). A repeat after a crash finds the job SUCCEEDED
 * and only finishes the clean-up.
 */
export async function finish(deps: EngineDeps, ref: JobRef): Promise<FinishResult> {
  const { job, entries } = await deps.ledger.readJob(ref.tenantId, ref.jobId);
  if (job.status === 'SUCCEEDED' || job.status === 'FAILED' || job.status === 'CANCELLED') {
    await releaseJobResources(deps, job);
    return { outcome: 'stopped', status: job.status };
  }
  const playbook = deps.playbooks.get(job.playbook);
  if (job.nextStep < playbook.steps.length) {
    throw new OutcomeNotVerifiedError(
      playbook.steps[job.nextStep]?.id ?? '?',
      'the job has steps left to run',
    );
  }

  const verified: Record<string, Evidence> = {};
  for (const [index, step] of playbook.steps.entries()) {
    // A drift check made no write: there is none to look for.
    if (step.kind !== 'write' || !step.probe || job.mode === 'check') continue;
    const reviewed = finishReview(entries, step.id);
    if (reviewed === 'absent') {
      throw new OutcomeNotVerifiedError(step.id, 'a reviewer found it absent from its application');
    }
    if (reviewed) {
      verified[step.id] = { reviewedBy: reviewed };
      continue;
    }
    const checked = await checkWrite(deps, job, playbook, step, index, entries);
    if (checked.outcome === 'done') {
      verified[step.id] = checked.evidence;
      continue;
    }
    const settled =
      checked.outcome === 'probed' ? settledByReviewer(entries, step.id, checked.probe) : undefined;
    if (settled) {
      verified[step.id] = settled;
      continue;
    }
    return await notConcluded(deps, job, entries, step, checked);
  }

  const running = await runningAgain(deps, job);
  const done = await deps.ledger.transition(running.tenantId, running.jobId, 'SUCCEEDED', {
    expectedVersion: running.version,
    entry: {
      type: 'succeeded',
      detail: { verified },
      // Finish, FinishOutcome, Succeeded.
      cost: { lambdaInvocations: 1, stateTransitions: 3, dynamoWrites: 2 },
    },
  });
  await releaseJobResources(deps, done);
  return { outcome: 'succeeded', verified };
}

type Checked =
  | { outcome: 'done'; evidence: Evidence }
  | { outcome: 'probed'; probe: Exclude<ProbeResult, { status: 'done' }> }
  | Extract<FinishResult, { outcome: 'session_lost' | 'mfa_required' }>;

/** One write looked for in its application, signing in again first when the site signed out. */
async function checkWrite(
  deps: EngineDeps,
  job: Job,
  playbook: Playbook,
  step: Step,
  index: number,
  entries: readonly LedgerEntry[],
): Promise<Checked> {
  const attach = await attachFor(deps, job, step.app);
  if (!attach.ok) return { outcome: 'session_lost', app: step.app, detail: attach.detail };
  const page: Page = attach.attached.page;
  const ctx = stepContext(deps, job, playbook, step, index, entries);
  try {
    let probe = await probeWrite(step, page, ctx);
    if (probe.status === 'unknown' && (await signedOutNow(playbook.applications[step.app], page, ctx))) {
      // The sign-in expired since the step: sign in again (as RunStep does) and look again. A
      // code sent to a person makes the job wait for them, then come back here through RunStep.
      const signedIn = await signInAgain(
        deps,
        job,
        playbook,
        { step, stepIndex: index, page, ctx },
        { during: 'finish' },
      );
      if (signedIn.status === 'mfa_required')
        return { outcome: 'mfa_required', app: step.app, step: step.id, detail: signedIn.detail };
      probe = await probeWrite(step, page, ctx);
    }
    return probe.status === 'done'
      ? { outcome: 'done', evidence: probe.evidence }
      : { outcome: 'probed', probe };
  } catch (err) {
    if (!browserLost(attach.attached, err)) throw err;
    await deps.browser.detach(attach.attached.sessionId).catch(() => undefined);
    return {
      outcome: 'session_lost',
      app: step.app,
      detail: err instanceof Error ? err.message : String(err),
    };
  }
}

/**
 * A check that could not conclude on a write a person already said is done (the review of its
 * uncertain attempt, `resolution: done`, since its last intent): their word verifies it, as at
 * the step. The check asked what they answered, from the same page; asking them again would
 * only repeat the question, and a page whose text disagrees with its own data (a note saying
 * "not updated" beside the job's values) would ask it every time. A check that does conclude
 * (the write absent, or there twice) still goes to a person. Pure.
 */
export function settledByReviewer(
  entries: readonly LedgerEntry[],
  step: string,
  probe: ProbeResult,
): Evidence | undefined {
  if (probe.status !== 'unknown') return undefined;
  const reviewed = reviewedAsDone(entries, step);
  return reviewed ? { reviewedBy: reviewed.actor ?? 'reviewer', finishCheck: 'inconclusive' } : undefined;
}

/**
 * A write the check did not find exactly once: inconclusive, try again after a backoff
 * (recorded, so the count survives a new execution), a person after
 * {@link FINISH_CHECKS_BEFORE_REVIEW}; found twice or not at all, a person at once.
 */
async function notConcluded(
  deps: EngineDeps,
  job: Job,
  entries: readonly LedgerEntry[],
  step: Step,
  checked: Exclude<Checked, { outcome: 'done' }>,
): Promise<FinishResult> {
  if (checked.outcome !== 'probed') return checked;
  const { probe } = checked;
  const review = (reason: string, detail: string): FinishResult => ({
    outcome: 'needs_review',
    step: step.id,
    detail,
    wait: waitRequest(job, 'review', step.id, reason, deps.settings.parkAfterSeconds),
  });
  if (probe.status === 'duplicate') return review('duplicate', probe.detail);
  if (probe.status === 'absent') {
    return review(
      'not-found-at-finish',
      `verified at its step, but not found in its application now${probe.detail ? `: ${probe.detail}` : ''}`,
    );
  }
  const inconclusive = inconclusiveChecks(entries, step.id) + 1;
  if (inconclusive >= FINISH_CHECKS_BEFORE_REVIEW) {
    return review('inconclusive', `${inconclusive} checks could not conclude: ${probe.detail}`);
  }
  await deps.ledger.append(job.tenantId, job.jobId, {
    type: 'finish-check',
    step: step.id,
    detail: { finding: 'unknown', note: probe.detail, check: inconclusive },
    // Finish, FinishOutcome, FinishBackoff.
    cost: { lambdaInvocations: 1, stateTransitions: 3, dynamoWrites: 2 },
  });
  const retryAfterSeconds = Math.min(
    60,
    Math.max(1, deps.settings.retryBackoffSeconds) * 2 ** (inconclusive - 1),
  );
  return { outcome: 'retry', step: step.id, retryAfterSeconds, detail: probe.detail };
}

/** Inconclusive finish checks of `step` since a person last reviewed it. */
function inconclusiveChecks(entries: readonly LedgerEntry[], step: string): number {
  let count = 0;
  for (const e of entries) {
    if (e.step !== step) continue;
    if (e.type === 'finish-check') count++;
    else if (e.type === DECISION_ENTRY.review) count = 0;
  }
  return count;
}

/** A reviewer's answer to the finish check's review of `step`: who said it is done, `absent`, or none. */
function finishReview(entries: readonly LedgerEntry[], step: string): string | 'absent' | undefined {
  const decided = sinceWaitRequested(entries, 'review', step, DECISION_ENTRY.review);
  // Only a review the finish check asked for: one of the step's own (a changed page) is no verdict on it.
  const asked = entries.findLast((e) => e.step === step && e.type === 'review-requested');
  if (!decided || !FINISH_REASONS.has(String(asked?.detail?.reason))) return undefined;
  if (decided.detail?.resolution === 'absent') return 'absent';
  return decided.detail?.decision === 'approve' ? (decided.actor ?? 'reviewer') : undefined;
}

/** Why the finish check asks a person: the reasons of its reviews. */
const FINISH_REASONS: ReadonlySet<string> = new Set(['duplicate', 'not-found-at-finish', 'inconclusive']);

/**
 * The job may still show the wait a person just answered (the API clears it after it resumes
 * the execution): it goes back to RUNNING before it can succeed.
 */
async function runningAgain(deps: EngineDeps, job: Job): Promise<Job> {
  if (job.status === 'RUNNING') return job;
  await deps.ledger.clearWait(job.tenantId, job.jobId, {
    ...(job.wait ? { taskToken: job.wait.taskToken } : {}),
    to: 'RUNNING',
  });
  return deps.ledger.getJob(job.tenantId, job.jobId);
}
