import type { Page } from 'playwright-core';
import type { Principal } from '../../auth/api-keys.ts';
import { attachFor, stepContext } from '../../engine/context.ts';
import { StaleCheckpointError } from '../../ledger/errors.ts';
import type { Job, JobStatus, LedgerEntry, LedgerEntryType, PendingWait } from '../../ledger/types.ts';
import type { Playbook, Step, StepContext } from '../../playbooks/contract.ts';
import type { ApiDeps } from '../deps.ts';
import { findPlaybook } from '../deps.ts';
import { ConflictError } from '../errors.ts';
import { sendTaskSuccess } from '../step-functions.ts';

/**
 * A wait a person answers in the job's own browser session (a sign-in's one-time code, a
 * takeover), in one place: the job must be waiting for it; a completion an earlier request
 * recorded but did not get to resume is resumed; Belay attaches to the waiting step's session
 * and checks the page (a session that ended resumes the job into a new one, whose step asks
 * again); it holds: in this order, the completion in the ledger (fenced by the job's version,
 * with who), `SendTaskSuccess`, clear the wait.
 */
export interface BrowserWait {
  status: JobStatus;
  kind: PendingWait['kind'];
  /** What the job would be waiting for, in words (`a sign-in`). */
  waitingFor: string;
  requested: LedgerEntryType;
  completed: LedgerEntryType;
  /** Completions count for the waiting step only (else for any step). */
  perStep: boolean;
  /** A request after the wait's `expiresAt` is refused. */
  refuseExpired: boolean;
  /** The waiting step (the playbook may have changed since). */
  stepOf(playbook: Playbook, wait: PendingWait): Step | undefined;
  /** Why the job is resumed without an answer when its session ended (the 409's message). */
  sessionLost: string;
  /** What the state machine's task gets back: done, or the session gone. */
  output(outcome: 'done' | 'session_lost'): Record<string, unknown>;
  /** Checks the page as the person left it: the completion entry's detail, or it throws (a 422). */
  check(page: Page, ctx: StepContext, step: Step, playbook: Playbook): Promise<Record<string, unknown>>;
}

/** The waiting step, and whether this request resumed the job (false when another request had). */
export interface BrowserWaitAnswer {
  step: string;
  resumed: boolean;
}

export async function answerBrowserWait(
  deps: ApiDeps,
  principal: Principal,
  jobId: string,
  spec: BrowserWait,
): Promise<BrowserWaitAnswer> {
  const { ledger } = deps.engine;
  const { job, entries } = await ledger.readJob(principal.tenantId, jobId);
  const wait = job.wait;
  if (job.status !== spec.status || wait?.kind !== spec.kind) {
    throw new ConflictError(
      'not_waiting',
      `job ${jobId} is not waiting for ${spec.waitingFor}: its status is ${job.status}`,
      { details: { status: job.status } },
    );
  }
  if (completedSince(entries, spec, wait.step)) {
    return { step: wait.step, resumed: await resume(deps, job, wait, spec.output('done')) };
  }
  if (spec.refuseExpired && Date.parse(wait.expiresAt) <= deps.engine.clock().getTime()) {
    throw new ConflictError(
      'wait_expired',
      `the ${spec.kind} of step ${wait.step} expired at ${wait.expiresAt}`,
    );
  }
  const playbook = findPlaybook(deps, job.playbook);
  const step = playbook ? spec.stepOf(playbook, wait) : undefined;
  if (!playbook || !step) {
    throw new ConflictError(
      'not_waiting',
      `job ${jobId} waits at step ${wait.step}, which its playbook no longer has`,
    );
  }
  const attach = await attachFor(deps.engine, job, step.app);
  if (!attach.ok) {
    await resume(deps, job, wait, spec.output('session_lost'));
    throw new ConflictError('session_lost', spec.sessionLost);
  }
  let detail: Record<string, unknown>;
  try {
    const ctx = stepContext(deps.engine, job, playbook, step, wait.stepIndex, entries);
    detail = await spec.check(attach.attached.page, ctx, step, playbook);
  } finally {
    await deps.engine.browser.detach(attach.attached.sessionId).catch(() => undefined);
  }
  try {
    await ledger.updateJob(principal.tenantId, jobId, {
      expectedVersion: job.version,
      entry: {
        type: spec.completed,
        step: wait.step,
        stepIndex: wait.stepIndex,
        sessionId: job.sessions[step.app]?.sessionId,
        actor: principal.keyId,
        detail: { application: step.app, ...detail },
        cost: { dynamoWrites: 2 },
      },
    });
  } catch (err) {
    // Another request recorded the completion first; it resumes the job.
    if (err instanceof StaleCheckpointError) return { step: wait.step, resumed: false };
    throw err;
  }
  return { step: wait.step, resumed: await resume(deps, job, wait, spec.output('done')) };
}

/** Was the wait recorded as completed since the job last asked for it? */
function completedSince(entries: readonly LedgerEntry[], spec: BrowserWait, step: string): boolean {
  let done = false;
  for (const e of entries) {
    if (spec.perStep && e.step !== step) continue;
    if (e.type === spec.requested) done = false;
    else if (e.type === spec.completed) done = true;
  }
  return done;
}

async function resume(
  deps: ApiDeps,
  job: Job,
  wait: PendingWait,
  output: Record<string, unknown>,
): Promise<boolean> {
  const resumed = await sendTaskSuccess(deps.sfn, wait.taskToken, { ...output, step: wait.step });
  await deps.engine.ledger.clearWait(job.tenantId, job.jobId, { taskToken: wait.taskToken, to: 'RUNNING' });
  return resumed;
}
