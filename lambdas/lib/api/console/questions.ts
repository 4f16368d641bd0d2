import { hasRole, type Principal } from '../../auth/api-keys.ts';
import { WAIT_ENTRY } from '../../engine/waits.ts';
import type { Job, LedgerEntry, PendingWait } from '../../ledger/types.ts';
import type { Playbook } from '../../playbooks/contract.ts';
import { redact, redactText } from '../../redact.ts';
import type { EffectView } from '../jobs/schemas.ts';
import { effectView } from '../jobs/views.ts';
import { fields, jobHref, screenshotFigure, time } from './format.ts';
import { html, type SafeHtml } from './html.ts';

/**
 * What a waiting job asks a person, and the form that answers it, in one place for the inbox
 * and the job page. A question is rendered from its wait and the entries around it, not from
 * a fixed list of kinds: a wait whose reason this file does not know (an agent's `ask_person`
 * question, say) still shows its reason, the `question` its entry carries and what the job
 * found, with the approve/reject form.
 */

export interface Question {
  job: Job;
  wait: PendingWait;
  stepTitle: string;
  heading: string;
  /** What the person should know, most important first. */
  lines: string[];
  /** What the job found (a probe's finding, what the page showed). */
  finding?: string;
  /** The latest entry up to the request that carries a screenshot. */
  shot?: LedgerEntry;
  /** Reviews of an uncertain write also ask what happened (`resolution`). */
  asksResolution: boolean;
  /** A write approved on its effect: what it would submit (and what changed since an earlier approval). */
  effect?: EffectView;
}

const KNOWN: Readonly<Record<string, (step: string, app: string) => { heading: string; line: string }>> = {
  approve_effect: (step) => ({
    heading: `Approve what step ${step} will submit?`,
    line: 'The job filled the form up to the point of submitting it. These are the fields and values it would send, as the page holds them (secrets masked). Approve to send exactly this; if anything differs when the job submits, it sends nothing and asks you again.',
  }),
  effect_changed: (step) => ({
    heading: `What step ${step} would submit has changed`,
    line: 'After your approval the form no longer held what you approved, so the job sent nothing. Here is what changed and what it would send now: approve to send this, reject to stop the job.',
  }),
  needs_approval: (step) => ({
    heading: `Approve step ${step}?`,
    line: 'The job waits for your approval before it runs this step. Approve to let it run; reject to stop the job.',
  }),
  layout_changed: (step) => ({
    heading: `The page of step ${step} has changed`,
    line: 'The page no longer looks as the playbook expects, so the job did not act on it. Look at the page as it is now: approve to try the step again (once the page is right), reject to stop the job.',
  }),
  unknown: (step) => ({
    heading: `Did step ${step} happen?`,
    line: 'The job cannot tell whether this write took effect: the application did not confirm it and its own records were inconclusive. Check the application, then say what happened.',
  }),
  uncertain: (step) => ({
    heading: `Did step ${step} happen?`,
    line: 'The job cannot tell whether this write took effect. Check the application, then say what happened.',
  }),
  takeover: (step, app) => ({
    heading: `Take over the browser at step ${step}`,
    line: `The step asks a person to act in the live ${app} browser. Do it in the live view, then press Done: the job checks that the page is where the step goes on from, and goes on from its checkpoint (if it is not, it says so and keeps waiting).`,
  }),
  mfa_required: (_step, app) => ({
    heading: `A one-time code for ${app}`,
    line: 'Signing in needs a one-time code that was sent to the account holder. Enter it to let the job go on.',
  }),
};

