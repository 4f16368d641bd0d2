/**
 * The takeover's pure parts: the question card (the live view only where the page passes one,
 * a Done form with the CSRF token, nothing to press without the approver role), the console's
 * CSP (a frame source only when asked, origins only), the webhook's payload (no live view), which
 * live views a person is shown (interactive for an approver of a takeover only), and when a step's
 * `ctx.takeover` counts as answered. No network.
 */
import { describe, expect, it } from 'vitest';
import { consoleCsp } from '../../../lambdas/lib/api/console/layout.ts';
import { jobLiveViews } from '../../../lambdas/lib/api/console/live-views.ts';
import { questionCard, questionOf } from '../../../lambdas/lib/api/console/questions.ts';
import type { Principal } from '../../../lambdas/lib/auth/api-keys.ts';
import type { LiveViewAccess } from '../../../lambdas/lib/browser/live-view-token.ts';
import type { BrowserAdapter } from '../../../lambdas/lib/browser/types.ts';
import { takeoverDone } from '../../../lambdas/lib/engine/context.ts';
import { type Job, type LedgerEntry, ZERO_COST } from '../../../lambdas/lib/ledger/types.ts';
import { waitPayload } from '../../../lambdas/lib/notifications/deliver.ts';
import { checkoutPlaybook } from '../../../playbooks/checkout/index.ts';

const APPROVER: Principal = { tenantId: 't', roles: ['approver'], keyId: 'blk_approver0001' };
const SUBMITTER: Principal = { tenantId: 't', roles: ['submitter'], keyId: 'blk_submitter001' };
const LIVE = 'http://127.0.0.1:8790/_local/sessions/s-1/live?token=abc.def';

const job: Job = {
  tenantId: 't',
  jobId: 'j1',
  requestHash: 'h',
  playbook: 'checkout@1',
  inputs: { search: 'mug' },
  accounts: { shop: 'a' },
  approvals: [],
  retryBudget: 3,
  status: 'WAITING_TAKEOVER',
  nextStep: 2,
  stepCount: 14,
  sessions: { shop: { sessionId: 's-1', openedAt: '2026-12-01T10:00:00.000Z', liveViewUrl: LIVE } },
  retriesUsed: 0,
  cost: { ...ZERO_COST },
  version: 3,
  createdAt: '2026-12-01T10:00:00.000Z',
  updatedAt: '2026-12-01T10:00:00.000Z',
  wait: {
    kind: 'takeover',
    step: 'search',
    stepIndex: 2,
    taskToken: 'secret-token',
    expiresAt: '2026-12-01T10:25:00.000Z',
    requestedAt: '2026-12-01T10:00:00.000Z',
    reason: 'takeover',
  },
};

const entry = (e: Partial<LedgerEntry> & Pick<LedgerEntry, 'type'>): LedgerEntry => ({
  tenantId: 't',
  jobId: 'j1',
  entryId: Math.random().toString(36).slice(2),
  cost: { ...ZERO_COST },
  at: '2026-12-01T10:00:00.000Z',
  ...e,
});

const asked = [
  entry({
    type: 'takeover-requested',
    step: 'search',
    detail: { reason: 'takeover', question: 'Solve the <b>check</b>' },
  }),
];

describe('Function: questionCard (takeover)', () => {
  it('shows the question, the live view framed and linked, and a Done form with the CSRF token', () => {
    const q = questionOf(job, asked, checkoutPlaybook);
    if (!q) throw new Error('no question');
    expect(q.heading).toBe('Take over the browser at step search');
    const card = questionCard(q, APPROVER, 'csrf-123', LIVE).value;
    expect(card).toContain('Solve the &lt;b&gt;check&lt;/b&gt;');
    expect(card).toContain(`<iframe class="live-view" src="${LIVE}"`);
    expect(card).toContain('sandbox="allow-same-origin allow-scripts"');
    expect(card).toContain('action="/console/api/jobs/j1/takeover"');
    expect(card).toContain('name="csrf" value="csrf-123"');
    expect(card).toContain('name="done" value="true"');
    expect(card).toContain('>Done</button>');
    expect(card).not.toContain('secret-token');
  });

  it('links to the job page where no live view is passed (the inbox), and offers nothing without the approver role', () => {
    const q = questionOf(job, asked, checkoutPlaybook);
    if (!q) throw new Error('no question');
    const inbox = questionCard(q, APPROVER, 'csrf-123').value;
    expect(inbox).not.toContain('<iframe');
    expect(inbox).toContain('href="/console/jobs/j1"');
    const submitter = questionCard(q, SUBMITTER, 'csrf-123', LIVE).value;
    expect(submitter).not.toContain('<iframe');
    expect(submitter).not.toContain('<form class="answer"');
    expect(submitter).toContain('needs the approver role');
  });
});

