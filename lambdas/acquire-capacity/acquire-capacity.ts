import type { EngineDeps, JobRef } from '../lib/engine/types.ts';
import { TERMINAL_STATUSES } from '../lib/ledger/types.ts';

export type AcquireCapacityResult =
  | { outcome: 'acquired' }
  | { outcome: 'queued'; position: number; retryAfterSeconds: number }
  | { outcome: 'stopped'; status: string };

/**
 * Takes the job's browser leases (one per application it works in) under the tenant's cap.
 * Over the cap the job stays QUEUED and the state machine asks again after a pause.
 */
export async function acquireCapacity(deps: EngineDeps, ref: JobRef): Promise<AcquireCapacityResult> {
  const job = await deps.ledger.getJob(ref.tenantId, ref.jobId);
  if (TERMINAL_STATUSES.includes(job.status)) return { outcome: 'stopped', status: job.status };
  const playbook = deps.playbooks.get(job.playbook);
  const result = await deps.capacity.acquire(job.tenantId, job.jobId, {
    sessions: Object.keys(playbook.applications).length,
    queuedAt: job.createdAt,
  });
  if (result.outcome === 'queued') return result;
  if (job.status === 'QUEUED') {
    await deps.ledger.transition(job.tenantId, job.jobId, 'RUNNING', { from: ['QUEUED'] });
  }
  return { outcome: 'acquired' };
}
