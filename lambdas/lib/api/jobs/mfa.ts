import type { Principal } from '../../auth/api-keys.ts';
import { attachFor, stepContext } from '../../engine/context.ts';
import { StaleCheckpointError } from '../../ledger/errors.ts';
import type { Job, LedgerEntry, PendingWait } from '../../ledger/types.ts';
import type { Step } from '../../playbooks/contract.ts';
import type { ApiDeps } from '../deps.ts';
import { findPlaybook } from '../deps.ts';
import { BadRequestError, ConflictError, UnprocessableError } from '../errors.ts';
import { fieldIssues } from '../schemas.ts';
import { sendTaskSuccess } from '../step-functions.ts';
import { MfaBodySchema } from './schemas.ts';

export interface MfaResult {
  jobId: string;
  step: string;
  signedIn: true;
  /** This request resumed the job (false when an earlier request already had). */
  resumed: boolean;
}

/**
 * Completes the sign-in of a job waiting in `WAITING_MFA`: attaches to the job's browser
 * session for the waiting step's application, enters the person's one-time code (or, with
 * `completed: true`, checks that they completed the sign-in themselves), and resumes the
 * job only once the application shows the account signed in. Then, in this order:
 * `mfa-completed` in the ledger (fenced by the job's version), `SendTaskSuccess`, clear the
 * wait. A code that does not sign the account in is a 422 and the job keeps waiting. The
 * code itself is never stored or logged.
 */
export async function completeMfa(
  deps: ApiDeps,
  principal: Principal,
  jobId: string,
  body: unknown,
): Promise<MfaResult> {
  const parsed = MfaBodySchema.safeParse(body);
  if (!parsed.success) {
    throw new BadRequestError('invalid_request', 'send {"code": "<one-time code>"} or {"completed": true}', {
      details: fieldIssues(parsed.error),
    });
  }
  const { ledger } = deps.engine;
  const { job, entries } = await ledger.readJob(principal.tenantId, jobId);
  const wait = job.wait;
  if (job.status !== 'WAITING_MFA' || wait?.kind !== 'mfa') {
    throw new ConflictError(
      'not_waiting',
      `job ${jobId} is not waiting for a sign-in: its status is ${job.status}`,
      {
        details: { status: job.status },
      },
    );
  }
  // An earlier request verified the sign-in and recorded it but did not get to resume the job.
  if (completedSince(entries)) {
    return {
      jobId,
      step: wait.step,
      signedIn: true,
      resumed: await resume(deps, job, wait, { mfa: 'completed' }),
    };
  }
  const playbook = findPlaybook(deps, job.playbook);
  const step = playbook?.steps.find((s) => s.id === wait.step) ?? playbook?.steps[wait.stepIndex];
  const application = step && playbook ? playbook.applications[step.app] : undefined;
  if (!playbook || !step || !application) {
    throw new ConflictError(
      'not_waiting',
      `job ${jobId} waits at step ${wait.step}, which its playbook no longer has`,
    );
  }

  const attach = await attachFor(deps.engine, job, step.app);
  if (!attach.ok) {
    // The sign-in cannot finish in a session that is gone: let the job open a new one and ask again.
    await resume(deps, job, wait, { mfa: 'session_lost' });
    throw new ConflictError(
      'session_lost',
      `the browser session that was waiting for the code has ended; job ${jobId} opens a new session and will ask for a new code`,
    );
  }
  const { page, sessionId } = attach.attached;
  let signedIn: boolean;
  try {
    const ctx = stepContext(deps.engine, job, playbook, step as Step, wait.stepIndex, entries);
    if (parsed.data.code !== undefined) {
      const result = await application.submitOneTimeCode(page, ctx, parsed.data.code);
      signedIn = result.status === 'signed_in' && !(await application.isSignedOut(page, ctx));
    } else {
      signedIn = !(await application.isSignedOut(page, ctx));
    }
  } finally {
    await deps.engine.browser.detach(sessionId).catch(() => undefined);
  }
  if (!signedIn) {
    throw new UnprocessableError(
      parsed.data.code !== undefined ? 'code_rejected' : 'not_signed_in',
      parsed.data.code !== undefined
        ? `${step.app} did not accept the code; the job is still waiting: send the current code`
        : `the ${step.app} account is not signed in yet; complete the sign-in, then try again`,
      {
        details: [
          { field: parsed.data.code !== undefined ? 'code' : 'completed', message: 'sign-in not verified' },
        ],
      },
    );
  }
  try {
    await ledger.updateJob(principal.tenantId, jobId, {
      expectedVersion: job.version,
      entry: {
        type: 'mfa-completed',
        step: wait.step,
        stepIndex: wait.stepIndex,
        sessionId: job.sessions[step.app]?.sessionId,
        actor: principal.keyId,
        detail: {
          application: step.app,
          method: parsed.data.code !== undefined ? 'one-time-code' : 'confirmed',
        },
        cost: { dynamoWrites: 2 },
      },
    });
  } catch (err) {
    // Another request recorded the completion first; it resumes the job.
    if (err instanceof StaleCheckpointError)
      return { jobId, step: wait.step, signedIn: true, resumed: false };
    throw err;
  }
  return {
    jobId,
    step: wait.step,
    signedIn: true,
    resumed: await resume(deps, job, wait, { mfa: 'completed' }),
  };
}

/** Was the sign-in recorded as completed since the job last asked for it? */
function completedSince(entries: readonly LedgerEntry[]): boolean {
  let done = false;
  for (const e of entries) {
    if (e.type === 'mfa-requested') done = false;
    else if (e.type === 'mfa-completed') done = true;
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