describe('Function: consoleCsp', () => {
  it('frames nothing unless a page asks, and then only the origin', () => {
    expect(consoleCsp()).not.toContain('frame-src');
    const csp = consoleCsp([], [LIVE]);
    expect(csp).toContain('frame-src http://127.0.0.1:8790;');
    expect(csp).not.toContain('token');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(consoleCsp([], ['javascript:alert(1)'])).not.toContain('frame-src');
  });
});

describe('Function: waitPayload (takeover)', () => {
  it('carries the question and a link to the decision page, never a live view or its token', () => {
    // An event from before the change may still carry a live view: it is not passed on.
    const notice = {
      tenantId: 't',
      jobId: 'j1',
      kind: 'takeover',
      step: 'search',
      reason: 'takeover',
      question: 'Solve the check',
      liveViewUrl: LIVE,
    };
    const body = waitPayload(notice, 'https://api.example', 'dlv_1', new Date('2026-12-01T10:00:00Z')) as {
      text: string;
      links: Record<string, string>;
      job: Record<string, string>;
    };
    expect(body.text).toBe(
      "Belay: job j1 waits for a person to act in its browser at step search: Solve the check. An approver opens its live view and presses Done on the job's page: https://api.example/console/jobs/j1",
    );
    expect(body.links.console).toBe('https://api.example/console/jobs/j1');
    expect(body.links.liveView).toBeUndefined();
    expect(JSON.stringify(body)).not.toContain('token=');
    expect(JSON.stringify(body)).not.toContain('/live');
    expect(body.job.question).toBe('Solve the check');
  });
});

describe('Function: jobLiveViews', () => {
  const asked: { access: LiveViewAccess; sessionId: string }[] = [];
  const link: BrowserAdapter['liveViewLink'] = (session, _tenant, access) => {
    asked.push({ access, sessionId: session.sessionId });
    return `${session.liveViewUrl}?i=${access.interactive}`;
  };
  const doing: Job = { ...job, status: 'RUNNING' };
  delete (doing as Partial<Job>).wait;

  it('gives an approver the interactive view of the waiting step’s session, until the wait ends', () => {
    asked.length = 0;
    const views = jobLiveViews(job, checkoutPlaybook, APPROVER, link);
    expect(views.takeover).toBe(`${LIVE}?i=true`);
    expect(views.watch).toEqual({ shop: `${LIVE}?i=false` });
    expect(asked.find((a) => a.access.interactive)?.access.untilMs).toBe(
      Date.parse(job.wait?.expiresAt ?? ''),
    );
  });

  it.each([
    ['an approver of a job doing its own steps', doing, APPROVER],
    ['a submitter of a job waiting for a takeover', job, SUBMITTER],
    ['a submitter of a running job', doing, SUBMITTER],
  ] as const)('gives %s no interactive link, only a watch-only one', (_what, shown, who) => {
    asked.length = 0;
    const views = jobLiveViews(shown, checkoutPlaybook, who, link);
    expect(views.takeover).toBeUndefined();
    expect(asked.every((a) => !a.access.interactive)).toBe(true);
    expect(views.watch).toEqual({ shop: `${LIVE}?i=false` });
  });

  it('shows nothing of a finished job or an ended session', () => {
    expect(jobLiveViews({ ...job, status: 'SUCCEEDED' }, checkoutPlaybook, APPROVER, link)).toEqual({
      watch: {},
    });
    const ended: Job = {
      ...job,
      sessions: { shop: { ...job.sessions.shop, endedAt: job.createdAt } as Job['sessions'][string] },
    };
    expect(jobLiveViews(ended, checkoutPlaybook, APPROVER, link)).toEqual({ watch: {} });
  });
});

describe('Function: takeoverDone', () => {
  it.each([
    ['asked, not answered', ['takeover-requested'], false],
    ['asked and answered', ['takeover-requested', 'takeover-completed'], true],
    ['answered, then the attempt failed', ['takeover-requested', 'takeover-completed', 'step-failed'], false],
    ['answered, then asked again', ['takeover-requested', 'takeover-completed', 'takeover-requested'], false],
    [
      'answered, then the step completed',
      ['takeover-requested', 'takeover-completed', 'step-completed'],
      false,
    ],
  ] as const)('%s: %s', (_what, types, done) => {
    const entries = types.map((type) => entry({ type, step: 'search' }));
    // Another step's entries change nothing.
    entries.push(entry({ type: 'step-failed', step: 'other' }));
    expect(takeoverDone(entries, 'search')).toBe(done);
  });
});
