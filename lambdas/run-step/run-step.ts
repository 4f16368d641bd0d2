import type { Page } from 'playwright-core';
import { SessionUnavailableError } from '../lib/browser/errors.ts';
import type { Attached } from '../lib/browser/types.ts';
import { keepLeaseAlive } from '../lib/capacity/keep-alive.ts';
import { parkSessions } from '../lib/engine/cleanup.ts';
import { accountFor, attachFor, browserLost, stepContext } from '../lib/engine/context.ts';
import {
  AccountRevokedError,
  DeadlineExceededError,
  JobConfigurationError,
  RetryBudgetExhaustedError,
} from '../lib/engine/errors.ts';
import { approvalDecision, hasOpenIntent, nextAttempt, reviewedAsDone } from '../lib/engine/history.ts';
import { requestLease } from '../lib/engine/lease.ts';
import { MAX_SIGN_INS_PER_STEP, signInAgain, signInsSinceProgress } from '../lib/engine/sign-in.ts';
import type { EngineDeps, JobRef, StepOutcome } from '../lib/engine/types.ts';
import { waitRequest } from '../lib/engine/waits.ts';
import {
  IllegalTransitionError,
  JobNotFoundError,
  LedgerUnavailableError,
  StaleCheckpointError,
} from '../lib/ledger/errors.ts';
import type { Cost, Evidence, Job, LedgerEntry } from '../lib/ledger/types.ts';
import { TERMINAL_STATUSES } from '../lib/ledger/types.ts';
import type { Playbook, PreconditionResult, Step, StepContext } from '../lib/playbooks/contract.ts';

/**
 * Runs ONE step of a job, following the design's six points:
 * 1. read job + ledger (stop if finished or cancelled; check the account is still the tenant's;
 *    a job whose lease expired takes one again, or waits in the queue: `lease_lost`);
 * 2. reattach to the job's session for the step's application (cached connection when warm);
 * 3. a write with an intent and no completion: probe the application before anything else;
 * 4. precondition (wrong page -> restore; signed out -> sign in here, a person's one-time code ->
 *    mfa_required; changed layout -> layout_changed);
 * 5. for a write, write the intent (with its idempotency key) before acting; then act;
 * 6. verify, then ONE transaction: completion entry + advance the pointer + cost.
 * It returns what the state machine should do next, so the happy path costs two transitions.
 */
export async function runStep(deps: EngineDeps, ref: JobRef): Promise<StepOutcome> {
  // A live holder keeps its browser lease for as long as the step runs (see keepLeaseAlive).
  const lease = keepLeaseAlive(deps, ref.tenantId, ref.jobId);
  try {
    return await runOneStep(deps, ref, lease.held);
  } finally {
    lease.stop();
  }
}

