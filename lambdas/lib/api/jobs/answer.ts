import type { Principal } from '../../auth/api-keys.ts';
import type { ApiDeps } from '../deps.ts';
import { BadRequestError } from '../errors.ts';
import { fieldIssues } from '../schemas.ts';
import { questionCheck } from './answer-rules.ts';
import { decide } from './decide.ts';
import { AnswerBodySchema } from './schemas.ts';

export interface AnswerResult {
  jobId: string;
  step: string;
  answeredBy: string;
  /** The answer had been recorded before (by this or an earlier request). */
  replayed: boolean;
  /** This request resumed the job. */
  resumed: boolean;
}

/**
 * Answers an agent step's question (`ask_person`) as the job's submitter: the answer is
 * recorded as the review's decision (approve, the answer as its comment), exactly as a
 * person's answer in the console is, so the step reads it when it runs again and asks no
 * model the same question twice. Only the key that submitted the job answers, and only a
 * question: approvals, codes and other reviews stay with people (`questionCheck`).
 */
export async function answerQuestion(
  deps: ApiDeps,
  principal: Principal,
  jobId: string,
  body: unknown,
): Promise<AnswerResult> {
  const parsed = AnswerBodySchema.safeParse(body);
  if (!parsed.success) {
    throw new BadRequestError(
      'invalid_request',
      'the answer is not valid: see details for the fields to fix',
      {
        details: fieldIssues(parsed.error),
      },
    );
  }
  const { step, answer } = parsed.data;
  const decided = await decide(
    deps,
    principal,
    jobId,
    { step, decision: 'approve', comment: answer },
    questionCheck(principal),
  );
  return {
    jobId: decided.jobId,
    step: decided.step,
    answeredBy: decided.decidedBy,
    replayed: decided.replayed,
    resumed: decided.resumed,
  };
}
