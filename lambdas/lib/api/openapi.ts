import { OpenAPIRegistry, OpenApiGeneratorV31, type ResponseConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { AnchorEventSchema } from '../webhooks/anchor.ts';
import { registerAccountPaths } from './openapi-accounts.ts';
import {
  DecisionBodySchema,
  DecisionResponseSchema,
  ErrorBodySchema,
  JobListSchema,
  JobResponseSchema,
  JobStatusSchema,
  LedgerResponseSchema,
  MfaBodySchema,
  MfaResponseSchema,
  SubmitJobBodySchema,
  WebhookAckSchema,
} from './schemas.ts';

/**
 * The OpenAPI 3.1 document of the API, generated from the same zod schemas the handlers
 * validate with (`schemas.ts`), so the document cannot drift from what is enforced.
 */

const json = (schema: z.ZodType, description: string): ResponseConfig => ({
  description,
  content: { 'application/json': { schema } },
});

const error = (description: string): ResponseConfig => json(ErrorBodySchema, description);

const JobIdParams = z.object({
  jobId: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/)
    .meta({ description: 'The job id.' }),
});

const COMMON_ERRORS: Record<number, ResponseConfig> = {
  401: error('No API key, or an unknown or revoked one.'),
  429: error('Too many requests for this key; see the Retry-After header.'),
};

const JOB_ERRORS: Record<number, ResponseConfig> = {
  ...COMMON_ERRORS,
  404: error("No such job for this tenant (another tenant's job reads the same)."),
};

function registry(): OpenAPIRegistry {
  const r = new OpenAPIRegistry();
  const bearer = r.registerComponent('securitySchemes', 'apiKey', {
    type: 'http',
    scheme: 'bearer',
    description: 'A Belay API key (blk_...), bound to one tenant and its roles.',
  });
  const security = [{ [bearer.name]: [] }];
  const body = (schema: z.ZodType) => ({ required: true, content: { 'application/json': { schema } } });

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
    request: { params: JobIdParams, body: body(DecisionBodySchema) },
    responses: {
      200: json(DecisionResponseSchema, 'The decision is recorded and the job resumed.'),
      400: error('Malformed decision.'),
      403: error('The key lacks the approver role.'),
      409: error('That step is not waiting for a decision, or was decided otherwise.'),
      422: error('A resolution on an approval.'),
      ...JOB_ERRORS,
    },
  });
  r.registerPath({
    method: 'post',
    path: '/jobs/{jobId}/mfa',
    summary: 'Complete the sign-in of a job waiting for MFA',
    security,
    request: { params: JobIdParams, body: body(MfaBodySchema) },
    responses: {
      200: json(MfaResponseSchema, 'Signed in; the job resumed.'),
      400: error('Send exactly one of code or completed.'),
      409: error('The job is not waiting for MFA, or its browser session ended.'),
      422: error('The code was not accepted (or the account is still signed out); the job keeps waiting.'),
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
      200: json(JobResponseSchema.extend({ cancelled: z.boolean() }), 'Cancelled (or already was).'),
      403: error('The key lacks the submitter role.'),
      409: error('The job has already finished.'),
      ...JOB_ERRORS,
    },
  });
  registerAccountPaths(r, { security, json, error, common: COMMON_ERRORS });
  r.registerPath({
    method: 'post',
    path: '/webhooks/anchor',
    summary: "Anchor's webhook deliveries (signed with HMAC-SHA256)",
    request: {
      headers: z.object({ 'Anchor-Signature': z.string(), 'Anchor-Timestamp': z.string() }),
      body: body(AnchorEventSchema),
    },
    responses: {
      200: json(WebhookAckSchema, 'Received.'),
      400: error('Not an Anchor event.'),
      401: error('Missing, stale or wrong signature.'),
      409: error('The event was already received (replay).'),
      413: error('The body is larger than 256 KiB.'),
    },
  });
  r.registerPath({
    method: 'get',
    path: '/openapi.json',
    summary: 'This document',
    responses: {
      200: {
        description: 'OpenAPI 3.1',
        content: { 'application/json': { schema: z.object({}).passthrough() } },
      },
    },
  });
  return r;
}

let cached: ReturnType<OpenApiGeneratorV31['generateDocument']> | undefined;
let cachedFor: string | undefined;

/** The OpenAPI 3.1 document; `baseUrl` becomes its server (omitted when empty). */
export function buildOpenApiDocument(baseUrl = ''): ReturnType<OpenApiGeneratorV31['generateDocument']> {
  if (cached && cachedFor === baseUrl) return cached;
  const generator = new OpenApiGeneratorV31(registry().definitions);
  cached = generator.generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Belay API',
      version: '1.0.0',
      description:
        'Durable long-running browser jobs: submit jobs, follow them, approve their steps, complete their sign-ins, cancel them.',
    },
    ...(baseUrl ? { servers: [{ url: baseUrl }] } : {}),
  });
  cachedFor = baseUrl;
  return cached;
}