async function runOneStep(deps: EngineDeps, ref: JobRef, leaseHeld: Promise<boolean>): Promise<StepOutcome> {
  const started = deps.clock().getTime();
  const { job: loaded, entries } = await deps.ledger.readJob(ref.tenantId, ref.jobId);
  if (TERMINAL_STATUSES.includes(loaded.status)) return { outcome: 'stopped', status: loaded.status };
  if (loaded.deadline && Date.parse(loaded.deadline) < started)
    throw new DeadlineExceededError(loaded.deadline);

  const playbook = deps.playbooks.get(loaded.playbook);
  if (loaded.nextStep >= playbook.steps.length) {
    return { outcome: 'finished', step: playbook.steps.at(-1)?.id ?? '', stepCount: playbook.steps.length };
  }
  const pending = playbook.steps[loaded.nextStep] as Step;
  if (needsApproval(loaded, pending) && approvalDecision(entries, pending.id) !== 'approve') {
    return approvalNeeded(deps, loaded, pending.id, loaded.nextStep);
  }
  const job = await ensureRunning(deps, loaded);
  const stepIndex = job.nextStep;
  const step = pending;
  // Nothing renewed the job's lease for a whole TTL (a stalled execution): its slot may be
  // another job's now. It takes one again in its place in the queue, or gives its browsers back.
  if (!(await leaseHeld) && (await requestLease(deps, job)).outcome !== 'acquired') {
    return leaseLost(deps, job, step.id, stepIndex, started);
  }

  const account = await accountFor(deps, job, step.app);
  const attach = await attachFor(deps, job, step.app);
  if (!attach.ok) return { outcome: 'session_lost', step: step.id, app: step.app, detail: attach.detail };
  const { attached } = attach;
  const page = attached.page;
  const ctx = stepContext(deps, job, playbook, step, stepIndex);
  const session = job.sessions[step.app];
  const common = { step: step.id, stepIndex, sessionId: session?.sessionId, identityId: account.identityId };

  let current = job;
  const attempt = nextAttempt(entries, step.id);
  try {
    // 3. The previous attempt of this write may or may not have happened: ask the application.
    if (step.kind === 'write' && hasOpenIntent(entries, step.id)) {
      const reviewed = reviewedAsDone(entries, step.id);
      if (reviewed) {
        return await complete(
          deps,
          current,
          playbook,
          stepIndex,
          { reviewedBy: reviewed.actor ?? 'reviewer' },
          started,
          {
            ...common,
            attempt: attempt - 1,
            reconciled: true,
          },
        );
      }
      const probe = await requireProbe(step)(page, ctx);
      if (probe.status === 'done') {
        return await complete(deps, current, playbook, stepIndex, probe.evidence, started, {
          ...common,
          attempt: attempt - 1,
          reconciled: true,
        });
      }
      if (probe.status === 'unknown') return { outcome: 'uncertain', step: step.id, detail: probe.detail };
      // absent: the attempt died before its effect; acting again (same idempotency key) is safe.
      await deps.ledger.append(job.tenantId, job.jobId, {
        type: 'reconciled',
        ...common,
        attempt: attempt - 1,
        detail: { probe: 'absent', ...(probe.detail ? { note: probe.detail } : {}) },
        cost: { dynamoWrites: 2 },
      });
    }

    // 4. Is the page where the step starts? After a person's decision the page may be hours
    // old (the site may have signed out or changed since): look at it fresh before judging it.
    if (resumedByPerson(entries)) await step.restore(page, ctx);
    let pre = await checkPrecondition(step, page, ctx);
    if (!pre.ok && pre.reason === 'signed_out' && !(await browserGone(deps, attached))) {
      // Signed out (the job's first sign-in, or the site's expired): sign in here, in this
      // invocation, rather than through a state of its own. TOTP is handled by the sign-in;
      // a code sent to a person makes the job wait for them.
      if (signInsSinceProgress(entries, step.id) >= MAX_SIGN_INS_PER_STEP) {
        return await retryLater(deps, current, step, SIGN_IN_DOES_NOT_HOLD);
      }
      const signedIn = await signInAgain(deps, job, playbook, { step, stepIndex, page, ctx });
      if (signedIn.status === 'mfa_required')
        return { outcome: 'mfa_required', step: step.id, app: step.app, detail: signedIn.detail };
      pre = await checkPrecondition(step, page, ctx);
    }
    if (!pre.ok) {
      // A dead browser shows no page at all: that is a lost session, not a changed layout.
      if (await browserGone(deps, attached))
        return { outcome: 'session_lost', step: step.id, app: step.app, detail: 'the browser went away' };
      if (pre.reason === 'signed_out') return await signedOut(deps, current, entries, step, pre.detail);
      return {
        outcome: 'layout_changed',
        step: step.id,
        detail: pre.detail,
        wait: waitRequest(job, 'review', step.id, 'layout_changed', deps.settings.parkAfterSeconds),
      };
    }

    // 5. Intent before any side effect; fenced by the job's version, so a stale worker cannot act.
    if (step.kind === 'write') {
      current = await deps.ledger.updateJob(job.tenantId, job.jobId, {
        expectedVersion: current.version,
        entry: {
          type: 'step-started',
          ...common,
          attempt,
          idempotencyKey: ctx.idempotencyKey,
          cost: { dynamoWrites: 2 },
        },
      });
    }
    await ctx.faultPoint('before-action');
    const actionStarted = deps.clock().getTime();
    const evidence = await act(step, page, ctx);
    const actionMs = deps.clock().getTime() - actionStarted;
    await ctx.faultPoint('after-action');

    // 6. Verified evidence advances the checkpoint; none means a failure (read) or an unknown outcome (write).
    if (evidence === null) {
      if (step.kind === 'write') {
        return {
          outcome: 'uncertain',
          step: step.id,
          detail: 'the write was not confirmed by the application',
        };
      }
      if (await browserGone(deps, attached))
        return { outcome: 'session_lost', step: step.id, app: step.app, detail: 'the browser went away' };
      // The site sent the step to its sign-in page: an expired sign-in, not a failed step.
      if (await playbook.applications[step.app]?.isSignedOut(page).catch(() => false))
        return await signedOut(deps, current, entries, step, 'signed out during the step');
      return await retryLater(deps, current, step, 'the step did not verify');
    }
    return await complete(deps, current, playbook, stepIndex, evidence, started, {
      ...common,
      attempt,
      actionMs,
    });
  } catch (err) {
    if (browserLost(attached, err)) {
      await deps.browser.detach(attached.sessionId).catch(() => undefined);
      return { outcome: 'session_lost', step: step.id, app: step.app, detail: describe(err) };
    }
    if (isDomainError(err)) throw err;
    // The page misbehaved mid-action: classify from what it shows now.
    const isSignedOut = await playbook.applications[step.app]?.isSignedOut(page).catch(() => false);
    if (isSignedOut) return await signedOut(deps, current, entries, step, describe(err));
    if (step.kind === 'write' && hasOpenIntentAfter(current, job)) {
      return { outcome: 'uncertain', step: step.id, detail: describe(err) };
    }
    return await retryLater(deps, current, step, describe(err));
  }
}

