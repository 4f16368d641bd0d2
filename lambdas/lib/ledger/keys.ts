import { createHash, randomBytes } from 'node:crypto';
import { InvalidInputError } from './errors.ts';
import { TABLE_KEYS } from './schema.ts';
import type { JobStatus } from './types.ts';

/** Key builders for the layout documented in `schema.ts`. Every key starts with the tenant. */

const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const JOB_SK = 'JOB';
export const ENTRY_SK_PREFIX = 'E#';

/** Throws `InvalidInputError` unless `value` is 1-64 characters of `[A-Za-z0-9_-]`. */
export function assertId(field: 'tenantId' | 'jobId', value: unknown): asserts value is string {
  if (typeof value !== 'string' || !ID_PATTERN.test(value)) {
    throw new InvalidInputError(field, 'must be 1-64 characters of A-Z, a-z, 0-9, _ and -');
  }
}

export function jobPk(tenantId: string, jobId: string): string {
  return `T#${tenantId}#J#${jobId}`;
}

export function statusPk(tenantId: string, status: JobStatus): string {
  return `T#${tenantId}#S#${status}`;
}

export function tenantPk(tenantId: string): string {
  return `T#${tenantId}`;
}

/** gsi3's partition of an unfinished job: one of `TABLE_KEYS.gsi3.shards`, by tenant and job id. */
export function openPk(tenantId: string, jobId: string): string {
  const h = createHash('sha256').update(`${tenantId}/${jobId}`).digest();
  return openShardPk(h.readUInt32BE(0) % TABLE_KEYS.gsi3.shards);
}

/** gsi3's partition of one shard (`OPEN#0` .. `OPEN#15`): what the sweep of unfinished jobs reads. */
export function openShardPk(shard: number): string {
  return `OPEN#${shard}`;
}

/** gsi3's sort key: oldest unfinished jobs first. */
export function openSk(createdAt: string, tenantId: string, jobId: string): string {
  return `${createdAt}#${tenantId}#${jobId}`;
}

/** Sort key of both GSIs: creation time, then the job id to break ties. */
export function timeSk(createdAt: string, jobId: string): string {
  return `${createdAt}#${jobId}`;
}

export type JobKey = { [TABLE_KEYS.partitionKey]: string; [TABLE_KEYS.sortKey]: string };

export function jobKey(tenantId: string, jobId: string): JobKey {
  return { pk: jobPk(tenantId, jobId), sk: JOB_SK };
}

/** Epoch seconds, the unit of the DynamoDB TTL attribute. */
export function epochSeconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}

/** Is a job with this `expiresAt` past its TTL? DynamoDB deletes late (or, locally, never). */
export function isExpired(expiresAt: number | undefined, now: Date): boolean {
  return expiresAt !== undefined && expiresAt <= epochSeconds(now);
}

/**
 * Makes entry ids that sort in append order: a monotonic ISO time (never behind the last id
 * this process made, even if the clock steps back), a per-process counter, and a random
 * suffix so ids from different workers in the same millisecond never collide.
 */
export function createEntryIdFactory(clock: () => Date): () => string {
  let lastMs = 0;
  let counter = 0;
  return () => {
    const ms = Math.max(clock().getTime(), lastMs);
    counter = ms === lastMs ? counter + 1 : 0;
    lastMs = ms;
    return `${new Date(ms).toISOString()}-${counter.toString(36).padStart(4, '0')}-${randomBytes(4).toString('hex')}`;
  };
}
