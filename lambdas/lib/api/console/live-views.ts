/**
 * Which live views a person of the job's tenant is shown on its page. Acting in a job's browser
 * is a decision, so the interactive view goes to an approver only, only while the job waits for
 * a takeover, only for the waiting step's session, and only until the wait expires; everyone else
 * (a submitter, an approver of a job doing its own steps) may at most watch, and where the
 * provider's view cannot be made watch-only (Anchor's `live_view_url`) sees none.
 */
import { hasRole, type Principal } from '../../auth/api-keys.ts';
import type { BrowserAdapter } from '../../browser/types.ts';
import { type Job, TERMINAL_STATUSES } from '../../ledger/types.ts';
import type { Playbook } from '../../playbooks/contract.ts';

export interface JobLiveViews {
  /** The takeover's interactive view (framed on the job page), for an approver of a takeover. */
  takeover?: string;
  /** A watch-only view of each running session, by application. */
  watch: Record<string, string>;
}

/** The live views `principal` is shown for `job`, each signed anew by `link` (the browser adapter's). */
export function jobLiveViews(
  job: Job,
  playbook: Pick<Playbook, 'steps'> | undefined,
  principal: Principal,
  link: BrowserAdapter['liveViewLink'],
): JobLiveViews {
  const views: JobLiveViews = { watch: {} };
  if (TERMINAL_STATUSES.includes(job.status)) return views;
  for (const [app, ref] of Object.entries(job.sessions ?? {})) {
    if (ref.endedAt) continue;
    const watch = link(ref, job.tenantId, { interactive: false });
    if (watch) views.watch[app] = watch;
  }
  const wait = job.wait;
  if (job.status !== 'WAITING_TAKEOVER' || wait?.kind !== 'takeover' || !hasRole(principal, 'approver')) {
    return views;
  }
  const app = playbook?.steps.find((s) => s.id === wait.step)?.app;
  const session = app ? job.sessions[app] : undefined;
  if (!session || session.endedAt) return views;
  const untilMs = Date.parse(wait.expiresAt);
  const takeover = link(session, job.tenantId, {
    interactive: true,
    ...(Number.isFinite(untilMs) ? { untilMs } : {}),
  });
  return takeover ? { ...views, takeover } : views;
}
