import type { Page } from 'playwright-core';
import type { Attached } from '../lib/browser/types.ts';
import { keepLeaseAlive } from '../lib/capacity/keep-alive.ts';
import {
  afterCheckpoint,
  approvalNeeded,
  checkpointCost,
  needsApproval,
  writeCheckpoint,
} from '../lib/engine/checkpoint.ts';
import { accountFor, attachFor, browserLost, stepContext } from '../lib/engine/context.ts';
import {
  DeadlineExceededError,
  isStateMachineError,
  RetryBudgetExhaustedError,
} from '../lib/engine/errors.ts';
import { approvalDecision, hasOpenIntent, nextAttempt } from '../lib/engine/history.ts';
import { requestLease } from '../lib/engine/lease.ts';
import { resolveOpenIntent } from '../lib/engine/probe.ts';
import { MAX_SIGN_INS_PER_STEP, signInAgain, signInsSinceProgress } from '../lib/engine/sign-in.ts';
import type { EngineDeps, JobRef, StepOutcome } from '../lib/engine/types.ts';
import { waitRequest } from '../lib/engine/waits.ts';
import { reasonAfterStep } from '../lib/evidence/policy.ts';
import { takeScreenshot } from '../lib/evidence/take.ts';
import type { Evidence, Job, LedgerEntry, ScreenshotReason, ScreenshotRef } from '../lib/ledger/types.ts';
import { TERMINAL_STATUSES } from '../lib/ledger/types.ts';
import type { Playbook, PreconditionResult, Step, StepContext } from '../lib/playbooks/contract.ts';
import { ensureRunning, leaseLost } from './job-state.ts';

