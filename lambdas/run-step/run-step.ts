import type { Page } from 'playwright-core';
import { agentCountersByStep, type CountedEntry } from '../lib/agent/counters.ts';
import { HealAfterWriteError } from '../lib/agent/errors.ts';
import { sensitiveInputs, withValuesHidden } from '../lib/agent/model-view.ts';
import type { AgentSpec } from '../lib/agent/step-options.ts';
import { pageDownloads } from '../lib/browser/downloads.ts';
import { responseExcerpt } from '../lib/browser/response-excerpt.ts';
import type { Attached } from '../lib/browser/types.ts';
import type { WriteGuardReport } from '../lib/browser/write-guard.ts';
import { keepLeaseAlive } from '../lib/capacity/keep-alive.ts';
import { classifyRequests, commitLimit, committingRequest, type SentRequest } from '../lib/commits.ts';
import { evidenceBeforeAction } from '../lib/engine/before-action.ts';
import { applyCancel } from '../lib/engine/cancel.ts';
import {
  afterCheckpoint,
  approvalNeeded,
  checkpointCost,
  needsApproval,
  writeCheckpoint,
} from '../lib/engine/checkpoint.ts';
import { accountFor, attachFor, browserLost, stepContext } from '../lib/engine/context.ts';
import {
  approvesEffect,
  type EffectApproval,
  effectApproval,
  effectChanges,
  type SealedEffect,
  sealEffect,
} from '../lib/engine/effect-approval.ts';
import {
  DeadlineExceededError,
  DriftFoundError,
  isStateMachineError,
  JobConfigurationError,
  RetryBudgetExhaustedError,
} from '../lib/engine/errors.ts';
import { approvalDecision, hasOpenIntent, nextAttempt } from '../lib/engine/history.ts';
import { requestLease } from '../lib/engine/lease.ts';
import { duplicateFound, resolveOpenIntent } from '../lib/engine/probe.ts';
import { MAX_SIGN_INS_PER_STEP, signInAgain, signInsSinceProgress } from '../lib/engine/sign-in.ts';
import { liveStepActions, modelCallAppender } from '../lib/engine/step-actions.ts';
import { type StepCacheSession, stepCacheSession } from '../lib/engine/step-cache.ts';
import type { EngineDeps, JobRef, StepOutcome } from '../lib/engine/types.ts';
import {
  AGENT_QUESTION_REASON,
  takeoverWaitRequest,
  takeoverWaitSeconds,
  waitRequest,
} from '../lib/engine/waits.ts';
import { keepWriteOwned, newWriteOwner, type OwnedWrite } from '../lib/engine/write-owner.ts';
import { reasonAfterStep } from '../lib/evidence/policy.ts';
import { takeScreenshot } from '../lib/evidence/take.ts';
import type { Evidence, Job, LedgerEntry, ScreenshotReason, ScreenshotRef } from '../lib/ledger/types.ts';
import { TERMINAL_STATUSES } from '../lib/ledger/types.ts';
import type {
  ActionEntryInput,
  Playbook,
  PreconditionResult,
  Step,
  StepContext,
} from '../lib/playbooks/contract.ts';
import { effectOf, unprovenReason } from '../lib/playbooks/effects.ts';
import { PersonAskedError, StepConfigurationError, TakeoverRequestedError } from '../lib/playbooks/errors.ts';
import { ensureRunning, leaseLost } from './job-state.ts';