/** The question a waiting job asks, or `undefined` when it waits for nothing. */
export function questionOf(
  job: Job,
  entries: readonly LedgerEntry[],
  playbook: Playbook | undefined,
): Question | undefined {
  const wait = job.wait;
  if (!wait) return undefined;
  const step = playbook?.steps[wait.stepIndex];
  const stepTitle = step?.id === wait.step ? step.title : '';
  const requestIndex = entries.findLastIndex((e) => e.type === WAIT_ENTRY[wait.kind] && e.step === wait.step);
  const upTo = requestIndex < 0 ? entries : entries.slice(0, requestIndex + 1);
  const request = requestIndex < 0 ? undefined : entries[requestIndex];
  // The ledger keeps texts exact (numbers included): what a person reads here is redacted.
  const reason = wait.reason ?? redactText(String(request?.detail?.reason ?? wait.kind));
  const known = KNOWN[
    wait.kind === 'mfa' ? 'mfa_required' : wait.kind === 'takeover' ? 'takeover' : reason
  ]?.(wait.step, step?.app ?? 'the application');
  const asked =
    typeof request?.detail?.question === 'string' ? redactText(request.detail.question) : undefined;
  const lastProgress = upTo.findLastIndex((e) => e.type === 'step-completed');
  const found = upTo
    .slice(lastProgress + 1)
    .findLast((e) => e.step === wait.step && typeof e.detail?.finding === 'string')?.detail?.finding as
    | string
    | undefined;
  const finding = found === undefined ? undefined : redactText(found);
  const shot = upTo.findLast((e) => e.screenshot);
  const effect = wait.kind === 'approval' ? effectView(entries, wait.step) : undefined;
  const lines = [
    ...(asked ? [asked] : []),
    known?.line ?? `The job waits for a person at step ${wait.step} (${reason}).`,
  ];
  return {
    job,
    wait,
    stepTitle,
    heading: known?.heading ?? (asked ? 'The job asks you' : `Step ${wait.step} waits for you`),
    lines,
    ...(finding ? { finding } : {}),
    ...(shot ? { shot } : {}),
    asksResolution: wait.kind === 'review' && (reason === 'unknown' || reason === 'uncertain'),
    ...(effect ? { effect } : {}),
  };
}

/** The effect a person approves: each field and value, and what changed since the approval before. */
function effectTable(effect: EffectView): SafeHtml {
  return html`${
    effect.changes?.length
      ? html`<h4>What changed since it was approved${effect.approvedBy ? html` by <code>${effect.approvedBy}</code>` : ''}</h4>
    <table class="effect-changes"><thead><tr><th scope="col">Field or action</th><th scope="col">Approved</th><th scope="col">Now</th></tr></thead><tbody>${effect.changes.map(
      (c) =>
        html`<tr><th scope="row">${c.name}</th><td>${c.before ?? '(none)'}</td><td>${c.after ?? '(none)'}</td></tr>`,
    )}</tbody></table>`
      : ''
  }
  <h4>What the job would submit</h4>
  <table class="effect"><thead><tr><th scope="col">Field</th><th scope="col">Value</th></tr></thead><tbody>${effect.fields.map(
    (f) => html`<tr><th scope="row">${f.name}</th><td>${f.value}</td></tr>`,
  )}</tbody></table>${
    effect.actions?.length
      ? html`
  <h4>What the agent will do (the last action commits)</h4>
  <ol class="effect-actions">${effect.actions.map((a) => html`<li><code>${a}</code></li>`)}</ol>`
      : ''
  }
  <p class="note">Effect <code>${effect.hash.slice(0, 16)}</code>: your approval is recorded against it.</p>`;
}

const ACTION_OF: Readonly<Record<PendingWait['kind'], string>> = {
  approval: 'decisions',
  review: 'decisions',
  mfa: 'mfa',
  takeover: 'takeover',
};

/**
 * The question as a card with its answer form (buttons only for those who may answer). A
 * takeover shows its live view where the page passes one (the job page: its CSP frames that
 * origin alone); elsewhere it links to the job page.
 */
