import type { Account } from '../accounts/types.ts';
import type { AcquireResult } from '../capacity/types.ts';
import type { Job } from '../ledger/types.ts';
import { accountsOf } from './context.ts';
import type { EngineDeps } from './types.ts';

/**
 * Asks for the job's browser leases: one session per application its playbook works in, on
 * the accounts it acts as (each checked to be still the tenant's: a revoked one throws
 * `AccountRevokedError`), in its place in the tenant's queue (its submission time).
 */
export async function requestLease(
  deps: EngineDeps,
  job: Job,
  /** The job's accounts by application when the caller has just checked them. */
  checked?: Record<string, Account>,
): Promise<AcquireResult> {
  const accounts = Object.values(checked ?? (await accountsOf(deps, job)));
  return deps.capacity.acquire(job.tenantId, job.jobId, {
    // One session per application the playbook works in.
    sessions: accounts.length,
    queuedAt: job.createdAt,
    accounts: accounts.map((a) => a.accountId),
  });
}
