import type { Principal } from '../../auth/api-keys.ts';
import { effectApproval } from '../../engine/effect-approval.ts';
/** The error a rejected approval or review fails its wait with (the state machine catches it). */
import { DECISION_ENTRY, REJECTED_ERROR, sinceWaitRequested, WAIT_ENTRY } from '../../engine/waits.ts';
import { StaleCheckpointError } from '../../ledger/errors.ts';
import type { Job, LedgerEntry, PendingWait } from '../../ledger/types.ts';
import type { ApiDeps } from '../deps.ts';
import { BadRequestError, ConflictError, UnprocessableError } from '../errors.ts';
import { fieldIssues } from '../schemas.ts';
import { sendTaskFailure, sendTaskSuccess } from '../step-functions.ts';
import { type AnswerCheck, PERSON_ANSWER } from './answer-rules.ts';
import { type DecisionBody, DecisionBodySchema } from './schemas.ts';

export { REJECTED_ERROR };

export interface DecisionResult {
  jobId: string;
  step: string;
  decision: 'approve' | 'reject';
  resolution?: 'done' | 'absent';
  decidedBy: string;
  /** The decision had been recorded before (by this or an earlier request). */
  replayed: boolean;
  /** This request resumed the job (a replay that found the job already resumed did not). */
  resumed: boolean;
}

type DecisionKind = 'approval' | 'review';
const ATTEMPTS = 3;

/**
 * Records a person's decision on a job waiting for approval or review, then resumes it.
 *
 * Order, chosen so that a crash at any line loses nothing and repeats nothing:
 * 1. the decision (with who made it) goes into the ledger, fenced by the job's version, so
 *    of two racing deciders one records and the other sees that decision;
 * 2. `SendTaskSuccess` (approve, with `{decision}`) or `SendTaskFailure(Belay.Rejected)`;
 * 3. the wait is cleared (only if it still has the token we used: the job may already be
 *    waiting again with a new one).
 * A retry after a crash between 1 and 2 finds the recorded decision and the wait still
 * there, and finishes the resume; a repeat after 3 answers 200 and resumes nothing. A
 * different decision on a step already decided is a 409.
 *
 * `check` refuses what the caller may not answer (an agent's answer where the deployment
 * does not allow it, a question's answer from another key: `answer-rules.ts`); it sees the
 * job as each attempt reads it, so it holds for the state the decision is recorded against.
 */
export async function decide(
  deps: ApiDeps,
  principal: Principal,
  jobId: string,
  body: unknown,
  check: AnswerCheck = PERSON_ANSWER,
): Promise<DecisionResult> {
  const parsed = DecisionBodySchema.safeParse(body);
  if (!parsed.success) {
    throw new BadRequestError(
      'invalid_request',
      'the decision is not valid: see details for the fields to fix',
      {
        details: fieldIssues(parsed.error),
      },
    );
  }
  const input = parsed.data;
  const { ledger } = deps.engine;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const { job, entries } = await ledger.readJob(principal.tenantId, jobId);
    check(job, entries, input.step);
    const wait = job.wait;
    const waiting =
      wait !== undefined && wait.step === input.step && (wait.kind === 'approval' || wait.kind === 'review');
    const kind: DecisionKind | undefined = waiting
      ? (wait.kind as DecisionKind)
      : lastDecisionKind(entries, input.step);
    const recorded =
      kind === undefined ? undefined : sinceWaitRequested(entries, kind, input.step, DECISION_ENTRY[kind]);

    if (!waiting || !wait) {
      if (recorded && sameDecision(recorded, input)) return result(job, recorded, true, false);
      throw notWaiting(job, input.step, recorded);
    }
    if (recorded) {
      if (!sameDecision(recorded, input)) throw notWaiting(job, input.step, recorded);
      // Recorded by an earlier request that did not get to resume the job: finish its work.
      return result(job, recorded, true, await resume(deps, job, wait, recorded));
    }
    if (wait.kind === 'approval' && input.resolution !== undefined) {
      throw new UnprocessableError(
        'invalid_decision',
        'resolution is for reviews of uncertain writes, not approvals',
        {
          details: [{ field: 'resolution', message: 'remove it for an approval' }],
        },
      );
    }
    if (Date.parse(wait.expiresAt) <= deps.engine.clock().getTime()) {
      throw new ConflictError('wait_expired', `the wait for step ${input.step} expired at ${wait.expiresAt}`);
    }
    const effectHash = wait.kind === 'approval' ? approvedEffect(entries, input) : undefined;
    const decision = {
      step: input.step,
      actor: principal.keyId,
      detail: { ...decisionDetail(input, principal.keyId), ...(effectHash ? { effectHash } : {}) },
    };
    try {
      await ledger.updateJob(principal.tenantId, jobId, {
        expectedVersion: job.version,
        entry: {
          type: DECISION_ENTRY[wait.kind as DecisionKind],
          step: input.step,
          stepIndex: wait.stepIndex,
          actor: principal.keyId,
          detail: decision.detail,
          cost: { dynamoWrites: 2 },
        },
      });
    } catch (err) {
      if (err instanceof StaleCheckpointError) continue; // someone else changed the job: look again
      throw err;
    }
    return result(job, decision, false, await resume(deps, job, wait, decision));
  }
  throw new ConflictError('job_busy', 'the job changed while recording the decision; send it again');
}

