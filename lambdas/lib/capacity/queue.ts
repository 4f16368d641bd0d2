import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_KEYS } from '../ledger/schema.ts';

/** A QUEUED job ahead of another in its tenant's queue. */
export interface QueuedJob {
  jobId: string;
  /** Account ids the job acts as (application -> account on the job item). */
  accounts: string[];
}

/**
 * The tenant's QUEUED jobs submitted before `queuedAt` (gsi1: jobs by status, oldest first;
 * a job keeps its submission time as it goes back to QUEUED, so a resumed job keeps its place).
 */
export async function queuedAhead(
  doc: DynamoDBDocumentClient,
  tableName: string,
  tenantId: string,
  jobId: string,
  queuedAt: string,
): Promise<QueuedJob[]> {
  const out: QueuedJob[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const res = await doc.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: TABLE_KEYS.gsi1.name,
        KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk < :sk',
        ExpressionAttributeValues: { ':pk': `T#${tenantId}#S#QUEUED`, ':sk': `${queuedAt}#${jobId}` },
        ProjectionExpression: 'jobId, accounts',
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of res.Items ?? []) {
      const accounts = item.accounts as Record<string, unknown> | undefined;
      out.push({
        jobId: String(item.jobId),
        accounts: Object.values(accounts ?? {}).filter((a): a is string => typeof a === 'string'),
      });
    }
    startKey = res.LastEvaluatedKey;
  } while (startKey);
  return out;
}

/** Do two lists of account ids share one? */
export function sharesAccount(a: readonly string[], b: ReadonlySet<string>): boolean {
  return a.some((id) => b.has(id));
}
