import { accountFor, endpointFor } from '../lib/engine/context.ts';
import type { EngineDeps, JobRef } from '../lib/engine/types.ts';
import { TERMINAL_STATUSES } from '../lib/ledger/types.ts';

export type AuthorizeResult =
  | { outcome: 'authorized'; nextStep: number; stepCount: number; playbook: string }
  | { outcome: 'stopped'; status: string };

/**
 * First state of every execution, including one that resumes a job: the job exists and is
 * not finished, its playbook is known, and every account it names is still the tenant's.
 * Records which execution coordinates the job now (so cancellation can stop it).
 */
export async function authorize(
  deps: EngineDeps,
  ref: JobRef & { executionName?: string },
): Promise<AuthorizeResult> {
  const job = await deps.ledger.getJob(ref.tenantId, ref.jobId);
  if (TERMINAL_STATUSES.includes(job.status)) return { outcome: 'stopped', status: job.status };
  const playbook = deps.playbooks.get(job.playbook);
  for (const app of Object.keys(playbook.applications)) {
    endpointFor(deps, app);
    await accountFor(deps, job, app);
  }
  if (ref.executionName && job.executionName !== ref.executionName) {
    await deps.ledger.updateJob(job.tenantId, job.jobId, {
      expectedVersion: job.version,
      set: { executionName: ref.executionName },
    });
  }
  return {
    outcome: 'authorized',
    nextStep: job.nextStep,
    stepCount: playbook.steps.length,
    playbook: playbook.id,
  };
}
