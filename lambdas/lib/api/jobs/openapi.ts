import { z } from 'zod';
import type { RegisterPaths } from '../openapi-kit.ts';
import { CHANNEL_HEADER } from './answer-rules.ts';
import {
  AnswerBodySchema,
  AnswerResponseSchema,
  DecisionBodySchema,
  DecisionResponseSchema,
  JobListSchema,
  JobResponseSchema,
  JobStatusSchema,
  LedgerResponseSchema,
  MfaBodySchema,
  MfaResponseSchema,
  SubmitJobBodySchema,
  TakeoverBodySchema,
  TakeoverResponseSchema,
} from './schemas.ts';

const JobIdParams = z.object({
  jobId: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/)
    .meta({ description: 'The job id.' }),
});

/** The header an MCP client's answers carry: the deployment's rules for agents apply to them. */
const ChannelHeader = z.object({
  [CHANNEL_HEADER]: z.literal('mcp').optional().meta({
    description:
      "Set by Belay's MCP server (`belay mcp`, `/mcp`): an agent answers. Allowed only for tenants in BELAY_MCP_ANSWER_TENANTS, and never with the key that submitted the job.",
  }),
});

/** The jobs paths of the OpenAPI document. */
export const registerJobPaths: RegisterPaths = (r, { security, json, error, body, common }) => {
  const COMMON_ERRORS = common;
  const JOB_ERRORS = {
    ...common,
    404: error("No such job for this tenant (another tenant's job reads the same)."),
  };
  r.registerPath({
    method: 'post',
    path: '/jobs',
    summary: 'Submit a job (role submitter)',
    description:
      'Idempotent per job id (body jobId or Idempotency-Key header): the same request again returns the existing job with 200 and starts no second execution.',
    security,
    request: {
      headers: z.object({ 'Idempotency-Key': z.string().optional() }),
      body: body(SubmitJobBodySchema),
    },
    responses: {
      202: json(JobResponseSchema, 'Accepted: the job was created and its execution started.'),
      200: json(JobResponseSchema, 'A repeat of an earlier submission: the existing job.'),
      400: error('Malformed request; details name the fields.'),
      403: error('The key lacks the submitter role.'),
      409: error('The job id is taken by a different request.'),
      413: error('The body is larger than 256 KiB.'),
      422: error('Unknown playbook, inputs that fail its schema, or accounts the tenant has not connected.'),
      ...COMMON_ERRORS,
    },
  });
  r.registerPath({
    method: 'get',
    path: '/jobs',
    summary: "List the tenant's jobs, newest first",
    security,
    request: {
      query: z.object({
        status: JobStatusSchema.optional(),
        limit: z.number().int().min(1).max(100).optional(),
        cursor: z.string().optional().meta({ description: 'nextCursor of the previous page.' }),
      }),
    },
    responses: {
      200: json(JobListSchema, 'A page of jobs.'),
      400: error('Bad status, limit or cursor.'),
      ...COMMON_ERRORS,
    },
  });
  r.registerPath({
    method: 'get',
    path: '/jobs/{jobId}',
    summary: 'Get a job: status, current step, pending wait, cost, sessions',
    security,
    request: { params: JobIdParams },
    responses: { 200: json(JobResponseSchema, 'The job.'), ...JOB_ERRORS },
  });
  r.registerPath({
    method: 'get',
    path: '/jobs/{jobId}/ledger',
    summary: "The job's audit trail (redacted)",
    security,
    request: { params: JobIdParams },
    responses: { 200: json(LedgerResponseSchema, 'Every ledger entry, oldest first.'), ...JOB_ERRORS },
  });
  r.registerPath({
    method: 'post',
    path: '/jobs/{jobId}/decisions',
    summary: 'Approve or reject a step waiting for approval or review (role approver)',
    description:
      'Recorded in the ledger with who decided before the job resumes. The same decision again returns 200 and resumes nothing.',
    security,
    request: { params: JobIdParams, headers: ChannelHeader, body: body(DecisionBodySchema) },
    responses: {
      200: json(DecisionResponseSchema, 'The decision is recorded and the job resumed.'),
      400: error('Malformed decision.'),
      403: error(
        'The key lacks the approver role; or, with Belay-Channel: mcp, agents may not answer for this tenant (agent_answers_off) or the key submitted the job (own_job).',
      ),
      409: error('That step is not waiting for a decision, or was decided otherwise.'),
      422: error('A resolution on an approval.'),
      ...JOB_ERRORS,
    },
  });
  r.registerPath({
    method: 'post',
    path: '/jobs/{jobId}/answers',
    summary: "Answer an agent step's question (the key that submitted the job)",
    description:
      "An agent step that asked (ask_person) waits for a review; its submitter answers here. Recorded like a person's answer (the review approved, the answer as its comment); the step reads it when it runs again. Approvals, codes and other reviews are not answered here.",
    security,
    request: { params: JobIdParams, body: body(AnswerBodySchema) },
    responses: {
      200: json(AnswerResponseSchema, 'The answer is recorded and the job resumed.'),
      400: error('Malformed answer.'),
      403: error('The key lacks the submitter role, or did not submit this job (not_submitter).'),
      409: error("The step is not waiting for an agent's question (not_a_question, not_waiting)."),
      ...JOB_ERRORS,
    },
  });
  r.registerPath({
    method: 'post',
    path: '/jobs/{jobId}/mfa',
    summary: 'Complete the sign-in of a job waiting for MFA',
    security,
    request: { params: JobIdParams, headers: ChannelHeader, body: body(MfaBodySchema) },
    responses: {
      200: json(MfaResponseSchema, 'Signed in; the job resumed.'),
      400: error('Send exactly one of code or completed.'),
      403: error(
        'With Belay-Channel: mcp: the key lacks the approver role, agents may not answer for this tenant, or the key submitted the job.',
      ),
      409: error('The job is not waiting for MFA, or its browser session ended.'),
      422: error('The code was not accepted (or the account is still signed out); the job keeps waiting.'),
      ...JOB_ERRORS,
    },
  });
  r.registerPath({
    method: 'post',
    path: '/jobs/{jobId}/takeover',
    summary: 'Say you are done acting in the live browser of a job waiting for a takeover (role approver)',
    security,
    request: { params: JobIdParams, body: body(TakeoverBodySchema) },
    responses: {
      200: json(TakeoverResponseSchema, 'The step’s precondition holds on the live page; the job resumed.'),
      400: error('Send {"done": true}.'),
      403: error('The key lacks the approver role.'),
      409: error('The job is not waiting for a takeover, the wait expired, or its browser session ended.'),
      422: error('The step’s precondition does not hold on the live page yet; the job keeps waiting.'),
      ...JOB_ERRORS,
    },
  });
  r.registerPath({
    method: 'post',
    path: '/jobs/{jobId}/cancel',
    summary: 'Cancel a job: stop its execution, end its sessions (role submitter)',
    security,
    request: { params: JobIdParams },
    responses: {
      200: json(
        JobResponseSchema.extend({
          cancelled: z.boolean(),
          settling: z.boolean().optional().meta({
            description:
              'A write was in flight: the job settles it (its checkpoint, or a probe of its application) and then cancels itself.',
          }),
        }),
        'Cancelled (or already was), or cancelling once the write in flight is settled.',
      ),
      403: error('The key lacks the submitter role.'),
      409: error('The job has already finished.'),
      ...JOB_ERRORS,
    },
  });
};
