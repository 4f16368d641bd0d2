import { createHash } from 'node:crypto';
import type { Job } from '../ledger/types.ts';

/**
 * Which job this is, everywhere outside the ledger: a job id is unique only per tenant, and
 * only until its job's TTL expires (the id may then be submitted again, a new job with a new
 * `createdAt`). Names and keys that outlive a job (Step Functions keeps execution names for 90
 * days; a site may keep idempotency keys forever) carry all three, so that neither another
 * tenant's job nor a later job with the same id ever shares one.
 */
export type JobIdentity = Pick<Job, 'tenantId' | 'jobId' | 'createdAt'>;

function digest(text: string, length: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

/** 16 hex digits of the tenant and job id: the same for every incarnation of the id. */
export function jobIdHash(tenantId: string, jobId: string): string {
  return digest(`${tenantId}/${jobId}`, 16);
}

/** 8 hex digits of one incarnation of the job id (its tenant, id and creation time). */
export function incarnationHash(job: JobIdentity): string {
  return digest(`${job.tenantId}/${job.jobId}/${job.createdAt}`, 8);
}

/**
 * The idempotency key of a write step: what the engine passes to the target application
 * (where it takes one) and records on the step's intent and completion. Stable across every
 * attempt and execution of this job; different for another tenant's job of the same id and for
 * a job submitted again under the same id after this one expired.
 *
 * @example
 * idempotencyKeyOf(job, 'place-order'); // 'order-1:place-order:3f9a2c1e7b04'
 */
export function idempotencyKeyOf(job: JobIdentity, stepId: string): string {
  return `${job.jobId}:${stepId}:${digest(`${job.tenantId}/${job.jobId}/${job.createdAt}`, 12)}`;
}
