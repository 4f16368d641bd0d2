import { z } from 'zod';
import { AnswerBodySchema, DecisionBodySchema, ListJobsQuerySchema, MfaBodySchema } from '../jobs/schemas.ts';
import { Id } from '../schemas.ts';
import { MAX_WAIT_SECONDS } from './limits.ts';

/**
 * The tools' input schemas that are not a route's body as it is: each is built from the API's
 * own zod schemas (the fields, their checks and their messages), with the job id the route
 * takes in its path. `submit_job` and `describe_playbook` take the API's schemas directly.
 */

/** The job a tool is about (the route's path parameter). */
export const JobIdInput = { jobId: Id.meta({ description: 'The job id (submit_job returns it).' }) };

export const WaitInput = z.strictObject({
  ...JobIdInput,
  timeoutSeconds: z
    .number()
    .int()
    .min(1)
    .max(MAX_WAIT_SECONDS)
    .meta({ description: 'Return after this long even if the job is still running (the job goes on).' }),
});

/** An approval or a review (decision, step), or a sign-in's one-time code (code): one of the two. */
export const AnswerWaitInput = z
  .strictObject({
    ...JobIdInput,
    step: DecisionBodySchema.shape.step.optional(),
    decision: DecisionBodySchema.shape.decision.optional(),
    comment: DecisionBodySchema.shape.comment,
    resolution: DecisionBodySchema.shape.resolution,
    code: MfaBodySchema.shape.code,
  })
  .refine((a) => (a.decision === undefined) !== (a.code === undefined), {
    message: 'send decision (with step) for an approval or a review, or code for a sign-in',
    path: ['decision'],
  })
  .refine((a) => a.decision === undefined || a.step !== undefined, {
    message: 'name the step the job waits at',
    path: ['step'],
  });

/** `GET /jobs`'s query, with `limit` a number (the query's is a string coerced). */
export const ListJobsInput = z.strictObject({
  status: ListJobsQuerySchema.shape.status,
  limit: z.number().int().min(1).max(100).optional().meta({ description: 'At most this many (default 25).' }),
  cursor: ListJobsQuerySchema.shape.cursor.meta({ description: 'nextCursor of the previous page.' }),
});

/** `POST /jobs/{jobId}/answers`'s body, with the job id. */
export const QuestionInput = z.strictObject({ ...JobIdInput, ...AnswerBodySchema.shape });