/**
 * A step approved on its effect: the hash the approval is recorded against, the effect the job
 * shows now; refused when the person was shown another (the job prepared a new one since).
 */
function approvedEffect(entries: readonly LedgerEntry[], input: DecisionBody): string | undefined {
  const approval = effectApproval(entries, input.step);
  if (approval.state === 'none') {
    if (input.effectHash !== undefined)
      throw new UnprocessableError('invalid_decision', `step ${input.step} is not approved on its effect`, {
        details: [{ field: 'effectHash', message: 'remove it: this approval is not of an effect' }],
      });
    return undefined;
  }
  const showing = approval.prepared.hash;
  if (input.effectHash !== undefined && input.effectHash !== showing && input.decision === 'approve')
    throw new ConflictError(
      'effect_changed',
      `the effect of step ${input.step} is not the one you were shown: look at it again (GET the job) and decide on it`,
      { details: { effectHash: showing } },
    );
  return showing;
}

function decisionDetail(input: DecisionBody, keyId: string): Record<string, unknown> {
  return {
    decision: input.decision,
    decidedBy: keyId,
    ...(input.comment === undefined ? {} : { comment: input.comment }),
    ...(input.resolution === undefined ? {} : { resolution: input.resolution }),
  };
}

/** Sends the recorded decision to the waiting execution and clears the wait it answered. */
async function resume(
  deps: ApiDeps,
  job: Job,
  wait: PendingWait,
  decision: Pick<LedgerEntry, 'actor' | 'detail' | 'step'>,
): Promise<boolean> {
  const d = decision.detail ?? {};
  const resumed =
    d.decision === 'approve'
      ? await sendTaskSuccess(deps.sfn, wait.taskToken, {
          decision: 'approve',
          step: wait.step,
          decidedBy: decision.actor,
          ...(d.resolution === undefined ? {} : { resolution: d.resolution }),
        })
      : await sendTaskFailure(
          deps.sfn,
          wait.taskToken,
          REJECTED_ERROR,
          typeof d.comment === 'string' && d.comment !== ''
            ? d.comment
            : `rejected by ${decision.actor ?? 'an approver'}`,
        );
  await deps.engine.ledger.clearWait(job.tenantId, job.jobId, { taskToken: wait.taskToken, to: 'RUNNING' });
  return resumed;
}

/** Kind of the latest wait requested for this step (to find its decision once the wait is gone). */
function lastDecisionKind(entries: readonly LedgerEntry[], step: string): DecisionKind | undefined {
  const last = entries.findLast(
    (e) => e.step === step && (e.type === WAIT_ENTRY.approval || e.type === WAIT_ENTRY.review),
  );
  if (!last) return undefined;
  return last.type === WAIT_ENTRY.approval ? 'approval' : 'review';
}

function sameDecision(entry: Pick<LedgerEntry, 'detail'>, input: DecisionBody): boolean {
  return (
    entry.detail?.decision === input.decision && (entry.detail?.resolution ?? undefined) === input.resolution
  );
}

function notWaiting(job: Job, step: string, recorded: LedgerEntry | undefined): ConflictError {
  if (recorded) {
    return new ConflictError(
      'already_decided',
      `step ${step} was already decided (${String(recorded.detail?.decision)} by ${recorded.actor ?? 'someone'})`,
      { details: { status: job.status, decision: recorded.detail?.decision, decidedBy: recorded.actor } },
    );
  }
  const now = job.wait
    ? `it is waiting for ${job.wait.kind} at step ${job.wait.step}`
    : `its status is ${job.status}`;
  return new ConflictError(
    'not_waiting',
    `job ${job.jobId} is not waiting for a decision on step ${step}: ${now}`,
    {
      details: {
        status: job.status,
        ...(job.wait ? { waitingFor: { kind: job.wait.kind, step: job.wait.step } } : {}),
      },
    },
  );
}

function result(
  job: Job,
  entry: Pick<LedgerEntry, 'actor' | 'detail' | 'step'>,
  replayed: boolean,
  resumed: boolean,
): DecisionResult {
  const d = entry.detail ?? {};
  return {
    jobId: job.jobId,
    step: entry.step ?? '',
    decision: d.decision === 'reject' ? 'reject' : 'approve',
    ...(d.resolution === 'done' || d.resolution === 'absent' ? { resolution: d.resolution } : {}),
    decidedBy: entry.actor ?? String(d.decidedBy ?? ''),
    replayed,
    resumed,
  };
}
