import type { QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import { QueryCommand } from '../aws/sdk/lib-dynamodb.ts';
import { InvalidInputError } from './errors.ts';
import { fromJobItem } from './items.ts';
import { assertId, isExpired, JOB_SK, openShardPk, statusPk, tenantPk } from './keys.ts';

const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

import { TABLE_KEYS } from './schema.ts';
import { assertStatus } from './status.ts';
import type { LedgerContext } from './store.ts';
import { translateError } from './translate.ts';
import type { Job, JobStatus } from './types.ts';

export interface ListJobsOptions {
  /** Only jobs in this status (gsi1); otherwise all jobs (gsi2). */
  status?: JobStatus;
  /** Page size, 1-100 (default 25). */
  limit?: number;
  /** `nextCursor` of the previous page, for the same tenant and status. */
  cursor?: string;
}

export interface JobPage {
  jobs: Job[];
  /** Present when there may be more jobs. */
  nextCursor?: string;
}

type StartKey = Record<string, string>;
interface CursorBody {
  t: string;
  s: JobStatus | null;
  k: StartKey;
}

/**
 * The tenant's jobs, newest first: by status through gsi1, else all through gsi2. The
 * cursor is opaque (base64url JSON) and bound to the tenant and status: a cursor from
 * another tenant, another status filter, or edited, is `InvalidInputError`. Terminal jobs
 * past their TTL are left out. GSIs are eventually consistent, so a job written a moment
 * ago may be missing or show its previous status.
 */
export async function listJobs(
  ctx: LedgerContext,
  tenantId: string,
  options: ListJobsOptions = {},
): Promise<JobPage> {
  assertId('tenantId', tenantId);
  const { status, limit = 25 } = options;
  if (status !== undefined) assertStatus('status', status);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw new InvalidInputError('limit', 'must be an integer from 1 to 100');
  }
  const index = status === undefined ? TABLE_KEYS.gsi2 : TABLE_KEYS.gsi1;
  const partition = status === undefined ? tenantPk(tenantId) : statusPk(tenantId, status);
  let startKey =
    options.cursor === undefined ? undefined : decodeCursor(options.cursor, tenantId, status ?? null);

  const now = ctx.now();
  const jobs: Job[] = [];
  do {
    let out: QueryCommandOutput;
    try {
      out = await ctx.doc.send(
        new QueryCommand({
          TableName: ctx.tableName,
          IndexName: index.name,
          KeyConditionExpression: '#p = :p',
          ExpressionAttributeNames: { '#p': index.partitionKey },
          ExpressionAttributeValues: { ':p': partition },
          ScanIndexForward: false,
          Limit: limit - jobs.length,
          ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
        }),
      );
    } catch (err) {
      throw translateError(err, { operation: 'listJobs' });
    }
    for (const item of out.Items ?? []) {
      const job = fromJobItem(item);
      if (!isExpired(job.expiresAt, now)) jobs.push(job);
    }
    startKey = out.LastEvaluatedKey as StartKey | undefined;
  } while (startKey !== undefined && jobs.length < limit);

  const page: JobPage = { jobs };
  if (startKey !== undefined) page.nextCursor = encodeCursor({ t: tenantId, s: status ?? null, k: startKey });
  return page;
}

function encodeCursor(body: CursorBody): string {
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string, tenantId: string, status: JobStatus | null): StartKey {
  const invalid = (why: string): InvalidInputError =>
    new InvalidInputError('cursor', `${why}; pass back the nextCursor of the previous page unchanged`);
  let body: CursorBody;
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as CursorBody;
  } catch {
    throw invalid('not a cursor');
  }
  if (body === null || typeof body !== 'object' || body.t !== tenantId || body.s !== status) {
    throw invalid('not a cursor of this listing');
  }
  // The start key must be a job item of this tenant in the index being queried.
  const index = status === null ? TABLE_KEYS.gsi2 : TABLE_KEYS.gsi1;
  const partition = status === null ? tenantPk(tenantId) : statusPk(tenantId, status);
  const k = body.k as Record<string, unknown> | null;
  const expected = [TABLE_KEYS.partitionKey, TABLE_KEYS.sortKey, index.partitionKey, index.sortKey];
  if (
    k === null ||
    typeof k !== 'object' ||
    Object.keys(k).length !== expected.length ||
    // DynamoDB refuses an empty key value (a 500 if it got there).
    !expected.every((name) => typeof k[name] === 'string' && (k[name] as string).length > 0) ||
    k[index.partitionKey] !== partition ||
    k[TABLE_KEYS.sortKey] !== JOB_SK ||
    !(k[TABLE_KEYS.partitionKey] as string).startsWith(`T#${tenantId}#J#`)
  ) {
    throw invalid('not a cursor of this listing');
  }
  // The index's sort key is the job's `<createdAt>#<jobId>`, of the job the table key names.
  const jobId = (k[TABLE_KEYS.partitionKey] as string).slice(`T#${tenantId}#J#`.length);
  const sortKey = k[index.sortKey] as string;
  if (
    !ID_PATTERN.test(jobId) ||
    !sortKey.endsWith(`#${jobId}`) ||
    Number.isNaN(Date.parse(sortKey.slice(0, -jobId.length - 1)))
  ) {
    throw invalid('not a cursor of this listing');
  }
  return k as StartKey;
}

/** An unfinished job as the index of unfinished jobs (gsi3) has it. */
export interface OpenJobRef {
  tenantId: string;
  jobId: string;
  status: JobStatus;
  executionName?: string;
}

/**
 * One page of the unfinished jobs of one shard of gsi3 (every tenant's: for the engine's
 * sweep, never for an API path), oldest first. `cursor` is the previous page's `next`. The
 * index is eventually consistent: read the job itself before acting on what a row says.
 */
export async function listOpenJobs(
  ctx: LedgerContext,
  shard: number,
  options: { limit?: number; cursor?: Record<string, unknown> } = {},
): Promise<{ jobs: OpenJobRef[]; next?: Record<string, unknown> }> {
  const { gsi3 } = TABLE_KEYS;
  if (!Number.isInteger(shard) || shard < 0 || shard >= gsi3.shards) {
    throw new InvalidInputError('shard', `must be an integer from 0 to ${gsi3.shards - 1}`);
  }
  let out: QueryCommandOutput;
  try {
    out = await ctx.doc.send(
      new QueryCommand({
        TableName: ctx.tableName,
        IndexName: gsi3.name,
        KeyConditionExpression: '#p = :p',
        ExpressionAttributeNames: { '#p': gsi3.partitionKey },
        ExpressionAttributeValues: { ':p': openShardPk(shard) },
        Limit: options.limit ?? 200,
        ...(options.cursor ? { ExclusiveStartKey: options.cursor } : {}),
      }),
    );
  } catch (err) {
    throw translateError(err, { operation: 'listOpenJobs' });
  }
  const jobs = (out.Items ?? []).map((item) => ({
    tenantId: String(item.tenantId),
    jobId: String(item.jobId),
    status: item.status as JobStatus,
    ...(typeof item.executionName === 'string' ? { executionName: item.executionName } : {}),
  }));
  return { jobs, ...(out.LastEvaluatedKey ? { next: out.LastEvaluatedKey } : {}) };
}
