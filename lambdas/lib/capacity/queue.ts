import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { queryAll } from '../dynamo/query.ts';
import { TABLE_KEYS } from '../ledger/schema.ts';

/** A QUEUED job ahead of another in its tenant's queue. */
export interface QueuedJob {
  jobId: string;
  /** Account ids the job acts as (application -> account on the job item). */
  accounts: string[];
}

/** Which QUEUED jobs still wait: those that asked for a lease (or were submitted) since `since`. */
export interface QueueLiveness {
  since: Date;
}

/**
 * The tenant's QUEUED jobs submitted before `queuedAt` that still wait (gsi1: jobs by status,
 * oldest first; a job keeps its submission time as it goes back to QUEUED, so a resumed job
 * keeps its place). A QUEUED job that neither was submitted nor asked for a lease since
 * `live.since` has no execution asking for it any more (never started, or stopped): it is
 * not ahead of anyone, so it cannot hold its tenant's queue forever.
 */
export async function queuedAhead(
  doc: DynamoDBDocumentClient,
  tableName: string,
  tenantId: string,
  jobId: string,
  queuedAt: string,
  live: QueueLiveness,
): Promise<QueuedJob[]> {
  const since = live.since.toISOString();
  const items = await queryAll(doc, {
    TableName: tableName,
    IndexName: TABLE_KEYS.gsi1.name,
    KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk < :sk',
    ExpressionAttributeValues: { ':pk': `T#${tenantId}#S#QUEUED`, ':sk': `${queuedAt}#${jobId}` },
    ProjectionExpression: 'jobId, accounts, createdAt, capacityAskedAt',
  });
  return (
    items
      // ISO times compare as strings; a job that never asked has its submission to go by.
      .filter((item) => String(item.capacityAskedAt ?? item.createdAt ?? '') >= since)
      .map((item) => ({
        jobId: String(item.jobId),
        accounts: Object.values((item.accounts as Record<string, unknown> | undefined) ?? {}).filter(
          (a): a is string => typeof a === 'string',
        ),
      }))
  );
}

/** Do two lists of account ids share one? */
export function sharesAccount(a: readonly string[], b: ReadonlySet<string>): boolean {
  return a.some((id) => b.has(id));
}