export function questionCard(q: Question, principal: Principal, csrf: string, liveView?: string): SafeHtml {
  const { job, wait } = q;
  const id = `${job.jobId}-${wait.kind}`;
  const action = `/console/api/jobs/${encodeURIComponent(job.jobId)}/${ACTION_OF[wait.kind]}`;
  const mayDecide = hasRole(principal, 'approver');
  let form: SafeHtml;
  if (wait.kind === 'takeover' && !mayDecide) {
    form = html`<p class="note">Taking over the browser needs the approver role; your key has ${principal.roles.join(', ')}.</p>`;
  } else if (wait.kind === 'takeover') {
    form = html`${
      liveView
        ? html`<div class="live">
        <iframe class="live-view" src="${liveView}" title="Live browser of job ${job.jobId}" sandbox="allow-same-origin allow-scripts" allow="clipboard-read; clipboard-write" referrerpolicy="no-referrer"></iframe>
        <p><a href="${liveView}" target="_blank" rel="noopener noreferrer">Open the live view in a new tab</a> (the link works for a short while; this page makes a new one each time it is opened).</p>
      </div>`
        : html`<p><a href="${jobHref(job.jobId)}">Open the job’s page</a> to act in its live browser.</p>`
    }
    <form class="answer" method="post" action="${action}" data-belay-form="takeover" data-return="${jobHref(job.jobId)}">
      <input type="hidden" name="csrf" value="${csrf}">
      <input type="hidden" name="done" value="true">
      <label for="comment-${id}">Comment (kept in the ledger with your completion)</label>
      <textarea id="comment-${id}" name="comment" maxlength="2000" rows="2"></textarea>
      <div class="buttons"><button type="submit">Done</button></div>
    </form>`;
  } else if (wait.kind === 'mfa') {
    form = html`<form class="answer" method="post" action="${action}" data-belay-form="mfa" data-return="${jobHref(job.jobId)}">
      <input type="hidden" name="csrf" value="${csrf}">
      <label for="code-${id}">One-time code for job ${job.jobId}</label>
      <input id="code-${id}" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[A-Za-z0-9]{4,12}" required>
      <button type="submit">Send code</button>
    </form>`;
  } else if (!mayDecide) {
    form = html`<p class="note">Deciding needs the approver role; your key has ${principal.roles.join(', ')}.</p>`;
  } else {
    form = html`<form class="answer" method="post" action="${action}" data-belay-form="decision" data-return="${jobHref(job.jobId)}">
      <input type="hidden" name="csrf" value="${csrf}">
      <input type="hidden" name="step" value="${wait.step}">
      ${q.effect ? html`<input type="hidden" name="effectHash" value="${q.effect.hash}">` : ''}
      ${
        q.asksResolution
          ? html`<fieldset><legend>What happened in the application?</legend>
        <label><input type="radio" name="resolution" value="done" required> It happened: record it as done</label>
        <label><input type="radio" name="resolution" value="absent"> It did not happen: run the step again</label>
      </fieldset>`
          : ''
      }
      <label for="comment-${id}">Comment (kept in the ledger with your decision)</label>
      <textarea id="comment-${id}" name="comment" maxlength="2000" rows="2"></textarea>
      <div class="buttons">
        <button type="submit" name="decision" value="approve">Approve</button>
        <button type="submit" name="decision" value="reject" class="danger">Reject</button>
      </div>
    </form>`;
  }
  return html`<article class="question" aria-labelledby="q-${id}">
    <h3 id="q-${id}">${q.heading}</h3>
    <p class="meta">Job <a href="${jobHref(job.jobId)}">${job.jobId}</a> (${job.playbook}), step ${wait.stepIndex + 1} of ${job.stepCount}${q.stepTitle ? `: ${q.stepTitle}` : ''}. Asked ${time(wait.requestedAt)}, expires ${time(wait.expiresAt)}.</p>
    ${q.lines.map((l) => html`<p>${l}</p>`)}
    ${q.finding ? html`<p class="finding"><strong>What the job found:</strong> ${q.finding}</p>` : ''}
    ${q.effect ? effectTable(q.effect) : ''}
    ${wait.kind === 'approval' ? html`<h4>The job's inputs (redacted)</h4>${fields(redact(job.inputs), 'Inputs')}` : ''}
    ${q.shot ? screenshotFigure(job.jobId, q.shot) : html`<p class="note">No screenshot of the page was kept for this question.</p>`}
    ${form}
  </article>`;
}
