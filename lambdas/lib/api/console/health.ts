/**
 * The console's playbook health page: a playbook's recent drift checks (what `GET
 * /playbooks/{id}/checks` answers), newest first, each step with what it found, its time, and
 * "slower than usual"; the first red step with its screenshot. Run a check with
 * `belay playbook check <id> --account <app=account>`.
 */

import { playbooksFor } from '../catalog/views.ts';
import { recentChecks } from '../checks/views.ts';
import { NotFoundError } from '../errors.ts';
import { jobHref, time } from './format.ts';
import type { ConsolePageSpec } from './handle.ts';
import { html } from './html.ts';

export const HEALTH_PAGE: ConsolePageSpec = {
  path: '/console/playbooks/{playbookId}',
  title: (req) => `Health of ${req.params.playbookId ?? ''}`,
  current: 'jobs',
  refreshSeconds: 10,
  async render(req, session) {
    const id = req.params.playbookId ?? '';
    const { tenantId } = session.principal;
    if (!playbooksFor(req.deps.engine.playbooks, tenantId).some((p) => p.id === id))
      throw new NotFoundError(`no playbook ${id} for this tenant`);
    const checks = await recentChecks(req.deps.engine.ledger, tenantId, id);
    const health = checks[0]?.health ?? 'unchecked';
    return html`<h1>Health of ${id}: <span class="status ${health}">${health}</span></h1>
      <p>Drift checks run the playbook read-only against the live site: every read, and each write up to (not including) its commit, whose requests are refused. Run one with <code>belay playbook check ${id} --account &lt;app&gt;=&lt;account&gt;</code>.</p>
      ${checks.length === 0 ? html`<p class="note">No check of this playbook yet.</p>` : ''}
      ${checks.map(
        (c) => html`<section aria-label="Check ${c.jobId}">
        <h2><a href="${jobHref(c.jobId)}">${c.jobId}</a>: ${c.health} ${time(c.createdAt)}</h2>
        <table><thead><tr><th scope="col">Step</th><th scope="col">Found</th><th scope="col">Time</th><th scope="col">Detail</th></tr></thead>
        <tbody>${c.steps.map(
          (
            s,
          ) => html`<tr><th scope="row">${s.step}</th><td>${s.result}${s.slower ? ', slower than usual' : ''}</td>
          <td>${s.ms === undefined ? '-' : `${(s.ms / 1000).toFixed(1)} s`}${s.slower ? ` (usually ${(s.slower.medianMs / 1000).toFixed(1)} s)` : ''}</td>
          <td>${s.detail ?? ''}${s.refused?.length ? ` (refused: ${s.refused.join(', ')})` : ''}${s.screenshot ? html` <a href="/console${s.screenshot}">screenshot</a>` : ''}</td></tr>`,
        )}</tbody></table></section>`,
      )}`;
  },
};
