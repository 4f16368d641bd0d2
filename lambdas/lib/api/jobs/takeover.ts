import type { Principal } from '../../auth/api-keys.ts';
import { type ApiDeps, findPlaybook } from '../deps.ts';
import { BadRequestError, UnprocessableError } from '../errors.ts';
import { fieldIssues } from '../schemas.ts';
import { answerBrowserWait } from './browser-wait.ts';
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
 * `ctx.takeover` returns, and the live view links given out for the takeover stop working. It does not hold: 422 naming what the step expects, and the job keeps
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
  const { step, resumed } = await answerBrowserWait(deps, principal, jobId, {
    status: 'WAITING_TAKEOVER',
    kind: 'takeover',
    waitingFor: 'a person in its browser',
    requested: 'takeover-requested',
    completed: 'takeover-completed',
    perStep: true,
    refuseExpired: true,
    stepOf: (playbook, wait) => playbook.steps.find((s) => s.id === wait.step),
    // The person's work went with the session: the job opens a new one and its step asks again.
    sessionLost: `the browser session of job ${jobId} has ended; the job opens a new session and will ask again`,
    output: (outcome) => ({ takeover: outcome }),
    check: async (page, ctx, waiting) => {
      const pre = await waiting.precondition(page, ctx);
      if (!pre.ok) {
        throw new UnprocessableError(
          'precondition_not_met',
          `the page is not where step ${waiting.id} goes on from (${pre.detail}); finish in the live view, then press Done again: the job is still waiting`,
          { details: [{ field: 'done', message: 'the step’s precondition does not hold on the live page' }] },
        );
      }
      return { precondition: 'held', ...(parsed.data.comment ? { comment: parsed.data.comment } : {}) };
    },
  });
  await endTakeoverViews(deps, principal.tenantId, jobId, step);
  return { jobId, step, done: true, resumed };
}

/**
 * The person's access to the browser ends with the wait: every live view link of the step's
 * session given out so far stops working (on the local service; Anchor's link lives with its
 * session). Best effort: a failure is logged, and the links still expire with the wait.
 */
async function endTakeoverViews(deps: ApiDeps, tenantId: string, jobId: string, step: string): Promise<void> {
  try {
    const job = await deps.engine.ledger.getJob(tenantId, jobId);
    const app = findPlaybook(deps, job.playbook)?.steps.find((s) => s.id === step)?.app;
    const session = app ? job.sessions[app] : undefined;
    if (session) await deps.engine.browser.revokeLiveViews(session);
  } catch (err) {
    deps.engine.log.warn('live views of a finished takeover not revoked', { jobId, error: String(err) });
  }
}
