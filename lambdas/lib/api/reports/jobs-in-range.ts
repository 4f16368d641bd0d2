import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { queryPages } from '../../dynamo/query.ts';
import { JobNotFoundError } from '../../ledger/errors.ts';
import type { Ledger } from '../../ledger/index.ts';
import { TABLE_KEYS } from '../../ledger/schema.ts';
import type { JobRecord } from './cost.ts';
import { ReportTooLargeError } from './errors.ts';

/**
 * The tenant's jobs submitted in [from, to) with their ledgers: one Query on gsi2 (jobs by
 * submission time; its sort key is `<createdAt>#<jobId>`, so `BETWEEN from AND to` is
 * exactly the half-open period) and one ledger read per job, a few at a time. Jobs past
 * their TTL are left out, as everywhere.
 */
export async function jobsInRange(
  deps: { doc: DynamoDBDocumentClient; tableName: string; ledger: Ledger },
  tenantId: string,
  range: { from: string; to: string },
  options: { maxJobs?: number; concurrency?: number } = {},
): Promise<JobRecord[]> {
  const maxJobs = options.maxJobs ?? 5000;
  const ids: string[] = [];
  for await (const items of queryPages(deps.doc, {
    TableName: deps.tableName,
    IndexName: TABLE_KEYS.gsi2.name,
    KeyConditionExpression: 'gsi2pk = :pk AND gsi2sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': `T#${tenantId}`, ':from': range.from, ':to': range.to },
    ProjectionExpression: 'jobId',
  })) {
    for (const item of items) ids.push(String(item.jobId));
    if (ids.length > maxJobs) throw new ReportTooLargeError(maxJobs);
  }

  const records: JobRecord[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < ids.length) {
      const jobId = ids[next++] as string;
      try {
        records.push(await deps.ledger.readJob(tenantId, jobId));
      } catch (err) {
        if (!(err instanceof JobNotFoundError)) throw err; // expired meanwhile
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 8, ids.length) }, worker));
  return records.sort((a, b) => a.job.createdAt.localeCompare(b.job.createdAt));
}
