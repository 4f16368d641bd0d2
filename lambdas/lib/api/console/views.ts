import { JOB_STATUSES, type Job, type JobStatus } from '../../ledger/types.ts';
import { findPlaybook } from '../deps.ts';
import { readScreenshot, screenshotHeaders } from '../evidence/screenshots.ts';
import { rawResponse } from '../route.ts';
import { ACCOUNTS_PAGE } from './accounts.ts';
import { type ConsolePageSpec, htmlPage } from './handle.ts';
import { HEALTH_PAGE } from './health.ts';
import { jobLiveViews } from './live-views.ts';
import { inboxBody, jobBody, jobsBody } from './pages.ts';
import { type Question, questionOf } from './questions.ts';

/** The console's pages: what each reads (always for the session's tenant) and renders. */

const WAITING: readonly JobStatus[] = [
  'WAITING_APPROVAL',
  'WAITING_MFA',
  'WAITING_REVIEW',
  'WAITING_TAKEOVER',
];

export const CONSOLE_PAGES: readonly ConsolePageSpec[] = [
  {
    path: '/console/jobs',
    title: () => 'Jobs',
    current: 'jobs',
    refreshSeconds: 5,
    async render(req, session) {
      const q = req.event.queryStringParameters ?? {};
      const status = (JOB_STATUSES as readonly string[]).includes(q.status ?? '')
        ? (q.status as JobStatus)
        : undefined;
      const page = await req.deps.engine.ledger.listJobs(session.principal.tenantId, {
        limit: 50,
        ...(status ? { status } : {}),
        ...(q.cursor ? { cursor: q.cursor } : {}),
      });
      return jobsBody(
        page.jobs.map((job) => ({ job, playbook: findPlaybook(req.deps, job.playbook) })),
        { ...(status ? { status } : {}), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) },
      );
    },
  },
  {
    path: '/console/jobs/{jobId}',
    title: (req) => `Job ${req.params.jobId ?? ''}`,
    current: 'jobs',
    refreshSeconds: 5,
    async render(req, session) {
      const { job, entries } = await req.deps.engine.ledger.readJob(
        session.principal.tenantId,
        req.params.jobId ?? '',
      );
      const playbook = findPlaybook(req.deps, job.playbook);
      const views = jobLiveViews(job, playbook, session.principal, req.deps.engine.browser.liveViewLink);
      const liveView = views.takeover;
      const body = jobBody({
        liveViewLinks: views.watch,
        job,
        entries,
        playbook,
        question: questionOf(job, entries, playbook),
        principal: session.principal,
        csrf: session.csrf,
        ...(liveView ? { liveView } : {}),
      });
      if (!liveView) return body;
      // Only this page, and only while it shows a takeover, may frame the live view's origin.
      const frame = {
        title: `Job ${job.jobId}`,
        current: 'jobs',
        refreshSeconds: 5,
        frameSources: [liveView],
      } as const;
      return htmlPage(200, frame, session, body);
    },
  },
  {
    path: '/console/jobs/{jobId}/screenshots/{name}',
    title: () => 'Screenshot',
    async render(req, session) {
      const { ref, body } = await readScreenshot(
        req.deps,
        session.principal.tenantId,
        req.params.jobId ?? '',
        req.params.name ?? '',
      );
      return rawResponse(200, ref.contentType, body, { headers: screenshotHeaders(ref) });
    },
  },
  {
    path: '/console/inbox',
    title: () => 'Inbox',
    current: 'inbox',
    refreshSeconds: 5,
    async render(req, session) {
      const { tenantId } = session.principal;
      const waiting: Job[] = [];
      for (const status of WAITING) {
        waiting.push(...(await req.deps.engine.ledger.listJobs(tenantId, { status, limit: 25 })).jobs);
      }
      waiting.sort((a, b) => (a.wait?.requestedAt ?? '').localeCompare(b.wait?.requestedAt ?? ''));
      const questions: Question[] = [];
      for (const job of waiting) {
        const { job: fresh, entries } = await req.deps.engine.ledger.readJob(tenantId, job.jobId);
        const q = questionOf(fresh, entries, findPlaybook(req.deps, fresh.playbook));
        if (q) questions.push(q);
      }
      return inboxBody(questions, session.principal, session.csrf);
    },
  },
  ACCOUNTS_PAGE,
  HEALTH_PAGE,
];
