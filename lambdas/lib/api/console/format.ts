import { priceCost } from '../../cost/rates.ts';
import type { Cost, Job, LedgerEntry, PendingWait } from '../../ledger/types.ts';
import type { Playbook } from '../../playbooks/contract.ts';
import { screenshotNameOf } from '../evidence/screenshots.ts';
import { html, type SafeHtml } from './html.ts';

/** Small pieces of the console's pages, shared by the lists, the job page and the inbox. */

export function dollars(cost: Cost): string {
  const total = priceCost(cost).total;
  return `$${total < 0.01 ? total.toFixed(4) : total.toFixed(2)}`;
}

export function statusBadge(status: string): SafeHtml {
  return html`<span class="status status-${status.toLowerCase()}">${status}</span>`;
}

export function stepOf(job: Job, playbook: Playbook | undefined): string {
  if (job.nextStep >= job.stepCount) return `${job.stepCount}/${job.stepCount}`;
  const title = playbook?.steps[job.nextStep]?.title;
  return `${job.nextStep + 1}/${job.stepCount}${title ? ` ${title}` : ''}`;
}

const WAIT_WORDS: Readonly<Record<PendingWait['kind'], string>> = {
  approval: 'approval',
  mfa: 'a one-time code',
  review: 'a review',
  takeover: 'a person in the browser',
};

export function waitOf(job: Job): string {
  return job.wait ? `${WAIT_WORDS[job.wait.kind]} at ${job.wait.step}` : '';
}

export function time(iso: string | undefined): SafeHtml {
  return iso ? html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time>` : html``;
}

export function jobHref(jobId: string): string {
  return `/console/jobs/${encodeURIComponent(jobId)}`;
}

export function screenshotHref(jobId: string, ref: { key: string }): string {
  return `${jobHref(jobId)}/screenshots/${encodeURIComponent(screenshotNameOf(ref))}`;
}

/** An entry's screenshot as a linked image with a text alternative saying what it shows. */
export function screenshotFigure(
  jobId: string,
  entry: Pick<LedgerEntry, 'screenshot' | 'step' | 'at'>,
): SafeHtml {
  const ref = entry.screenshot;
  if (!ref) return html``;
  const href = screenshotHref(jobId, ref);
  const what = `The page ${ref.reason.replace('-', ' ')}${entry.step ? ` of step ${entry.step}` : ''}`;
  return html`<figure class="shot">
    <a href="${href}"><img src="${href}" alt="${what} (${ref.masked} sensitive fields masked)" width="${Math.min(ref.width || 640, 640)}" loading="lazy"></a>
    <figcaption>${what}; ${Math.round(ref.bytes / 1024)} KB, sha256 <code>${ref.sha256.slice(0, 16)}…</code></figcaption>
  </figure>`;
}

/** A flat object (evidence, inputs, details) as a definition list; nested values as JSON text. */
export function fields(value: Record<string, unknown> | undefined, label: string): SafeHtml {
  if (!value || Object.keys(value).length === 0) return html``;
  return html`<dl class="fields" aria-label="${label}">${Object.entries(value).map(
    ([k, v]) => html`<div><dt>${k}</dt><dd>${typeof v === 'string' ? v : JSON.stringify(v)}</dd></div>`,
  )}</dl>`;
}