/**
 * Runs ONE step of a job, following the design's six points (one method each of {@link StepAttempt}):
 * 1. read job + ledger (stop if finished or cancelled; check the account is still the tenant's;
 *    a job whose lease expired takes one again, or waits in the queue: `lease_lost`);
 * 2. reattach to the job's session for the step's application (cached connection when warm);
 * 3. a write with an intent and no completion: probe the application before anything else;
 * 4. precondition (wrong page -> restore; signed out -> sign in here, a person's one-time code ->
 *    mfa_required; changed layout -> layout_changed); for a write, what its verify already reads
 *    before the action (a write that sets a value already set is done without acting);
 * 5. for a write, write the intent (with its idempotency key) before acting; then act;
 * 6. verify (a write that creates must show evidence that was not there before the action),
 *    then ONE transaction: completion entry + advance the pointer + cost.
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
  /** The write this attempt owns (from its intent on), whose heartbeat runs until the invocation ends. */
  #owned: OwnedWrite | undefined;
  /** Cancelled, or past the deadline: only the write in flight is settled, then the job stops. */
  #stopAfterSettling: { cancel: true } | { deadline: string } | undefined;
  /** This attempt wrote the step's checkpoint (its own, or the one its probe found the write for). */
  #checkpointed = false;
  /** The action cache as this attempt's agent step uses it; settled once the outcome is known. */
  #cache!: StepCacheSession;
  /** The attempt's cache was kept in its `step-unconfirmed` entry, to be settled with the write. */
  #cachePending = false;
  /** When the write's committing action began (its last action, or the step's run): what the page sent before is its own. */
  #commitFrom: string | undefined;
  /** A write approved on its effect was prepared, and its effect is the one approved: only its commit is left. */
  #prepared = false;
  /** A write's verify as read just before its action (null: it did not hold); undefined for reads. */
  #before: Evidence | null | undefined;
  /** The action entries this invocation wrote (the step's counters add them to the ledger's). */
  readonly #written: CountedEntry[] = [];
  /** The write guard's report, once the step's action ended (a throw included). */
  #guarded: WriteGuardReport | undefined;

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
    const playbook = deps.playbooks.get(loaded.playbook);
    const pending = playbook.steps[loaded.nextStep];
    const pastDeadline = loaded.deadline !== undefined && Date.parse(loaded.deadline) < started;
    // Past its deadline the job does nothing more, but a write in flight is settled first: the
    // ledger must say whether it happened.
    const inFlight = pending?.kind === 'write' && hasOpenIntent(entries, pending.id);
    // Cancelled while a write was in flight: with nothing in flight (any more), cancel now.
    if (loaded.cancelRequested && !inFlight) {
      await applyCancel(deps, loaded, 'no write in flight');
      return { outcome: 'cancelled', step: pending?.id ?? '' };
    }
    if (pastDeadline && !inFlight) throw new DeadlineExceededError(loaded.deadline as string);

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
    const attempt = new StepAttempt(deps, job, entries, playbook, step, job.nextStep, started);
    attempt.#stopAfterSettling = loaded.cancelRequested
      ? { cancel: true }
      : pastDeadline
        ? { deadline: loaded.deadline as string }
        : undefined;
    return attempt;
  }

  /** Points 2 to 6, in order; a failure of the page is classified, one of the engine's goes to the state machine. */
  async run(): Promise<StepOutcome> {
    const lost = await this.#reattach();
    if (lost) return lost;
    let outcome: StepOutcome;
    try {
      outcome = this.#stopAfterSettling
        ? await this.#settleThenStop(this.#stopAfterSettling)
        : this.job.mode === 'check'
          ? await this.#check()
          : ((await this.#resolveOpenIntent()) ??
            (await this.#checkPrecondition()) ??
            (await this.#checkBeforeAction()) ??
            (await this.#approveEffect()) ??
            (await this.#verifyAndCheckpoint(await this.#writeIntentAndAct())));
    } catch (err) {
      outcome = await this.#classifyFailure(err);
    } finally {
      // The write's owner ends with its invocation: another attempt need not wait for it.
      await this.#owned?.end(this.#checkpointed);
    }
    await this.#settleCache(outcome);
    // A person is asked to look: keep the page as it is now beside the question.
    if (
      outcome.outcome === 'layout_changed' ||
      outcome.outcome === 'uncertain' ||
      outcome.outcome === 'needs_review' ||
      outcome.outcome === 'takeover_requested'
    ) {
      const screenshot = await this.#screenshot('before-review');
      if (screenshot) outcome.screenshot = screenshot;
    }
    return outcome;
  }

  /**
   * The action cache after the attempt: a verified step's action list is kept (its completion
   * is in the ledger by now); an attempt that ran from an entry and failed (a failed attempt,
   * an unconfirmed write) demotes it. A lost browser or sign-in says nothing about the entry.
   * The cache never fails a step: an error here is logged and the next job asks the model.
   */
  async #settleCache(outcome: StepOutcome): Promise<void> {
    const failed = outcome.outcome === 'retry' || outcome.outcome === 'uncertain';
    if (!this.#checkpointed && !failed) return;
    // An unconfirmed write's cache waits in its entry for the probe (`settlePending`).
    if (!this.#checkpointed && this.#cachePending) return;
    const reason = 'detail' in outcome ? outcome.detail : outcome.outcome;
    try {
      const settled = await this.#cache.settle(this.#checkpointed, reason);
      if (settled !== 'none') this.deps.log.info('action cache', { step: this.step.id, cache: settled });
    } catch (err) {
      this.deps.log.warn('the action cache could not be updated', {
        step: this.step.id,
        error: describe(err),
      });
    }
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

  /**
   * Cancelled, or past the deadline, with a write in flight: its probe records whether it
   * happened; then the job stops (a finding a person must settle, or an owner still running,
   * comes first).
   */
  async #settleThenStop(stop: { cancel: true } | { deadline: string }): Promise<StepOutcome> {
    const settled = await this.#resolveOpenIntent();
    const moved =
      settled === undefined || ['completed', 'finished', 'needs_approval'].includes(settled.outcome);
    if (!moved) return settled as StepOutcome;
    if ('deadline' in stop) throw new DeadlineExceededError(stop.deadline);
    // The job as settling it left it (its checkpoint, or the probe's `reconciled` entry).
    await applyCancel(
      this.deps,
      this.#current,
      settled ? 'the write was done' : 'the write had not happened',
    );
    return { outcome: 'cancelled', step: this.step.id };
  }

  /** 2. Reattach to the job's session for the step's application; a session that is gone is `session_lost`. */
  async #reattach(): Promise<StepOutcome | undefined> {
    const { deps, job, step } = this;
    const account = await accountFor(deps, job, step.app);
    const attach = await attachFor(deps, job, step.app);
    if (!attach.ok) return { outcome: 'session_lost', step: step.id, app: step.app, detail: attach.detail };
    this.#attached = attach.attached;
    this.#page = attach.attached.page;
    this.#cache = stepCacheSession(
      deps.actionCache,
      { tenantId: job.tenantId, playbookId: this.playbook.id },
      job.jobId,
      {},
      this.playbook.actionCache,
    );
    // The step's own record (agent steps): each entry fenced by the job's version, like the intent.
    const actions = liveStepActions(
      job,
      this.entries,
      step.id,
      { write: (entry) => this.#recordAction(entry) },
      this.#cache.port,
      modelCallAppender(deps.ledger, job, step, this.stepIndex),
    );
    // A download is the one this step's click starts in this page, saved in this session's folder.
    const downloads = { sessionId: attach.attached.sessionId, capture: pageDownloads(attach.attached.page) };
    this.#ctx = stepContext(deps, job, this.playbook, step, this.stepIndex, this.entries, actions, downloads);
    this.#common = {
      step: step.id,
      stepIndex: this.stepIndex,
      sessionId: job.sessions[step.app]?.sessionId,
      identityId: account.identityId,
    };
    return undefined;
  }

  /** An agent step's entry about one of its actions, written before the action runs. */
  async #recordAction(entry: ActionEntryInput): Promise<void> {
    this.#current = await this.deps.ledger.updateJob(this.job.tenantId, this.job.jobId, {
      expectedVersion: this.#current.version,
      entry: {
        type: entry.type,
        ...this.#common,
        attempt: nextAttempt(this.entries, this.step.id),
        detail: entry.detail,
        cost: { dynamoWrites: 2, ...entry.cost },
      },
    });
    this.#written.push({
      type: entry.type,
      step: this.step.id,
      detail: entry.detail,
      cost: entry.cost ?? {},
    });
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
    if (resolved.status === 'done') {
      this.#current = resolved.job;
      this.#checkpointed = true;
      return afterCheckpoint(this.deps, this.playbook, resolved.job, this.stepIndex);
    }
    if (resolved.status === 'unknown')
      return { outcome: 'uncertain', step: step.id, detail: resolved.detail };
    if (resolved.status === 'duplicate') return duplicateFound(this.deps, this.job, step.id, resolved.detail);
    if (resolved.status === 'owner_active') {
      const detail = 'an earlier attempt of this write may still be running: waiting for it before acting';
      return { outcome: 'retry', step: step.id, retryAfterSeconds: resolved.retryAfterSeconds, detail };
    }
    // absent: the attempt died before its effect; acting again (same idempotency key) is safe.
    this.#current = resolved.job;
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
   * 4, end. A write's verify, read-only, on the page as the step is about to act: what already
   * holds proves nothing about this job's write. A write that sets state and already holds is done
   * without acting (`alreadySatisfied`: no write of this job); one that creates keeps what it saw,
   * so that evidence already there cannot complete it (point 6).
   */
  async #checkBeforeAction(): Promise<StepOutcome | undefined> {
    if (this.step.kind !== 'write') return undefined;
    this.#before = await evidenceBeforeAction(this.step, this.#page, this.#ctx);
    this.#ctx.beforeAction = { evidence: this.#before };
    if (this.#before === null || effectOf(this.step) !== 'sets') return undefined;
    this.deps.log.info('the write is already satisfied: done without acting', { step: this.step.id });
    return await this.#checkpoint(this.#before, undefined, { alreadySatisfied: true });
  }

  /**
   * A drift check's step: its precondition (signing in as a job would), then a read is run and
   * verified, and a write is checked up to its commit (its verify read before the action,
   * prepared, the commit's element there) with every unsafe request refused, never committed. A step as expected is checkpointed with what was checked; one that is not is
   * recorded (`step-checked`, a screenshot) and ends the check (DriftFoundError). A step that
   * reads the evidence of a write the check did not make is skipped.
   */
  async #check(): Promise<StepOutcome> {
    const { deps, step } = this;
    const started = deps.clock().getTime();
    let finding: { result: string; detail: string } | undefined;
    let evidence: Evidence = {};
    const skipped = (step.readsEvidenceOf ?? []).find(
      (id) => this.playbook.steps.find((s) => s.id === id)?.kind === 'write',
    );
    let refused: string[] = [];
    if (skipped) {
      finding = {
        result: 'skipped',
        detail: `it reads the evidence of ${skipped}, a write a check does not make`,
      };
    } else {
      const pre = await this.#checkPrecondition();
      if (pre?.outcome === 'session_lost' || pre?.outcome === 'retry') return pre;
      if (pre)
        finding = {
          result: pre.outcome === 'layout_changed' ? 'layout-changed' : 'signed-out',
          detail: 'detail' in pre && pre.detail ? pre.detail : pre.outcome,
        };
      else {
        // A write's own action is what must send nothing; a read (a cart, a search form) may post as it always does.
        const refusing = step.kind === 'write' ? await this.#attached.refuseWrites() : undefined;
        try {
          if (step.kind === 'read') {
            await step.run(this.#page, this.#ctx);
            const verified = await step.verify(this.#page, this.#ctx);
            if (verified) evidence = verified;
            else
              finding = {
                result: 'not-verified',
                detail:
                  'the page does not show what the step expects after its action (its layout may have changed)',
              };
          } else {
            const before = await evidenceBeforeAction(step, this.#page, this.#ctx);
            if (step.prepare) await step.prepare(this.#page, this.#ctx);
            const missing =
              step.prepare && step.commitMissing ? await step.commitMissing(this.#page, this.#ctx) : null;
            if (missing) finding = { result: 'layout-changed', detail: missing };
            evidence = {
              checked: step.prepare ? 'up-to-commit' : 'up-to-start',
              ...(before ? { heldBefore: true } : {}),
            };
          }
        } catch (err) {
          if (browserLost(this.#attached, err)) return this.#sessionLost(describe(err));
          finding = { result: 'failed', detail: describe(err) };
        } finally {
          refused = refusing?.end() ?? [];
        }
      }
    }
    // Refused requests are kept with the step: the page's own (a heartbeat) or its action's, none went.
    const ms = deps.clock().getTime() - started;
    if (finding && finding.result !== 'skipped') {
      const screenshot = await this.#screenshot('on-failure');
      await deps.ledger.updateJob(this.job.tenantId, this.job.jobId, {
        expectedVersion: this.#current.version,
        entry: {
          type: 'step-checked',
          ...this.#common,
          detail: { ...finding, ms, ...(refused.length > 0 ? { refused } : {}) },
          cost: { dynamoWrites: 2 },
          ...(screenshot ? { screenshot } : {}),
        },
      });
      throw new DriftFoundError(step.id, finding.result, finding.detail);
    }
    return await this.#checkpoint(finding ? { skipped: true } : evidence, ms, {
      check: {
        result: finding?.result ?? 'ok',
        ms,
        ...(finding ? { detail: finding.detail } : {}),
        ...(refused.length > 0 ? { refused } : {}),
      },
    });
  }

  /**
   * 4, end (a write approved on its effect). Prepare it up to its commit and read what the page
   * would submit: the effect a person approved goes on to the commit; none approved yet, the
   * effect is recorded (masked, hashed, with a screenshot) and a person is asked; a different one
   * (the page's values changed, or the inputs, or the plan) is not committed: the changes are
   * recorded and the person is asked again.
   */
  async #approveEffect(): Promise<StepOutcome | undefined> {
    const { deps, step } = this;
    if (!approvesEffect(step) || !step.prepare || !step.effectOf) return undefined;
    const approval = effectApproval(this.entries, step.id);
    const sealed = await this.#prepareEffect(step, approval);
    if (approval.state === 'approved' && approval.hash === sealed.hash) {
      this.#prepared = true;
      return undefined;
    }
    const changes =
      approval.state === 'approved' ? effectChanges(approval.prepared.effect, sealed.effect) : undefined;
    const screenshot = await this.#screenshot('before-approval');
    this.#current = await deps.ledger.updateJob(this.job.tenantId, this.job.jobId, {
      expectedVersion: this.#current.version,
      entry: {
        type: changes ? 'effect-changed' : 'effect-prepared',
        ...this.#common,
        attempt: nextAttempt(this.entries, step.id),
        detail: {
          hash: sealed.hash,
          effect: sealed.effect,
          ...(changes && approval.state === 'approved'
            ? { approvedHash: approval.hash, approvedBy: approval.by, changes }
            : {}),
        },
        cost: { dynamoWrites: 2 },
        ...(screenshot ? { screenshot } : {}),
      },
    });
    const reason = changes ? 'effect_changed' : 'approve_effect';
    return {
      outcome: 'needs_approval',
      step: step.id,
      stepIndex: this.stepIndex,
      wait: waitRequest(this.#current, 'approval', step.id, reason, deps.settings.parkAfterSeconds),
    };
  }

  /**
   * Prepares a write approved on its effect and seals what it would submit. An agent step is
   * prepared with its committing request refused (never sent: the action that would send it is
   * its commit), and is told which effect was approved, so it stops short of that commit.
   */
  async #prepareEffect(step: Step, approval: EffectApproval): Promise<SealedEffect> {
    const prepare = step.prepare as NonNullable<Step['prepare']>;
    const effectOf = step.effectOf as NonNullable<Step['effectOf']>;
    const agent = 'agent' in step;
    const refusing = agent ? await this.#attached.refuseWrites(committingRequest(step.commits)) : undefined;
    this.#ctx.approvedEffect =
      approval.state === 'approved' ? (effect) => sealEffect(effect).hash === approval.hash : undefined;
    try {
      await prepare(this.#page, this.#ctx);
      return sealEffect(await effectOf(this.#page, this.#ctx));
    } finally {
      this.#ctx.approvedEffect = undefined;
      const refused = refusing?.end() ?? [];
      if (refused.length > 0) this.deps.log.info('prepared up to its commit', { step: step.id, refused });
    }
  }

  /**
   * 5. For a write, the intent first (with the idempotency key, fenced by the job's version so
   * a stale worker cannot act); then the step's action and its verify, a write under the
   * browser's write guard (its requests on fresh connections; the browser's own resends seen).
   */
  async #writeIntentAndAct(): Promise<Acted> {
    const { deps, step } = this;
    if (step.kind === 'write') {
      const owner = newWriteOwner(step.id, deps.clock());
      this.#current = await deps.ledger.updateJob(this.job.tenantId, this.job.jobId, {
        expectedVersion: this.#current.version,
        set: { writeOwner: owner },
        entry: {
          type: 'step-started',
          ...this.#common,
          attempt: nextAttempt(this.entries, step.id),
          idempotencyKey: this.#ctx.idempotencyKey,
          // Whether its verify already held: evidence that was there cannot complete a write that creates.
          detail: { attemptId: owner.attemptId, heldBefore: this.#before !== null },
          cost: { dynamoWrites: 2 },
        },
      });
      this.#owned = keepWriteOwned(deps, this.#current, owner);
    }
    await this.#ctx.faultPoint('before-action');
    const actionStarted = deps.clock().getTime();
    // A step that commits once (an agent step; a script that names its committing request) has a
    // second committing request refused by the guard.
    const guard =
      step.kind === 'write'
        ? await this.#attached.guardWrites({
            ...deps.settings.writeGuard,
            ...commitLimit(step),
            ...(step.commits ? { commits: step.commits } : {}),
          })
        : undefined;
    let evidence: Evidence | null;
    let guarded: WriteGuardReport | undefined;
    this.#commitFrom = new Date(deps.clock().getTime()).toISOString();
    const faultPoint = this.#ctx.faultPoint;
    // The step's last action (after `mid-action`) is the one that commits: the page's requests before it are its own.
    this.#ctx.faultPoint = (point, at) => {
      if (point === 'mid-action') this.#commitFrom = new Date(deps.clock().getTime()).toISOString();
      return faultPoint(point, at);
    };
    try {
      // A write approved on its effect was prepared (and checked) above: only its commit is left.
      if (this.#prepared && step.commit) await step.commit(this.#page, this.#ctx);
      else await step.run(this.#page, this.#ctx);
      evidence = await step.verify(this.#page, this.#ctx);
    } finally {
      guarded = await guard?.finish();
      this.#guarded = guarded;
    }
    const actionMs = deps.clock().getTime() - actionStarted;
    await this.#ctx.faultPoint('after-action');
    return { evidence, actionMs, guarded };
  }

  /**
   * 6. Verified evidence advances the checkpoint in one transaction; none means a failure
   * (read: retry), an expired sign-in, a lost browser, or an unknown outcome (write).
   */
  async #verifyAndCheckpoint(acted: Acted): Promise<StepOutcome> {
    const { deps, step } = this;
    const refused = acted.guarded?.refused ?? [];
    if (refused.length > 0) {
      // The step tried to commit again: the second request was never sent; the probe says whether the first holds.
      const detail = `a second committing request was refused (${refused.map((r) => `${r.method} ${r.url}`).join(', ')}); the application decides whether the first one holds`;
      await this.#recordUnconfirmed(detail, acted.guarded);
      return { outcome: 'uncertain', step: step.id, detail };
    }
    const resent = acted.guarded?.resent ?? [];
    if (resent.length > 0) {
      // The page's confirmation may be the second copy's: the application decides (Reconcile counts).
      const what = resent.map((r) => `${r.method} ${r.url} ${r.extra} more time(s)`).join(', ');
      deps.log.warn('the browser sent a write again by itself', { step: step.id, resent: what });
      const detail = `the browser sent the write again by itself (${what}); the application may hold it more than once`;
      // Unconfirmed like any write the page did not confirm: the probe settles it and its cache.
      await this.#recordUnconfirmed(detail, acted.guarded);
      return { outcome: 'uncertain', step: step.id, detail };
    }
    if (acted.evidence === null) {
      if (step.kind === 'write') return await this.#unconfirmedWrite(acted.guarded);
      if (await this.#browserGone()) return this.#sessionLost('the browser went away');
      // The site sent the step to its sign-in page: an expired sign-in, not a failed step.
      if (await this.#isSignedOut()) return await this.#signedOut('signed out during the step');
      return await this.#retryLater('the step did not verify');
    }
    // Evidence that was already there before the action (an earlier job's record) proves nothing
    // about this write: it is unconfirmed, and its probe looks for this job's own record by its key.
    const unproven = unprovenReason(step, this.#before, acted.evidence);
    if (unproven !== undefined) {
      await this.#recordUnconfirmed(unproven, acted.guarded);
      return { outcome: 'uncertain', step: step.id, detail: unproven };
    }
    return await this.#checkpoint(acted.evidence, acted.actionMs, this.#completionDetail(acted.guarded));
  }

  /** The step's checkpoint with `evidence` (one transaction), then where the job goes next. */
  async #checkpoint(
    evidence: Evidence,
    actionMs: number | undefined,
    detail: Record<string, unknown> | undefined,
  ): Promise<StepOutcome> {
    const { deps, step } = this;
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
      evidence,
      checkpointCost(elapsedMs, actionMs, this.#owned?.beats),
      detail ? { detail } : {},
    );
    this.#checkpointed = true;
    return afterCheckpoint(deps, this.playbook, done, this.stepIndex);
  }

  /**
   * The write guard's report as the ledger records it: the requests that committed the write
   * (method, origin and path, status, time, what the answer said) apart from the page's own
   * (counted as background).
   */
  #guardSummary(report: WriteGuardReport): Record<string, unknown> {
    // The job's sensitive inputs (the agent step's, and any input named like a secret) are kept
    // out of the ledger: an answer that echoes one shows its placeholder.
    const named = 'agent' in this.step ? (this.step.agent as AgentSpec).sensitiveInputs : [];
    const view = { secrets: {}, sensitive: sensitiveInputs(this.job.inputs, named), values: [] };
    const hide = (text: string): string => withValuesHidden(text, view);
    const { commits, background } = classifyRequests(report.requests, {
      commits: this.step.commits,
      commitFrom: this.#commitFrom,
    });
    return {
      prevented: report.prevented,
      observed: report.observed,
      unsafeRequests: report.unsafeRequests,
      commits: commits.slice(0, MAX_COMMITS_RECORDED).map((r) => committed(r, this.job.tenantId, hide)),
      ...(background.length > 0 ? { background: background.length } : {}),
      ...(report.resent.length > 0 ? { resent: report.resent.reduce((n, r) => n + r.extra, 0) } : {}),
      ...(report.refused.length > 0
        ? { refused: report.refused.map((r) => ({ method: r.method, url: r.url, at: r.at })) }
        : {}),
    };
  }

  /** What the completion entry adds: the write guard's report, and an agent step's counters (model calls, cache). */
  #completionDetail(guarded: WriteGuardReport | undefined): Record<string, unknown> | undefined {
    // An agent step (its definition carries `agent`): the counters, from all its entries so far.
    const agent =
      'agent' in this.step
        ? agentCountersByStep([
            ...this.entries,
            ...this.#written,
            { type: 'step-completed', step: this.step.id },
          ])[this.step.id]
        : undefined;
    const detail = {
      ...(guarded ? { writeGuard: this.#guardSummary(guarded) } : {}),
      ...(agent ? { agent } : {}),
      ...(this.#before !== undefined && this.#before !== null ? { heldBefore: true } : {}),
    };
    return Object.keys(detail).length > 0 ? detail : undefined;
  }

  /**
   * A write the application did not confirm. Refused on the page (a declined card, a
   * validation error): a failed attempt, with the page's words recorded, tried again after a
   * backoff (the job fails once the retry budget is spent). Unexplained: an uncertain write,
   * recorded as such (`step-unconfirmed`) for the probe to settle; if the probe then finds it
   * did not happen, that attempt spends a retry (`resolveOpenIntent`), so a write that keeps
   * failing ends the job instead of looping through Reconcile.
   */
  async #unconfirmedWrite(guarded?: WriteGuardReport): Promise<StepOutcome> {
    const { step } = this;
    const refusal = await step.refusal?.(this.#page, this.#ctx).catch(() => null);
    if (refusal) return await this.#retryLater(`the application refused the write: ${refusal}`, guarded);
    const detail = 'the write was not confirmed by the application';
    await this.#recordUnconfirmed(detail, guarded);
    return { outcome: 'uncertain', step: step.id, detail };
  }

  /** The attempt acted and its write is unconfirmed: whether it happened is the probe's to say. */
  async #recordUnconfirmed(reason: string, guarded?: WriteGuardReport, keepCache = true): Promise<void> {
    const cache = keepCache ? this.#cache?.pending() : undefined;
    this.#current = await this.deps.ledger.updateJob(this.job.tenantId, this.job.jobId, {
      expectedVersion: this.#current.version,
      entry: {
        type: 'step-unconfirmed',
        ...this.#common,
        attempt: nextAttempt(this.entries, this.step.id),
        detail: {
          reason,
          ...(guarded ? { writeGuard: this.#guardSummary(guarded) } : {}),
          ...(cache ? { cache } : {}),
        },
        cost: { dynamoWrites: 2 },
      },
    });
    this.#cachePending = cache !== undefined;
  }

  /** Something threw during points 3-6: the browser died, the engine refused, or the page misbehaved. */
  async #classifyFailure(err: unknown): Promise<StepOutcome> {
    if (browserLost(this.#attached, err)) {
      await this.deps.browser.detach(this.#attached.sessionId).catch(() => undefined);
      return this.#sessionLost(describe(err));
    }
    if (isStateMachineError(err)) throw err;
    // A model the deployment does not offer: trying again cannot help, the job fails as misconfigured.
    if (err instanceof StepConfigurationError) throw new JobConfigurationError(err.message, { cause: err });
    // The step's model asked a person: the job waits for a review with the question; the
    // answer (the decision's comment) is in the step's record when it runs again.
    if (err instanceof PersonAskedError) {
      return {
        outcome: 'needs_review',
        step: this.step.id,
        detail: err.message,
        wait: waitRequest(
          this.job,
          'review',
          this.step.id,
          AGENT_QUESTION_REASON,
          this.deps.settings.parkAfterSeconds,
        ),
      };
    }
    // The step asked a person to act in the live browser: the job waits for them, with the
    // browser as it is (a write's intent, if written, stays open: the next attempt probes first).
    if (err instanceof TakeoverRequestedError) {
      return {
        outcome: 'takeover_requested',
        step: this.step.id,
        detail: err.message,
        wait: takeoverWaitRequest(
          this.job,
          this.step.id,
          err.request,
          takeoverWaitSeconds(this.deps.settings),
        ),
      };
    }
    // The page misbehaved mid-action: classify from what it shows now.
    if (await this.#isSignedOut()) return await this.#signedOut(describe(err));
    // The intent was written in this invocation (the job's version moved) and no checkpoint
    // settled it, so the write may have happened.
    if (this.step.kind === 'write' && !this.#checkpointed && this.#current.version !== this.job.version) {
      // A served list that went on past the write with a target the page lacks is wrong itself:
      // its entry is demoted now (#settleCache), whatever the probe finds.
      await this.#recordUnconfirmed(describe(err), this.#guarded, !(err instanceof HealAfterWriteError));
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
      (await this.playbook.applications[this.step.app]
        ?.isSignedOut(this.#page, this.#ctx)
        .catch(() => false)) === true
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
  async #retryLater(detail: string, guarded?: WriteGuardReport): Promise<StepOutcome> {
    const job = this.#current;
    const used = job.retriesUsed + 1;
    if (used > job.retryBudget) throw new RetryBudgetExhaustedError(this.step.id, job.retriesUsed, detail);
    const screenshot = await this.#screenshot('on-failure');
    this.#current = await this.deps.ledger.updateJob(job.tenantId, job.jobId, {
      expectedVersion: job.version,
      set: { retriesUsed: used },
      entry: {
        type: 'step-failed',
        step: this.step.id,
        detail: {
          reason: detail,
          retriesUsed: used,
          ...(guarded ? { writeGuard: this.#guardSummary(guarded) } : {}),
        },
        cost: { dynamoWrites: 2 },
        ...(screenshot ? { screenshot } : {}),
      },
    });
    return { outcome: 'retry', step: this.step.id, retryAfterSeconds: this.#backoff(), detail };
  }

  /** Seconds before a failed attempt is tried again: doubled per retry used, at most a minute. */
  #backoff(): number {
    const used = this.#current.retriesUsed;
    return Math.min(60, this.deps.settings.retryBackoffSeconds * 2 ** Math.max(0, used - 1));
  }
}

/** What the step's action left: its evidence (null: not verified), its own time, the write guard's report. */
interface Acted {
  evidence: Evidence | null;
  actionMs: number;
  guarded: WriteGuardReport | undefined;
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

/**
 * A committing request as the ledger records it, for the write's receipt: method, origin and
 * path, time, status, and what the answer said (its media type, a redirect's target, a short
 * excerpt of its body, masked as the ledger masks; `hide` puts the job's sensitive inputs as
 * placeholders).
 */
function committed(
  r: SentRequest,
  tenantId: string,
  hide: (text: string) => string,
): Record<string, unknown> {
  const excerpt = responseExcerpt(r.response?.contentType, r.response?.body, { tenantId }, hide);
  return {
    method: r.method,
    url: hide(r.url),
    at: r.at,
    ...(r.status === undefined ? {} : { status: r.status }),
    ...(r.failed ? { failed: true } : {}),
    ...(r.response?.location ? { location: hide(r.response.location) } : {}),
    ...(r.response?.contentType ? { contentType: r.response.contentType } : {}),
    ...(excerpt ? { excerpt } : {}),
  };
}

/** Committing requests a ledger entry lists (a step that commits more shows the count in `unsafeRequests`). */
const MAX_COMMITS_RECORDED = 5;

const SIGN_IN_DOES_NOT_HOLD = `signed out again after ${MAX_SIGN_INS_PER_STEP} sign-ins for this step`;

function describe(err: unknown): string {
  const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return message.split('\n')[0]?.slice(0, 300) ?? 'unknown error';
}
