/**
 * Stamping a finished job's entries with its TTL (`expireEntries`), against a scripted
 * DynamoDB: what it asks of the table, and how many writes it has in flight at once.
 */
import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { expireEntries, STAMPS_AT_ONCE } from '../../../lambdas/lib/ledger/entry-ttl.ts';
import type { Job } from '../../../lambdas/lib/ledger/types.ts';

const dynamo = mockClient(DynamoDBDocumentClient);
afterEach(() => dynamo.reset());

const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const job = { tenantId: 'acme', jobId: 'j1', status: 'SUCCEEDED', expiresAt: 2_000_000_000 } as Job;
const entries = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    pk: 'T#acme#J#j1',
    sk: `E#${String(from + i).padStart(4, '0')}`,
  }));

describe('Function: expireEntries', () => {
  it('reads the partition consistently, so the entries written just before (the job’s end) are stamped too', async () => {
    dynamo.on(QueryCommand).resolves({ Items: entries(0, 2) });
    dynamo.on(UpdateCommand).resolves({});
    expect(await expireEntries({ doc, tableName: 't' }, job)).toBe(2);
    const queries = dynamo.commandCalls(QueryCommand);
    expect(queries).toHaveLength(1);
    expect(queries[0]?.args[0].input.ConsistentRead).toBe(true);
  });

  it('stamps every entry of every page, STAMPS_AT_ONCE at a time, an entry gone meanwhile included', async () => {
    const first = entries(0, STAMPS_AT_ONCE + 5);
    const second = entries(first.length, 3);
    dynamo
      .on(QueryCommand)
      .resolvesOnce({ Items: first, LastEvaluatedKey: first.at(-1) })
      .resolvesOnce({ Items: second });
    let inFlight = 0;
    let most = 0;
    const stamped: string[] = [];
    dynamo.on(UpdateCommand).callsFake(async (input: { Key: { sk: string } }) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      stamped.push(input.Key.sk);
      if (input.Key.sk === second[0]?.sk) {
        throw new ConditionalCheckFailedException({ message: 'gone', $metadata: {} });
      }
      return {};
    });
    expect(await expireEntries({ doc, tableName: 't' }, job)).toBe(first.length + second.length);
    expect(stamped.sort()).toEqual([...first, ...second].map((e) => e.sk));
    expect(most).toBe(STAMPS_AT_ONCE);
    for (const call of dynamo.commandCalls(UpdateCommand)) {
      expect(call.args[0].input).toMatchObject({
        ExpressionAttributeValues: { ':exp': job.expiresAt },
        ConditionExpression: 'attribute_exists(pk)',
      });
    }
  });
});
