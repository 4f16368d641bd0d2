import { incarnationHash, type JobIdentity, jobIdHash } from './job-identity.ts';

/**
 * Execution names. Step Functions keeps a name taken for 90 days per state machine, job ids
 * are unique only per tenant, and a job id is free again once its job expired: so a name is
 * derived from all three (`JobIdentity`) and a generation: the readable job id prefix, a hash
 * of tenant and job id, a hash of the job's incarnation, and `g<n>` (0 for the first
 * execution; each new execution of the same job, a resume or a recovery, takes the next). At
 * most 80 characters of `[A-Za-z0-9_-]`, as Step Functions requires.
 *
 * @example
 * executionName(job, 0); // 'order-1-5c1e0a9d2b7f4e31-3f9a2c1e-g0'
 */
export function executionName(job: JobIdentity, generation = 0): string {
  return `${executionNamePrefix(job.tenantId, job.jobId)}${incarnationHash(job)}-g${generation}`;
}

/** What every execution name of a tenant's job id starts with (all incarnations, all generations). */
export function executionNamePrefix(tenantId: string, jobId: string): string {
  return `${jobId.slice(0, 40)}-${jobIdHash(tenantId, jobId)}-`;
}

/** The generation of an execution name made by `executionName` (-1 when it is not one). */
export function generationOf(name: string): number {
  const match = /-g(\d+)$/.exec(name);
  return match ? Number(match[1]) : -1;
}

/** The input every execution starts with: the job's identity, nothing else (the ledger holds the rest). */
export interface ExecutionInput {
  tenantId: string;
  jobId: string;
}
