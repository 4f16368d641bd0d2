import { requireRole } from '../auth.ts';
import { findPlaybook } from '../deps.ts';
import { BadRequestError } from '../errors.ts';
import { header } from '../events.ts';
import { ANY_ROLE, baseUrlOf, bodyOf, ok, type Route, type RouteRequest } from '../route.ts';
import { fieldIssues } from '../schemas.ts';
import { answerQuestion } from './answer.ts';
import { answerCheckFor, channelOf } from './answer-rules.ts';
import { cancelJob } from './cancel.ts';
import { decide } from './decide.ts';
import { completeMfa } from './mfa.ts';
import { ListJobsQuerySchema } from './schemas.ts';
import { submitJob } from './submit.ts';
import { completeTakeover } from './takeover.ts';
import { agentView, effectView, jobLinks, toEntryView, toJobView } from './views.ts';

/** The jobs routes: submit, list, read, the ledger, decisions, answers, MFA, takeover, cancel. */

function jobParam(req: RouteRequest): string {
  return req.params.jobId ?? '';
}

export const JOB_ROUTES: readonly Route[] = [
  {
    method: 'POST',
    path: '/jobs',
    auth: true,
    roles: ['submitter'],
    async handle(req) {
      const result = await submitJob(
        req.deps,
        req.principal,
        bodyOf(req),
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
      // Waiting for approval: a write approved on its effect shows what it would submit.
      if (view.wait?.kind === 'approval') {
        const { entries } = await req.deps.engine.ledger.readJob(req.principal.tenantId, job.jobId);
        const effect = effectView(entries, view.wait.step);
        if (effect) view.wait.effect = effect;
      }
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
      const agent = agentView(entries);
      return ok({
        jobId: job.jobId,
        status: job.status,
        entries: entries.map(toEntryView),
        ...(agent ? { agent } : {}),
      });
    },
  },
  {
    method: 'POST',
    path: '/jobs/{jobId}/decisions',
    auth: true,
    roles: ['approver'],
    async handle(req) {
      const check = answerCheckFor(channelOf(req.event.headers), req.deps, req.principal);
      return ok(await decide(req.deps, req.principal, jobParam(req), bodyOf(req), check));
    },
  },
  {
    method: 'POST',
    path: '/jobs/{jobId}/answers',
    auth: true,
    roles: ['submitter'],
    async handle(req) {
      return ok(await answerQuestion(req.deps, req.principal, jobParam(req), bodyOf(req)));
    },
  },
  {
    method: 'POST',
    path: '/jobs/{jobId}/mfa',
    auth: true,
    roles: ANY_ROLE,
    async handle(req) {
      const channel = channelOf(req.event.headers);
      // A person enters the code they were sent; an agent only with the approver role (and the deployment's leave).
      if (channel === 'mcp') requireRole(req.principal, 'approver');
      const check = answerCheckFor(channel, req.deps, req.principal);
      return ok(await completeMfa(req.deps, req.principal, jobParam(req), bodyOf(req), check));
    },
  },
  {
    method: 'POST',
    path: '/jobs/{jobId}/takeover',
    auth: true,
    roles: ['approver'],
    async handle(req) {
      return ok(await completeTakeover(req.deps, req.principal, jobParam(req), bodyOf(req)));
    },
  },
  {
    method: 'POST',
    path: '/jobs/{jobId}/cancel',
    auth: true,
    roles: ['submitter'],
    async handle(req) {
      const { job, cancelled, settling } = await cancelJob(req.deps, req.principal, jobParam(req));
      return ok({
        job: toJobView(job, findPlaybook(req.deps, job.playbook)),
        links: jobLinks(baseUrlOf(req), job.jobId),
        cancelled,
        ...(settling ? { settling } : {}),
      });
    },
  },
];
