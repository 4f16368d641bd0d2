/**
 * Stamping a finished job's entries with its TTL (`expireEntries`), against a scripted
 * DynamoDB: what it asks of the table, and how many writes it has in flight at once.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { expireEntries } from '../../../lambdas/lib/ledger/entry-ttl.ts';
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
});