/** The step's precondition, after bringing the page back to where the step starts when it is elsewhere. */
async function checkPrecondition(step: Step, page: Page, ctx: StepContext): Promise<PreconditionResult> {
  const pre = await step.precondition(page, ctx);
  if (pre.ok || pre.reason !== 'wrong_page') return pre;
  await step.restore(page, ctx);
  return step.precondition(page, ctx);
}

/** A person decided (approval, review) or completed a sign-in since the last checkpoint. */
function resumedByPerson(entries: readonly LedgerEntry[]): boolean {
  for (let i = entries.length - 1; i >= 0; i--) {
    const type = entries[i]?.type;
    if (type === 'step-completed') return false;
    if (type === 'approval-recorded' || type === 'review-recorded' || type === 'mfa-completed') return true;
  }
  return false;
}

/** The session's browser is gone (disconnected, or ended in the browser service). */
async function browserGone(deps: EngineDeps, attached: Attached): Promise<boolean> {
  if (!attached.browser.isConnected()) return true;
  return !(await deps.browser.isAlive(attached.sessionId).catch(() => true));
}

/** A job resumed by a person (or a new execution) may still show its waiting or queued status. */
async function ensureRunning(deps: EngineDeps, job: Job): Promise<Job> {
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
async function leaseLost(
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

/** The next step waits for a person's approval: the wait the state machine arms. */
function approvalNeeded(deps: EngineDeps, job: Job, step: string, stepIndex: number): StepOutcome {
  const wait = waitRequest(job, 'approval', step, 'needs_approval', deps.settings.parkAfterSeconds);
  return { outcome: 'needs_approval', step, stepIndex, wait };
}

function needsApproval(job: Job, step: Step): boolean {
  return step.needsApproval === true || job.approvals.includes(step.id);
}

function requireProbe(step: Step): NonNullable<Step['probe']> {
  if (!step.probe) throw new TypeError(`write step ${step.id} has no probe`);
  return step.probe.bind(step);
}

async function act(step: Step, page: Page, ctx: StepContext): Promise<Evidence | null> {
  await step.run(page, ctx);
  return step.verify(page, ctx);
}

/** The intent was written in this invocation (the job's version moved), so the write may have happened. */
function hasOpenIntentAfter(current: Job, before: Job): boolean {
  return current.version !== before.version;
}

async function complete(
  deps: EngineDeps,
  job: Job,
  playbook: Playbook,
  stepIndex: number,
  evidence: Evidence,
  startedMs: number,
  meta: {
    step: string;
    attempt: number;
    sessionId?: string;
    identityId?: string;
    reconciled?: boolean;
    /** Time the step's own browser work took (run + verify); the rest of the invocation is coordination. */
    actionMs?: number;
  },
): Promise<StepOutcome> {
  const step = playbook.steps[stepIndex] as Step;
  const elapsedMs = deps.clock().getTime() - startedMs;
  const cost: Partial<Cost> = {
    lambdaInvocations: 1,
    lambdaMs: elapsedMs,
    browserSeconds: (meta.actionMs ?? elapsedMs) / 1000,
    stateTransitions: 2,
    dynamoWrites: 2,
  };
  const pending = deps.ledger.completeStep({
    tenantId: job.tenantId,
    jobId: job.jobId,
    expectedVersion: job.version,
    stepIndex,
    step: step.id,
    attempt: Math.max(1, meta.attempt),
    sessionId: meta.sessionId,
    identityId: meta.identityId,
    idempotencyKey: step.kind === 'write' ? `${job.jobId}:${step.id}` : undefined,
    evidence: meta.reconciled ? { ...evidence, reconciled: true } : evidence,
    cost,
  });
  // A kill here lands while the transaction is in flight: it either committed or it did not.
  const [done] = await Promise.all([
    pending,
    deps.faultPoint('during-checkpoint', { jobId: job.jobId, step: step.id, stepIndex }),
  ]);
  const next = done.nextStep;
  if (next >= playbook.steps.length)
    return { outcome: 'finished', step: step.id, stepCount: playbook.steps.length };
  const nextStep = playbook.steps[next] as Step;
  if (needsApproval(done, nextStep)) return approvalNeeded(deps, done, nextStep.id, next);
  return { outcome: 'completed', step: step.id, stepIndex, nextStep: next, stepCount: playbook.steps.length };
}

async function spendRetry(deps: EngineDeps, job: Job, step: string, detail: string): Promise<Job> {
  const used = job.retriesUsed + 1;
  if (used > job.retryBudget) throw new RetryBudgetExhaustedError(step, job.retriesUsed, detail);
  return deps.ledger.updateJob(job.tenantId, job.jobId, {
    expectedVersion: job.version,
    set: { retriesUsed: used },
    entry: {
      type: 'step-failed',
      step,
      detail: { reason: detail, retriesUsed: used },
      cost: { dynamoWrites: 2 },
    },
  });
}

const SIGN_IN_DOES_NOT_HOLD = `signed out again after ${MAX_SIGN_INS_PER_STEP} sign-ins for this step`;

/**
 * The site signed the account out: sign in again (Reauthenticate) at no cost to the retry
 * budget, unless the sign-in keeps not holding for this step (then it is a failed attempt).
 */
async function signedOut(
  deps: EngineDeps,
  job: Job,
  entries: readonly LedgerEntry[],
  step: Step,
  detail: string,
): Promise<StepOutcome> {
  if (signInsSinceProgress(entries, step.id) >= MAX_SIGN_INS_PER_STEP) {
    return retryLater(deps, job, step, SIGN_IN_DOES_NOT_HOLD);
  }
  return { outcome: 'auth_expired', step: step.id, app: step.app, detail };
}

async function retryLater(deps: EngineDeps, job: Job, step: Step, detail: string): Promise<StepOutcome> {
  const after = await spendRetry(deps, job, step.id, detail);
  const backoff = Math.min(60, deps.settings.retryBackoffSeconds * 2 ** Math.max(0, after.retriesUsed - 1));
  return { outcome: 'retry', step: step.id, retryAfterSeconds: backoff, detail };
}

function describe(err: unknown): string {
  const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return message.split('\n')[0]?.slice(0, 300) ?? 'unknown error';
}

/**
 * Errors with a meaning of their own (ledger conflicts, revoked accounts, budgets) go to the
 * state machine as they are; anything else thrown during a step is the page misbehaving.
 */
const STATE_MACHINE_ERRORS = [
  StaleCheckpointError,
  LedgerUnavailableError,
  JobNotFoundError,
  IllegalTransitionError,
  AccountRevokedError,
  RetryBudgetExhaustedError,
  SessionUnavailableError,
  DeadlineExceededError,
  JobConfigurationError,
];

function isDomainError(err: unknown): boolean {
  return STATE_MACHINE_ERRORS.some((kind) => err instanceof kind);
}
