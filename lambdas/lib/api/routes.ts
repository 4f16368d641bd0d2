import type { Principal, Role } from '../auth/api-keys.ts';
import { cancelJob } from '../jobs/cancel.ts';
import { decide } from '../jobs/decide.ts';
import { completeMfa } from '../jobs/mfa.ts';
import { submitJob } from '../jobs/submit.ts';
import { handleAnchorWebhook } from '../webhooks/anchor.ts';
import { ACCOUNT_ROUTES, REPORT_ROUTES } from './account-routes.ts';
import { jsonBody, rawBody } from './body.ts';
import { type ApiDeps, findPlaybook } from './deps.ts';
import { BadRequestError } from './errors.ts';
import { type HttpApiEvent, header } from './events.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { fieldIssues, ListJobsQuerySchema } from './schemas.ts';
import { jobLinks, toEntryView, toJobView } from './views.ts';

/**
 * The API's routes: one table used by the handler, the local server (which routes need a
 * key) and the CDK stack (one API Gateway route per entry, the authorizer where `auth`).
 */

export interface RouteRequest {
  event: HttpApiEvent;
  deps: ApiDeps;
  /** Present on routes with `auth: true`. */
  principal: Principal;
  params: Record<string, string>;
}

export interface RouteResponse {
  statusCode: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface Route {
  method: 'GET' | 'POST' | 'DELETE';
  /** API Gateway route syntax: `/jobs/{jobId}`. */
  path: string;
  /** Needs `Authorization: Bearer <api key>` (the Lambda authorizer in AWS). */
  auth: boolean;
  /** One of these roles is needed (admin holds every role); empty = any key of the tenant. */
  roles: Role[];
  handle(req: RouteRequest): Promise<RouteResponse>;
}

const ANY_ROLE: Role[] = [];

function ok(body: unknown, statusCode = 200, headers?: Record<string, string>): RouteResponse {
  return { statusCode, body, ...(headers ? { headers } : {}) };
}

/**
 * The API's base URL for links: configured (`BELAY_API_URL`), else where this request came
 * in (API Gateway's domain name; the local server's host), so links work without setup.
 */
export function baseUrlOf(req: Pick<RouteRequest, 'deps' | 'event'>): string {
  if (req.deps.baseUrl) return req.deps.baseUrl;
  const host = req.event.requestContext.domainName ?? header(req.event.headers, 'host');
  if (!host) return '';
  const proto = header(req.event.headers, 'x-forwarded-proto') ?? 'https';
  return `${proto}://${host}`;
}

function jobParam(req: RouteRequest): string {
  return req.params.jobId ?? '';
}

function body(req: RouteRequest): unknown {
  return jsonBody(req.event, req.deps.maxBodyBytes);
}

export const ROUTES: readonly Route[] = [
  {
    method: 'POST',
    path: '/jobs',
    auth: true,
    roles: ['submitter'],
    async handle(req) {
      const result = await submitJob(
        req.deps,
        req.principal,
        body(req),
        header(req.event.headers, 'idempotency-key'),
      );
      const links = jobLinks(baseUrlOf(req), result.job.jobId);
      return ok({ job: toJobView(result.job, result.playbook), links }, result.created ? 202 : 200, {
        Location: links.self,
      });
    },
  },
  {
    method: 'GET',
    path: '/jobs',
    auth: true,
    roles: ANY_ROLE,
    async handle(req) {
      const query = ListJobsQuerySchema.safeParse(req.event.queryStringParameters ?? {});
      if (!query.success) {
        throw new BadRequestError('invalid_query', 'the query is not valid: see details', {
          details: fieldIssues(query.error, 'query'),
        });
      }
      const page = await req.deps.engine.ledger.listJobs(req.principal.tenantId, {
        limit: query.data.limit ?? 25,
        ...(query.data.status ? { status: query.data.status } : {}),
        ...(query.data.cursor ? { cursor: query.data.cursor } : {}),
      });
      return ok({
        jobs: page.jobs.map((job) => toJobView(job, findPlaybook(req.deps, job.playbook))),
        ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
      });
    },
  },
  {
    method: 'GET',
    path: '/jobs/{jobId}',
    auth: true,
    roles: ANY_ROLE,
    async handle(req) {
      const job = await req.deps.engine.ledger.getJob(req.principal.tenantId, jobParam(req));
      const view = toJobView(job, findPlaybook(req.deps, job.playbook));
      const { capacity } = req.deps.engine;
      if (job.status === 'QUEUED' && capacity.queuePosition) {
        view.queue = {
          position: await capacity.queuePosition(job.tenantId, job.jobId, job.createdAt),
          since: job.queuedSince ?? job.createdAt,
        };
      }
      return ok({ job: view, links: jobLinks(baseUrlOf(req), job.jobId) });
    },
  },
  {
    method: 'GET',
    path: '/jobs/{jobId}/ledger',
    auth: true,
    roles: ANY_ROLE,
    async handle(req) {
      const { job, entries } = await req.deps.engine.ledger.readJob(req.principal.tenantId, jobParam(req));
      return ok({ jobId: job.jobId, status: job.status, entries: entries.map(toEntryView) });
    },
  },
  {
    method: 'POST',
    path: '/jobs/{jobId}/decisions',
    auth: true,
    roles: ['approver'],
    async handle(req) {
      return ok(await decide(req.deps, req.principal, jobParam(req), body(req)));
    },
  },
  {
    method: 'POST',
    path: '/jobs/{jobId}/mfa',
    auth: true,
    roles: ANY_ROLE,
    async handle(req) {
      return ok(await completeMfa(req.deps, req.principal, jobParam(req), body(req)));
    },
  },
  {
    method: 'POST',
    path: '/jobs/{jobId}/cancel',
    auth: true,
    roles: ['submitter'],
    async handle(req) {
      const { job, cancelled } = await cancelJob(req.deps, req.principal, jobParam(req));
      return ok({
        job: toJobView(job, findPlaybook(req.deps, job.playbook)),
        links: jobLinks(baseUrlOf(req), job.jobId),
        cancelled,
      });
    },
  },
  {
    method: 'POST',
    path: '/webhooks/anchor',
    auth: false,
    roles: ANY_ROLE,
    async handle(req) {
      const raw = rawBody(req.event, req.deps.maxBodyBytes);
      return ok(await handleAnchorWebhook(req.deps, { headers: req.event.headers, rawBody: raw }));
    },
  },
  ...ACCOUNT_ROUTES,
  ...REPORT_ROUTES,
  {
    method: 'GET',
    path: '/openapi.json',
    auth: false,
    roles: ANY_ROLE,
    async handle(req) {
      return ok(buildOpenApiDocument(baseUrlOf(req)));
    },
  },
];
