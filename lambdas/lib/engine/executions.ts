import { createHash } from 'node:crypto';

/**
 * Execution names. Step Functions names are unique per state machine for 90 days and job
 * ids are unique only per tenant, so a name is derived from both: readable job id prefix,
 * a hash of tenant and job id, and a generation (0 for the first execution; each resume of
 * the job from its ledger starts the next generation). At most 80 characters of
 * `[A-Za-z0-9_-]`, as Step Functions requires.
 */
export function executionName(tenantId: string, jobId: string, generation = 0): string {
  const hash = createHash('sha256').update(`${tenantId}/${jobId}`).digest('hex').slice(0, 16);
  return `${jobId.slice(0, 50)}-${hash}-g${generation}`;
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
