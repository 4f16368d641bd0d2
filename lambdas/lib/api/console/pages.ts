import { hasRole, type Principal } from '../../auth/api-keys.ts';
import type { Job, JobStatus, LedgerEntry } from '../../ledger/types.ts';
import { TERMINAL_STATUSES } from '../../ledger/types.ts';
import type { Playbook } from '../../playbooks/contract.ts';
import { redact, redactText } from '../../redact.ts';
import { dollars, fields, jobHref, screenshotFigure, statusBadge, stepOf, time, waitOf } from './format.ts';
import { html, type SafeHtml, textOf } from './html.ts';
import { type Question, questionCard } from './questions.ts';

/** The console's pages (their bodies; `consolePage` frames them). Every text from a job or its ledger goes through `html`. */

export function signInBody(error: string | undefined): SafeHtml {
  return html`<h1>Sign in</h1>
  <p>Sign in with a Belay API key. The key is exchanged for a session that ends after a while or when you sign out; the browser never keeps the key.</p>
  ${error ? html`<p class="error" role="alert">${error}</p>` : ''}
  <form method="post" action="/console/sign-in" class="signin">
    <label for="apiKey">API key</label>
    <input id="apiKey" name="apiKey" type="password" autocomplete="off" required spellcheck="false">
    <button type="submit">Sign in</button>
  </form>`;
}

const FILTERS: readonly (JobStatus | '')[] = [
  '',
  'QUEUED',
  'RUNNING',
  'WAITING_APPROVAL',
  'WAITING_MFA',
  'WAITING_REVIEW',
  'WAITING_TAKEOVER',
  'SUCCEEDED',
  'FAILED',
  'CANCELLED',
];

export function jobsBody(
  jobs: readonly { job: Job; playbook: Playbook | undefined }[],
  filter: { status?: JobStatus; nextCursor?: string },
): SafeHtml {
  const rows = jobs.map(
    ({ job, playbook }) => html`<tr>
      <td><a href="${jobHref(job.jobId)}">${job.jobId}</a></td>
      <td>${job.playbook}</td>
      <td>${statusBadge(job.status)}</td>
      <td>${stepOf(job, playbook)}</td>
      <td>${waitOf(job)}</td>
      <td class="num">${dollars(job.cost)}</td>
      <td>${time(job.updatedAt)}</td>
    </tr>`,
  );
  return html`<h1>Jobs</h1>
  <form method="get" action="/console/jobs" class="filter">
    <label for="status">Status</label>
    <select id="status" name="status">${FILTERS.map(
      (s) =>
        html`<option value="${s}"${s === (filter.status ?? '') ? html` selected` : ''}>${s || 'any'}</option>`,
    )}</select>
    <button type="submit">Filter</button>
  </form>
  ${
    jobs.length === 0
      ? html`<p>No jobs${filter.status ? ` with status ${filter.status}` : ''}.</p>`
      : html`<table>
    <caption>Jobs, newest first; this list refreshes by itself.</caption>
    <thead><tr><th scope="col">Job</th><th scope="col">Playbook</th><th scope="col">Status</th><th scope="col">Step</th><th scope="col">Waiting for</th><th scope="col">Cost</th><th scope="col">Updated</th></tr></thead>
    <tbody>${rows}</tbody>
  </table>`
  }
  ${
    filter.nextCursor
      ? html`<p><a href="/console/jobs?${new URLSearchParams({ ...(filter.status ? { status: filter.status } : {}), cursor: filter.nextCursor }).toString()}">Older jobs</a></p>`
      : ''
  }`;
}

/** Entry types in words, for the timeline. */
const ENTRY_WORDS: Readonly<Partial<Record<LedgerEntry['type'], string>>> = {
  'job-created': 'Job submitted',
  'step-started': 'Write intent recorded (about to act)',
  'step-completed': 'Step verified',
  'step-failed': 'Attempt failed',
  'approval-requested': 'Approval requested',
  'approval-recorded': 'Decision recorded',
  'session-opened': 'Browser session opened',
  'session-replaced': 'Browser session replaced',
  'session-ended': 'Browser session ended',
  reauth: 'Signed in again',
  'mfa-requested': 'One-time code requested',
  'mfa-completed': 'Sign-in completed with a one-time code',
  reconciled: 'Uncertain write reconciled',
  'review-requested': 'Review requested',
  'review-recorded': 'Review decision recorded',
  'takeover-requested': 'A person asked to act in the live browser',
  'takeover-completed': 'A person finished in the live browser (the step’s precondition held)',
  parked: 'Parked (browser closed while waiting)',
  cancelled: 'Cancelled',
  failed: 'Failed',
  succeeded: 'Succeeded',
  invocation: 'Engine invocation',
  screenshot: 'Screenshot',
};

/** A person's decision, from the entry's detail as already redacted for the page. */
function decisionLine(entry: LedgerEntry, d: Record<string, unknown>): SafeHtml {
  if (entry.type !== 'approval-recorded' && entry.type !== 'review-recorded') return html``;
  return html`<p class="decision"><strong>${textOf(d.decision)}</strong>${d.resolution ? ` (${textOf(d.resolution)})` : ''} by <code>${entry.actor ?? textOf(d.decidedBy)}</code> at ${time(entry.at)}${
    typeof d.comment === 'string' && d.comment !== '' ? html`: “${d.comment}”` : ''
  }</p>`;
}

