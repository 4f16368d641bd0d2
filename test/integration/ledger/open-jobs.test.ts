/**
 * The index of unfinished jobs (gsi3), what the recovery sweep reads: a job is in it from its
 * creation until it finishes, across tenants, and a table made before the index gets it.
 */
import { CreateTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { createLedger, createLedgerTable, TABLE_KEYS } from '../../../lambdas/lib/ledger/index.ts';
import type { JobRequest } from '../../../lambdas/lib/ledger/types.ts';
import { useDynamoDb } from '../../support/dynamodb.ts';

const ddb = useDynamoDb();
const REQUEST: JobRequest = { playbook: 'p@1', inputs: {}, accounts: {}, approvals: [], retryBudget: 0 };

async function openJobs(ledger: ReturnType<typeof createLedger>): Promise<string[]> {
  const found: string[] = [];
  for (let shard = 0; shard < TABLE_KEYS.gsi3.shards; shard++) {
    let cursor: Record<string, unknown> | undefined;
    do {
      const page = await ledger.listOpenJobs(shard, cursor ? { cursor, limit: 2 } : { limit: 2 });
      found.push(...page.jobs.map((j) => `${j.tenantId}/${j.jobId}:${j.status}`));
      cursor = page.next;
    } while (cursor);
  }
  return found.sort();
}

describe('Function: listOpenJobs', () => {
  it("holds every tenant's unfinished jobs, and none once finished", async () => {
    const ledger = createLedger({ doc: ddb.doc(), tableName: await ddb.createTable('open') });
    for (const [tenant, job] of [
      ['acme', 'a1'],
      ['acme', 'a2'],
      ['globex', 'g1'],
    ] as const) {
      await ledger.createJob(tenant, job, REQUEST, 1);
    }
    await ledger.transition('acme', 'a2', 'RUNNING');
    expect(await openJobs(ledger)).toEqual(['acme/a1:QUEUED', 'acme/a2:RUNNING', 'globex/g1:QUEUED']);
    await ledger.transition('acme', 'a2', 'SUCCEEDED');
    await ledger.transition('globex', 'g1', 'CANCELLED');
    expect(await openJobs(ledger)).toEqual(['acme/a1:QUEUED']);
    // The job item itself never shows the index's keys.
    expect(Object.keys(await ledger.getJob('acme', 'a1'))).not.toContain('gsi3pk');
  });

  it('is added to a ledger table made before it existed', async () => {
    const client = ddb.client();
    const name = `old-ledger-${Date.now()}`;
    await client.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk'].map((a) => ({
          AttributeName: a,
          AttributeType: 'S',
        })),
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: ['gsi1', 'gsi2'].map((g) => ({
          IndexName: g,
          KeySchema: [
            { AttributeName: `${g}pk`, KeyType: 'HASH' },
            { AttributeName: `${g}sk`, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        })),
      }),
    );
    await createLedgerTable(client, name);
    const table = (await client.send(new DescribeTableCommand({ TableName: name }))).Table;
    expect(table?.GlobalSecondaryIndexes?.map((g) => g.IndexName).sort()).toEqual(['gsi1', 'gsi2', 'gsi3']);
    const ledger = createLedger({ doc: ddb.doc(), tableName: name });
    await ledger.createJob('acme', 'late', REQUEST, 1);
    expect(await openJobs(ledger)).toEqual(['acme/late:QUEUED']);
  });
});
