import type { Principal } from '../../auth/api-keys.ts';
import { attachFor, stepContext } from '../../engine/context.ts';
import { StaleCheckpointError } from '../../ledger/errors.ts';
import type { Job, LedgerEntry, PendingWait } from '../../ledger/types.ts';
import type { ApiDeps } from '../deps.ts';
import { findPlaybook } from '../deps.ts';
import { BadRequestError, ConflictError, UnprocessableError } from '../errors.ts';
import { fieldIssues } from '../schemas.ts';
import { sendTaskSuccess } from '../step-functions.ts';
import { TakeoverBodySchema } from './schemas.ts';

export interface TakeoverResult {
  jobId: string;
  step: string;
  done: true;
  /** This request resumed the job (false when an earlier request already had). */
  resumed: boolean;
}

/**
 * A person who took over the live browser says they are done. Belay attaches to the job's
 * session for the waiting step's application and checks the step's precondition on the page as
 * the person left it (never `restore`: that would navigate away from their work). It holds: in
 * this order, `takeover-completed` in the ledger (fenced by the job's version, with who),
 * `SendTaskSuccess`, clear the wait; RunStep then runs the step again from its precondition and
 * `ctx.takeover` returns. It does not hold: 422 naming what the step expects, and the job keeps
 * waiting with the same live view, so the person can finish and press Done again.
 */
export async function completeTakeover(
  deps: ApiDeps,
  principal: Principal,
  jobId: string,
  body: unknown,
): Promise<TakeoverResult> {
  const parsed = TakeoverBodySchema.safeParse(body);
  if (!parsed.success) {
    throw new BadRequestError('invalid_request', 'send {"done": true} (and optionally a "comment")', {
      details: fieldIssues(parsed.error),
    });
  }
  const { ledger } = deps.engine;
  const { job, entries } = await ledger.readJob(principal.tenantId, jobId);
  const wait = job.wait;
  if (job.status !== 'WAITING_TAKEOVER' || wait?.kind !== 'takeover') {
    throw new ConflictError(
      'not_waiting',
      `job ${jobId} is not waiting for a person in its browser: its status is ${job.status}`,
      { details: { status: job.status } },
    );
  }
  // An earlier request checked the page and recorded it but did not get to resume the job.
  if (completedSince(entries, wait.step)) {
    return { jobId, step: wait.step, done: true, resumed: await resume(deps, job, wait, 'done') };
  }
  if (Date.parse(wait.expiresAt) <= deps.engine.clock().getTime()) {
    throw new ConflictError('wait_expired', `the takeover of step ${wait.step} expired at ${wait.expiresAt}`);
  }
  const playbook = findPlaybook(deps, job.playbook);
  const step = playbook?.steps.find((s) => s.id === wait.step);
  if (!playbook || !step) {
    throw new ConflictError(
      'not_waiting',
      `job ${jobId} waits at step ${wait.step}, which its playbook no longer has`,
    );
  }
  const attach = await attachFor(deps.engine, job, step.app);
  if (!attach.ok) {
    // The person's work went with the session: the job opens a new one and its step asks again.
    await resume(deps, job, wait, 'session_lost');
    throw new ConflictError(
      'session_lost',
      `the browser session of job ${jobId} has ended; the job opens a new session and will ask again`,
    );
  }
  let held: { ok: true } | { ok: false; detail: string };
  try {
    const ctx = stepContext(deps.engine, job, playbook, step, wait.stepIndex, entries);
    const pre = await step.precondition(attach.attached.page, ctx);
    held = pre.ok ? { ok: true } : { ok: false, detail: pre.detail };
  } finally {
    await deps.engine.browser.detach(attach.attached.sessionId).catch(() => undefined);
  }
  if (!held.ok) {
    throw new UnprocessableError(
      'precondition_not_met',
      `the page is not where step ${step.id} goes on from (${held.detail}); finish in the live view, then press Done again: the job is still waiting`,
      { details: [{ field: 'done', message: 'the step’s precondition does not hold on the live page' }] },
    );
  }
  try {
    await ledger.updateJob(principal.tenantId, jobId, {
      expectedVersion: job.version,
      entry: {
        type: 'takeover-completed',
        step: wait.step,
        stepIndex: wait.stepIndex,
        sessionId: job.sessions[step.app]?.sessionId,
        actor: principal.keyId,
        detail: {
          application: step.app,
          precondition: 'held',
          ...(parsed.data.comment ? { comment: parsed.data.comment } : {}),
        },
        cost: { dynamoWrites: 2 },
      },
    });
  } catch (err) {
    // Another request recorded the completion first; it resumes the job.
    if (err instanceof StaleCheckpointError) return { jobId, step: wait.step, done: true, resumed: false };
    throw err;
  }
  return { jobId, step: wait.step, done: true, resumed: await resume(deps, job, wait, 'done') };
}

/** Was the takeover of `step` recorded as completed since the job last asked for it? */
function completedSince(entries: readonly LedgerEntry[], step: string): boolean {
  let done = false;
  for (const e of entries) {
    if (e.step !== step) continue;
    if (e.type === 'takeover-requested') done = false;
    else if (e.type === 'takeover-completed') done = true;
  }
  return done;
}

async function resume(
  deps: ApiDeps,
  job: Job,
  wait: PendingWait,
  takeover: 'done' | 'session_lost',
): Promise<boolean> {
  const resumed = await sendTaskSuccess(deps.sfn, wait.taskToken, { takeover, step: wait.step });
  await deps.engine.ledger.clearWait(job.tenantId, job.jobId, { taskToken: wait.taskToken, to: 'RUNNING' });
  return resumed;
}