function timelineItem(jobId: string, entry: LedgerEntry): SafeHtml {
  const detail = entry.detail ? redact(entry.detail) : undefined;
  const { decision: _d, decidedBy: _b, comment: _c, resolution: _r, ...otherDetail } = detail ?? {};
  const shownDetail = entry.type.endsWith('-recorded') ? otherDetail : detail;
  return html`<li class="entry entry-${entry.type}">
    <p class="head">${time(entry.at)} <strong>${ENTRY_WORDS[entry.type] ?? entry.type}</strong>${entry.step ? html` · step <code>${entry.step}</code>` : ''}${entry.attempt ? ` · attempt ${entry.attempt}` : ''}${entry.actor ? html` · by <code>${redactText(entry.actor)}</code>` : ''}</p>
    ${decisionLine(entry, detail ?? {})}
    ${entry.sessionId ? html`<p class="ids">session <code>${entry.sessionId}</code>${entry.identityId ? html` · identity <code>${entry.identityId}</code>` : ''}</p>` : ''}
    ${entry.evidence ? html`<h4>Evidence</h4>${fields(redact(entry.evidence), 'Evidence')}` : ''}
    ${shownDetail && Object.keys(shownDetail).length > 0 ? fields(shownDetail, 'Details') : ''}
    ${screenshotFigure(jobId, entry)}
  </li>`;
}

export function jobBody(input: {
  job: Job;
  entries: readonly LedgerEntry[];
  playbook: Playbook | undefined;
  question: Question | undefined;
  principal: Principal;
  csrf: string;
  /** A takeover's live view, signed for this page (only the job page shows it). */
  liveView?: string;
  /** Each running session's watch-only live view, signed for this page (`jobLiveViews`). */
  liveViewLinks: Readonly<Record<string, string>>;
}): SafeHtml {
  const { job, entries, playbook, question, principal, csrf, liveView, liveViewLinks } = input;
  const running = !TERMINAL_STATUSES.includes(job.status);
  const sessions = Object.entries(job.sessions ?? {});
  const attempts = entries.filter((e) => e.type === 'step-started' || e.type === 'step-failed').length;
  const reauths = entries.filter((e) => e.type === 'reauth' || e.type === 'mfa-completed').length;
  const replaced = entries.filter((e) => e.type === 'session-replaced').length;
  return html`<h1>Job <code>${job.jobId}</code></h1>
  <dl class="summary">
    <div><dt>Status</dt><dd>${statusBadge(job.status)}</dd></div>
    <div><dt>Playbook</dt><dd>${job.playbook}</dd></div>
    <div><dt>Step</dt><dd>${stepOf(job, playbook)}</dd></div>
    <div><dt>Waiting for</dt><dd>${waitOf(job) || 'nothing'}</dd></div>
    <div><dt>Cost so far</dt><dd>${dollars(job.cost)} (${job.cost.lambdaInvocations} invocations, ${job.cost.browserSeconds.toFixed(1)} browser s, ${job.cost.humanInterventions} people)</dd></div>
    <div><dt>Retries used</dt><dd>${job.retriesUsed} of ${job.retryBudget}; ${attempts} write intents and failed attempts, ${reauths} sign-ins again, ${replaced} sessions replaced</dd></div>
    <div><dt>Submitted</dt><dd>${time(job.createdAt)}</dd></div>
    ${job.finishedAt ? html`<div><dt>Finished</dt><dd>${time(job.finishedAt)}</dd></div>` : ''}
    ${job.failure ? html`<div><dt>Failure</dt><dd>${job.failure.reason}: ${redactText(job.failure.message)}</dd></div>` : ''}
  </dl>
  <h2>Browser sessions</h2>
  ${
    sessions.length === 0
      ? html`<p>None yet.</p>`
      : html`<table><thead><tr><th scope="col">Application</th><th scope="col">Session</th><th scope="col">Identity</th><th scope="col">Opened</th><th scope="col">Live view</th></tr></thead><tbody>${sessions.map(
          ([app, s]) =>
            html`<tr><td>${app}</td><td><code>${s.sessionId}</code></td><td>${s.identityId ? html`<code>${s.identityId}</code>` : 'profile'}</td><td>${time(s.openedAt)}</td><td>${
              running && !s.endedAt && liveViewLinks[app] && /^https?:\/\//.test(liveViewLinks[app])
                ? html`<a href="${liveViewLinks[app]}" target="_blank" rel="noopener noreferrer">Watch ${app} (view only)</a>`
                : s.endedAt
                  ? html`ended ${time(s.endedAt)}`
                  : ''
            }</td></tr>`,
        )}</tbody></table>`
  }
  ${question ? html`<h2>Waiting for a person</h2>${questionCard(question, principal, csrf, liveView)}` : ''}
  ${
    running && hasRole(principal, 'submitter')
      ? html`<form method="post" action="/console/api/jobs/${encodeURIComponent(job.jobId)}/cancel" data-belay-form="cancel" data-confirm="Cancel job ${job.jobId}? Nothing more will be done." data-return="${jobHref(job.jobId)}">
      <input type="hidden" name="csrf" value="${csrf}">
      <button type="submit" class="danger">Cancel the job</button>
    </form>`
      : ''
  }
  <h2>Timeline</h2>
  <ol class="timeline">${entries.map((e) => timelineItem(job.jobId, e))}</ol>`;
}

export function inboxBody(questions: readonly Question[], principal: Principal, csrf: string): SafeHtml {
  return html`<h1>Inbox</h1>
  <p>What waits for a person: approvals, one-time codes and reviews. Answer here; the job goes on at once.</p>
  ${questions.length === 0 ? html`<p>Nothing waits for you.</p>` : questions.map((q) => questionCard(q, principal, csrf))}`;
}

export function errorPageBody(status: number, message: string): SafeHtml {
  const heading = status === 404 ? 'Not found' : status === 403 ? 'Not allowed' : 'Something went wrong';
  return html`<h1>${heading}</h1><p>${message}</p><p><a href="/console/jobs">Back to the jobs</a></p>`;
}
