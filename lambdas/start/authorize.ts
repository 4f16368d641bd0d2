import type { Account } from '../lib/accounts/types.ts';
import { accountsOf, endpointFor } from '../lib/engine/context.ts';
import type { EngineDeps, JobRef } from '../lib/engine/types.ts';
import { type Job, TERMINAL_STATUSES } from '../lib/ledger/types.ts';

export type AuthorizeResult =
  | {
      outcome: 'authorized';
      nextStep: number;
      stepCount: number;
      playbook: string;
      /** The job as read (and updated) here, and its accounts by application, just checked. */
      checked: CheckedJob;
    }
  | { outcome: 'stopped'; status: string };

/** A job read and its accounts checked earlier in the same invocation (Start): not read again. */
export interface CheckedJob {
  job: Job;
  accounts: Record<string, Account>;
}

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
  for (const app of Object.keys(playbook.applications)) endpointFor(deps, app);
  const accounts = await accountsOf(deps, job);
  const current =
    ref.executionName && job.executionName !== ref.executionName
      ? await deps.ledger.updateJob(job.tenantId, job.jobId, {
          expectedVersion: job.version,
          set: { executionName: ref.executionName },
        })
      : job;
  return {
    outcome: 'authorized',
    nextStep: job.nextStep,
    stepCount: playbook.steps.length,
    playbook: playbook.id,
    checked: { job: current, accounts },
  };
}
