import type { Principal } from '../../auth/api-keys.ts';
import type { Application } from '../../playbooks/contract.ts';
import type { ApiDeps } from '../deps.ts';
import { BadRequestError, UnprocessableError } from '../errors.ts';
import { fieldIssues } from '../schemas.ts';
import { type AnswerCheck, PERSON_ANSWER } from './answer-rules.ts';
import { answerBrowserWait } from './browser-wait.ts';
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
 * code itself is never stored or logged. `check` refuses an answer the caller may not give
 * (an agent's, where the deployment does not allow it: `answer-rules.ts`) before anything is done.
 */
export async function completeMfa(
  deps: ApiDeps,
  principal: Principal,
  jobId: string,
  body: unknown,
  check: AnswerCheck = PERSON_ANSWER,
): Promise<MfaResult> {
  const parsed = MfaBodySchema.safeParse(body);
  if (!parsed.success) {
    throw new BadRequestError('invalid_request', 'send {"code": "<one-time code>"} or {"completed": true}', {
      details: fieldIssues(parsed.error),
    });
  }
  const { code } = parsed.data;
  const { job, entries } = await deps.engine.ledger.readJob(principal.tenantId, jobId);
  check(job, entries, job.wait?.step ?? '');
  const { step, resumed } = await answerBrowserWait(deps, principal, jobId, {
    status: 'WAITING_MFA',
    kind: 'mfa',
    waitingFor: 'a sign-in',
    requested: 'mfa-requested',
    completed: 'mfa-completed',
    perStep: false,
    refuseExpired: false,
    stepOf: (playbook, wait) => {
      const step = playbook.steps.find((s) => s.id === wait.step) ?? playbook.steps[wait.stepIndex];
      return step && playbook.applications[step.app] ? step : undefined;
    },
    // The sign-in cannot finish in a session that is gone: the job opens a new one and asks again.
    sessionLost: `the browser session that was waiting for the code has ended; job ${jobId} opens a new session and will ask for a new code`,
    output: (outcome) => ({ mfa: outcome === 'done' ? 'completed' : 'session_lost' }),
    check: async (page, ctx, waiting, playbook) => {
      const application = playbook.applications[waiting.app] as Application;
      const signedIn =
        code !== undefined
          ? (await application.submitOneTimeCode(page, ctx, code)).status === 'signed_in' &&
            !(await application.isSignedOut(page, ctx))
          : !(await application.isSignedOut(page, ctx));
      if (!signedIn) {
        throw new UnprocessableError(
          code !== undefined ? 'code_rejected' : 'not_signed_in',
          code !== undefined
            ? `${waiting.app} did not accept the code; the job is still waiting: send the current code`
            : `the ${waiting.app} account is not signed in yet; complete the sign-in, then try again`,
          {
            details: [{ field: code !== undefined ? 'code' : 'completed', message: 'sign-in not verified' }],
          },
        );
      }
      return { method: code !== undefined ? 'one-time-code' : 'confirmed' };
    },
  });
  return { jobId, step, signedIn: true, resumed };
}