/**
 * Runs ONE step of a job, following the design's six points (one method each of {@link StepAttempt}):
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
    const attempt = await StepAttempt.read(deps, ref, lease.held);
    return attempt instanceof StepAttempt ? await attempt.run() : attempt;
  } finally {
    lease.stop();
  }
}

/** The step a job is at, read from the ledger (point 1), and its one attempt in this invocation. */
class StepAttempt {
  /** The job as this attempt last wrote it (the intent moves its version). */
  #current: Job;
  #page!: Page;
  #attached!: Attached;
  #ctx!: StepContext;
  #common!: {
    step: string;
    stepIndex: number;
    sessionId: string | undefined;
    identityId: string | undefined;
  };

  private constructor(
    private readonly deps: EngineDeps,
    private readonly job: Job,
    private readonly entries: readonly LedgerEntry[],
    private readonly playbook: Playbook,
    private readonly step: Step,
    private readonly stepIndex: number,
    private readonly started: number,
  ) {
    this.#current = job;
  }

  /**
   * 1. Read the job and its ledger. Returns the outcome at once when there is nothing to run
   * here (finished, cancelled, waiting for approval, lease lost), else the attempt.
   */
  static async read(
    deps: EngineDeps,
    ref: JobRef,
    leaseHeld: Promise<boolean>,
  ): Promise<StepAttempt | StepOutcome> {
    const started = deps.clock().getTime();
    const { job: loaded, entries } = await deps.ledger.readJob(ref.tenantId, ref.jobId);
    if (TERMINAL_STATUSES.includes(loaded.status)) return { outcome: 'stopped', status: loaded.status };
    if (loaded.deadline && Date.parse(loaded.deadline) < started)
      throw new DeadlineExceededError(loaded.deadline);

    const playbook = deps.playbooks.get(loaded.playbook);
    if (loaded.nextStep >= playbook.steps.length) {
      return { outcome: 'finished', step: playbook.steps.at(-1)?.id ?? '', stepCount: playbook.steps.length };
    }
    const step = playbook.steps[loaded.nextStep] as Step;
    if (needsApproval(loaded, step) && approvalDecision(entries, step.id) !== 'approve') {
      return approvalNeeded(deps, loaded, step.id, loaded.nextStep);
    }
    const job = await ensureRunning(deps, loaded);
    // Nothing renewed the job's lease for a whole TTL (a stalled execution): its slot may be
    // another job's now. It takes one again in its place in the queue, or gives its browsers back.
    if (!(await leaseHeld) && (await requestLease(deps, job)).outcome !== 'acquired') {
      return leaseLost(deps, job, step.id, job.nextStep, started);
    }
    return new StepAttempt(deps, job, entries, playbook, step, job.nextStep, started);
  }

  /** Points 2 to 6, in order; a failure of the page is classified, one of the engine's goes to the state machine. */
  async run(): Promise<StepOutcome> {
    const lost = await this.#reattach();
    if (lost) return lost;
    let outcome: StepOutcome;
    try {
      outcome =
        (await this.#resolveOpenIntent()) ??
        (await this.#checkPrecondition()) ??
        (await this.#verifyAndCheckpoint(await this.#writeIntentAndAct()));
    } catch (err) {
      outcome = await this.#classifyFailure(err);
    }
    // A person is asked to look: keep the page as it is now beside the question.
    if (outcome.outcome === 'layout_changed' || outcome.outcome === 'uncertain') {
      const screenshot = await this.#screenshot('before-review');
      if (screenshot) outcome.screenshot = screenshot;
    }
    return outcome;
  }

  /** The page now, masked and stored, if the playbook's screenshot policy keeps one at this moment. */
  #screenshot(reason: ScreenshotReason): Promise<ScreenshotRef | undefined> {
    return takeScreenshot(
      this.deps,
      this.#page,
      {
        tenantId: this.job.tenantId,
        jobId: this.job.jobId,
        playbook: this.playbook,
        step: this.step,
        stepIndex: this.stepIndex,
      },
      reason,
    );
  }

  /** 2. Reattach to the job's session for the step's application; a session that is gone is `session_lost`. */
  async #reattach(): Promise<StepOutcome | undefined> {
    const { deps, job, step } = this;
    const account = await accountFor(deps, job, step.app);
    const attach = await attachFor(deps, job, step.app);
    if (!attach.ok) return { outcome: 'session_lost', step: step.id, app: step.app, detail: attach.detail };
    this.#attached = attach.attached;
    this.#page = attach.attached.page;
    this.#ctx = stepContext(deps, job, this.playbook, step, this.stepIndex);
    this.#common = {
      step: step.id,
      stepIndex: this.stepIndex,
      sessionId: job.sessions[step.app]?.sessionId,
      identityId: account.identityId,
    };
    return undefined;
  }

  /** 3. The previous attempt of this write may or may not have happened: ask the application. */
  async #resolveOpenIntent(): Promise<StepOutcome | undefined> {
    const { step } = this;
    if (step.kind !== 'write' || !hasOpenIntent(this.entries, step.id)) return undefined;
    const resolved = await resolveOpenIntent(this.deps, {
      job: this.#current,
      entries: this.entries,
      playbook: this.playbook,
      stepIndex: this.stepIndex,
      page: this.#page,
      ctx: this.#ctx,
      sessionId: this.#common.sessionId,
      identityId: this.#common.identityId,
      startedMs: this.started,
      endsInvocation: false,
    });
    if (resolved.status === 'done')
      return afterCheckpoint(this.deps, this.playbook, resolved.job, this.stepIndex);
    if (resolved.status === 'unknown')
      return { outcome: 'uncertain', step: step.id, detail: resolved.detail };
    // absent: the attempt died before its effect; acting again (same idempotency key) is safe.
    return undefined;
  }

  /**
   * 4. Is the page where the step starts? After a person's decision the page may be hours old
   * (the site may have signed out or changed since): look at it fresh before judging it.
   * Signed out: sign in here, in this invocation (TOTP is handled by the sign-in; a code sent
   * to a person makes the job wait for them). Still not there: a lost browser, an expired
   * sign-in, or a changed layout (a person looks; nothing is guessed on a changed page).
   */
  async #checkPrecondition(): Promise<StepOutcome | undefined> {
    const { deps, job, step, entries } = this;
    const page = this.#page;
    if (resumedByPerson(entries)) await step.restore(page, this.#ctx);
    let pre = await precondition(step, page, this.#ctx);
    if (!pre.ok && pre.reason === 'signed_out' && !(await this.#browserGone())) {
      if (signInsSinceProgress(entries, step.id) >= MAX_SIGN_INS_PER_STEP) {
        return await this.#retryLater(SIGN_IN_DOES_NOT_HOLD);
      }
      const signedIn = await signInAgain(deps, job, this.playbook, {
        step,
        stepIndex: this.stepIndex,
        page,
        ctx: this.#ctx,
      });
      if (signedIn.status === 'mfa_required')
        return { outcome: 'mfa_required', step: step.id, app: step.app, detail: signedIn.detail };
      pre = await precondition(step, page, this.#ctx);
    }
    if (pre.ok) return undefined;
    // A dead browser shows no page at all: that is a lost session, not a changed layout.
    if (await this.#browserGone()) return this.#sessionLost('the browser went away');
    if (pre.reason === 'signed_out') return await this.#signedOut(pre.detail);
    return {
      outcome: 'layout_changed',
      step: step.id,
      detail: pre.detail,
      wait: waitRequest(job, 'review', step.id, 'layout_changed', deps.settings.parkAfterSeconds),
    };
  }

  /**
   * 5. For a write, the intent first (with the idempotency key, fenced by the job's version so
   * a stale worker cannot act); then the step's action and its verify.
   */
  async #writeIntentAndAct(): Promise<{ evidence: Evidence | null; actionMs: number }> {
    const { deps, step } = this;
    if (step.kind === 'write') {
      this.#current = await deps.ledger.updateJob(this.job.tenantId, this.job.jobId, {
        expectedVersion: this.#current.version,
        entry: {
          type: 'step-started',
          ...this.#common,
          attempt: nextAttempt(this.entries, step.id),
          idempotencyKey: this.#ctx.idempotencyKey,
          cost: { dynamoWrites: 2 },
        },
      });
    }
    await this.#ctx.faultPoint('before-action');
    const actionStarted = deps.clock().getTime();
    await step.run(this.#page, this.#ctx);
    const evidence = await step.verify(this.#page, this.#ctx);
    const actionMs = deps.clock().getTime() - actionStarted;
    await this.#ctx.faultPoint('after-action');
    return { evidence, actionMs };
  }

  /**
   * 6. Verified evidence advances the checkpoint in one transaction; none means a failure
   * (read: retry), an expired sign-in, a lost browser, or an unknown outcome (write).
   */
  async #verifyAndCheckpoint(acted: { evidence: Evidence | null; actionMs: number }): Promise<StepOutcome> {
    const { deps, step } = this;
    if (acted.evidence === null) {
      if (step.kind === 'write') {
        return {
          outcome: 'uncertain',
          step: step.id,
          detail: 'the write was not confirmed by the application',
        };
      }
      if (await this.#browserGone()) return this.#sessionLost('the browser went away');
      // The site sent the step to its sign-in page: an expired sign-in, not a failed step.
      if (await this.#isSignedOut()) return await this.#signedOut('signed out during the step');
      return await this.#retryLater('the step did not verify');
    }
    const next = this.playbook.steps[this.stepIndex + 1];
    const screenshot = await this.#screenshot(
      reasonAfterStep(step.kind, next !== undefined && needsApproval(this.#current, next)),
    );
    const elapsedMs = deps.clock().getTime() - this.started;
    const done = await writeCheckpoint(
      deps,
      {
        job: this.#current,
        playbook: this.playbook,
        stepIndex: this.stepIndex,
        attempt: nextAttempt(this.entries, step.id),
        sessionId: this.#common.sessionId,
        identityId: this.#common.identityId,
        screenshot,
      },
      acted.evidence,
      checkpointCost(elapsedMs, acted.actionMs),
    );
    return afterCheckpoint(deps, this.playbook, done, this.stepIndex);
  }

  /** Something threw during points 3-6: the browser died, the engine refused, or the page misbehaved. */
  async #classifyFailure(err: unknown): Promise<StepOutcome> {
    if (browserLost(this.#attached, err)) {
      await this.deps.browser.detach(this.#attached.sessionId).catch(() => undefined);
      return this.#sessionLost(describe(err));
    }
    if (isStateMachineError(err)) throw err;
    // The page misbehaved mid-action: classify from what it shows now.
    if (await this.#isSignedOut()) return await this.#signedOut(describe(err));
    // The intent was written in this invocation (the job's version moved), so the write may have happened.
    if (this.step.kind === 'write' && this.#current.version !== this.job.version) {
      return { outcome: 'uncertain', step: this.step.id, detail: describe(err) };
    }
    return await this.#retryLater(describe(err));
  }

  #sessionLost(detail: string): StepOutcome {
    return { outcome: 'session_lost', step: this.step.id, app: this.step.app, detail };
  }

  /** The session's browser is gone (disconnected, or ended in the browser service). */
  async #browserGone(): Promise<boolean> {
    if (!this.#attached.browser.isConnected()) return true;
    return !(await this.deps.browser.isAlive(this.#attached.sessionId).catch(() => true));
  }

  async #isSignedOut(): Promise<boolean> {
    return (
      (await this.playbook.applications[this.step.app]?.isSignedOut(this.#page).catch(() => false)) === true
    );
  }

  /**
   * The site signed the account out: sign in again (Reauthenticate) at no cost to the retry
   * budget, unless the sign-in keeps not holding for this step (then it is a failed attempt).
   */
  async #signedOut(detail: string): Promise<StepOutcome> {
    if (signInsSinceProgress(this.entries, this.step.id) >= MAX_SIGN_INS_PER_STEP) {
      return this.#retryLater(SIGN_IN_DOES_NOT_HOLD);
    }
    return { outcome: 'auth_expired', step: this.step.id, app: this.step.app, detail };
  }

  /** A failed attempt: it spends the retry budget (or fails the job when spent) and backs off. */
  async #retryLater(detail: string): Promise<StepOutcome> {
    const { deps } = this;
    const job = this.#current;
    const used = job.retriesUsed + 1;
    if (used > job.retryBudget) throw new RetryBudgetExhaustedError(this.step.id, job.retriesUsed, detail);
    const screenshot = await this.#screenshot('on-failure');
    const after = await deps.ledger.updateJob(job.tenantId, job.jobId, {
      expectedVersion: job.version,
      set: { retriesUsed: used },
      entry: {
        type: 'step-failed',
        step: this.step.id,
        detail: { reason: detail, retriesUsed: used },
        cost: { dynamoWrites: 2 },
        ...(screenshot ? { screenshot } : {}),
      },
    });
    const backoff = Math.min(60, deps.settings.retryBackoffSeconds * 2 ** Math.max(0, after.retriesUsed - 1));
    return { outcome: 'retry', step: this.step.id, retryAfterSeconds: backoff, detail };
  }
}

/** The step's precondition, after bringing the page back to where the step starts when it is elsewhere. */
async function precondition(step: Step, page: Page, ctx: StepContext): Promise<PreconditionResult> {
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

const SIGN_IN_DOES_NOT_HOLD = `signed out again after ${MAX_SIGN_INS_PER_STEP} sign-ins for this step`;

function describe(err: unknown): string {
  const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return message.split('\n')[0]?.slice(0, 300) ?? 'unknown error';
}
