/**
 * Drift checks (`mode: 'check'` jobs) as the engine ends them: a check that ends red after one
 * that was fine (or as the first) tells the tenant's people, once, not at every red check.
 */
import type { Job } from '../ledger/types.ts';
import type { EngineDeps } from './types.ts';

/** Pages of the tenant's newest jobs looked through for the check before this one. */
const SCAN_PAGES = 4;

/** The tenant's newest checks of `playbook` (at most `limit`), newest first, from its recent jobs. */
export async function checksOf(
  ledger: EngineDeps['ledger'],
  tenantId: string,
  playbook: string,
  limit: number,
): Promise<Job[]> {
  const found: Job[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < SCAN_PAGES && found.length < limit; page++) {
    const jobs = await ledger.listJobs(tenantId, { limit: 100, ...(cursor ? { cursor } : {}) });
    found.push(...jobs.jobs.filter((j) => j.mode === 'check' && j.playbook === playbook));
    cursor = jobs.nextCursor;
    if (!cursor) break;
  }
  return found.slice(0, limit);
}

/** The tenant's finished check of the same playbook before `job`, if one is among its recent jobs. */
export async function previousCheck(deps: Pick<EngineDeps, 'ledger'>, job: Job): Promise<Job | undefined> {
  const checks = await checksOf(deps.ledger, job.tenantId, job.playbook, 20);
  return checks.find(
    (j) =>
      j.jobId !== job.jobId &&
      j.createdAt <= job.createdAt &&
      (j.status === 'SUCCEEDED' || j.status === 'FAILED'),
  );
}

/** Did a check end red (a step was not as the playbook expects)? */
export function isRed(job: Pick<Job, 'status' | 'failure'>): boolean {
  return job.status === 'FAILED' && job.failure?.reason === 'drift-found';
}

/**
 * A check that just ended red: tells people (the notifier's `checkFailed`) unless the check
 * before it was red too. Telling people is no part of the check: a failure is logged.
 */
export async function tellIfTurnedRed(deps: EngineDeps, job: Job): Promise<void> {
  if (job.mode !== 'check' || !isRed(job)) return;
  try {
    const before = await previousCheck(deps, job);
    if (before && isRed(before)) return;
    const { entries } = await deps.ledger.readJob(job.tenantId, job.jobId);
    const finding = entries.findLast((e) => e.type === 'step-checked');
    await deps.notifier.checkFailed({
      tenantId: job.tenantId,
      jobId: job.jobId,
      playbook: job.playbook,
      step: finding?.step ?? '',
      finding: String(finding?.detail?.result ?? 'changed'),
      detail: String(finding?.detail?.detail ?? job.failure?.message ?? ''),
    });
  } catch (err) {
    deps.log.warn('could not tell people the drift check turned red', {
      jobId: job.jobId,
      error: err instanceof Error ? err.message : String(err),
    });
  }
}
