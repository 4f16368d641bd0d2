/**
 * A finished job's ledger entries expire with it: DynamoDB's TTL deletes the whole audit trail,
 * not only the job item. DynamoDB Local.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createLedger } from '../../../lambdas/lib/ledger/index.ts';
import type { JobRequest } from '../../../lambdas/lib/ledger/types.ts';
import { useDynamoDb } from '../../support/dynamodb.ts';

const ddb = useDynamoDb();
const REQUEST: JobRequest = { playbook: 'p@1', inputs: {}, accounts: {}, approvals: [], retryBudget: 0 };

/** Every item of the job's partition: sort key and TTL. */
async function items(tableName: string, tenantId: string, jobId: string): Promise<[string, unknown][]> {
  const out = await ddb.doc().send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': `T#${tenantId}#J#${jobId}` },
      ConsistentRead: true,
    }),
  );
  return (out.Items ?? []).map((i) => [String(i.sk), i.expiresAt]);
}

describe('Function: createLedger (entry TTL)', () => {
  it('gives every entry the job’s expiresAt when the job finishes, and none before', async () => {
    const tableName = await ddb.createTable('entry-ttl');
    const ledger = createLedger({ doc: ddb.doc(), tableName, terminalTtlDays: 2 });
    await ledger.createJob('acme', 'j1', REQUEST, 2);
    await ledger.transition('acme', 'j1', 'RUNNING');
    await ledger.append('acme', 'j1', { type: 'step-started', step: 's1' });
    await ledger.append('acme', 'j1', { type: 'step-started', step: 's2' });
    const running = await items(tableName, 'acme', 'j1');
    expect(running).toHaveLength(4);
    expect(running.every(([, exp]) => exp === undefined)).toBe(true);

    const job = await ledger.transition('acme', 'j1', 'CANCELLED');
    expect(job.expiresAt).toBeGreaterThan(Date.now() / 1000);
    const finished = await items(tableName, 'acme', 'j1');
    expect(finished.length).toBeGreaterThanOrEqual(4);
    expect(finished.filter(([, exp]) => exp !== job.expiresAt)).toEqual([]);
  });

  it('stamps an entry appended after the job finished at the next write to it', async () => {
    const tableName = await ddb.createTable('entry-ttl-late');
    const ledger = createLedger({ doc: ddb.doc(), tableName });
    await ledger.createJob('acme', 'j2', REQUEST, 1);
    const job = await ledger.transition('acme', 'j2', 'FAILED', {
      failure: { reason: 'test', message: 'failed' },
    });
    await ledger.append('acme', 'j2', { type: 'cancelled' });
    await ledger.transition('acme', 'j2', 'FAILED');
    expect((await items(tableName, 'acme', 'j2')).filter(([, exp]) => exp !== job.expiresAt)).toEqual([]);
  });
});
