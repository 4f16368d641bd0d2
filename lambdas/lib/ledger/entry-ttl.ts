import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '../aws/sdk/client-dynamodb.ts';
import { UpdateCommand } from '../aws/sdk/lib-dynamodb.ts';
import { queryPages } from '../dynamo/query.ts';
import { ENTRY_SK_PREFIX, jobPk } from './keys.ts';
import { translateError } from './translate.ts';
import { type Job, TERMINAL_STATUSES } from './types.ts';

/** Entries stamped in parallel (UpdateItems in flight at once). */
export const STAMPS_AT_ONCE = 25;

/**
 * Gives a finished job's ledger entries the job item's TTL (`expiresAt`), so DynamoDB deletes
 * the audit trail with the job instead of keeping it for ever. Entries are written while the
 * job runs, before its TTL is known (it is set when the job finishes), so they are stamped
 * afterwards: every entry of the job's partition still without `expiresAt` (those of an
 * earlier job with the same id included). Idempotent, and called again by every later write
 * to the finished job (a retried RecordFailure or Finish), which finishes a stamping that was
 * interrupted. An entry appended after the job finished is stamped by the next such write.
 */
export async function expireEntries(
  ctx: { doc: DynamoDBDocumentClient; tableName: string },
  job: Job,
): Promise<number> {
  if (!TERMINAL_STATUSES.includes(job.status) || job.expiresAt === undefined) return 0;
  let stamped = 0;
  const stamp = (item: Record<string, unknown>): Promise<unknown> =>
    ctx.doc
      .send(
        new UpdateCommand({
          TableName: ctx.tableName,
          Key: { pk: item.pk, sk: item.sk },
          UpdateExpression: 'SET expiresAt = :exp',
          // Never re-create an entry DynamoDB has just deleted.
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':exp': job.expiresAt },
        }),
      )
      .catch((err: unknown) => {
        if (!(err instanceof ConditionalCheckFailedException)) throw err;
      });
  try {
    for await (const items of queryPages(ctx.doc, {
      TableName: ctx.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :entry)',
      FilterExpression: 'attribute_not_exists(expiresAt)',
      ProjectionExpression: 'pk, sk',
      ExpressionAttributeValues: { ':pk': jobPk(job.tenantId, job.jobId), ':entry': ENTRY_SK_PREFIX },
      // The entries just written (the terminal transition's own, the sessions' ends) must be
      // seen: an eventually consistent read may miss them, and nothing would stamp them later.
      ConsistentRead: true,
    })) {
      // A job's end waits for this: the entries of a page are stamped STAMPS_AT_ONCE at a time,
      // not one round trip after another.
      for (let i = 0; i < items.length; i += STAMPS_AT_ONCE) {
        await Promise.all(items.slice(i, i + STAMPS_AT_ONCE).map(stamp));
      }
      stamped += items.length;
    }
  } catch (err) {
    throw translateError(err, { operation: 'expireEntries' });
  }
  return stamped;
}
