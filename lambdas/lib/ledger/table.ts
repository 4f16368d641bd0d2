import { setTimeout as sleep } from 'node:timers/promises';
import type { DynamoDBClient, GlobalSecondaryIndex } from '@aws-sdk/client-dynamodb';
import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceInUseException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '../aws/sdk/client-dynamodb.ts';
import { TABLE_KEYS } from './schema.ts';

/** The table's GSIs as `schema.ts` lays them out (the CDK stack makes the same). */
function indexes(): GlobalSecondaryIndex[] {
  const { gsi1, gsi2, gsi3 } = TABLE_KEYS;
  const keys = (g: { partitionKey: string; sortKey: string }) => [
    { AttributeName: g.partitionKey, KeyType: 'HASH' as const },
    { AttributeName: g.sortKey, KeyType: 'RANGE' as const },
  ];
  return [
    { IndexName: gsi1.name, KeySchema: keys(gsi1), Projection: { ProjectionType: 'ALL' } },
    { IndexName: gsi2.name, KeySchema: keys(gsi2), Projection: { ProjectionType: 'ALL' } },
    {
      IndexName: gsi3.name,
      KeySchema: keys(gsi3),
      Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: [...gsi3.projected] },
    },
  ];
}

const attribute = (AttributeName: string) => ({ AttributeName, AttributeType: 'S' as const });

/**
 * Creates the ledger table as `schema.ts` lays it out (the CDK stack does the same in the
 * cloud): `pk`/`sk`, GSIs `gsi1` (jobs by status), `gsi2` (jobs by time), `gsi3` (unfinished
 * jobs), on-demand billing, TTL on `expiresAt`. Waits until the table is ACTIVE. Idempotent: an
 * existing table of that name is kept, and gets the indexes it lacks (a table made before an
 * index existed), one at a time as DynamoDB requires.
 */
export async function createLedgerTable(
  client: DynamoDBClient,
  tableName: string,
  options: { maxWaitSeconds?: number } = {},
): Promise<void> {
  const { partitionKey, sortKey, ttlAttribute } = TABLE_KEYS;
  const gsis = indexes();
  let created = true;
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          partitionKey,
          sortKey,
          ...gsis.flatMap((g) => (g.KeySchema ?? []).map((k) => k.AttributeName as string)),
        ].map(attribute),
        KeySchema: [
          { AttributeName: partitionKey, KeyType: 'HASH' },
          { AttributeName: sortKey, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: gsis,
      }),
    );
  } catch (err) {
    if (!(err instanceof ResourceInUseException)) throw err;
    created = false;
  }
  const maxWaitTime = options.maxWaitSeconds ?? 60;
  await waitUntilTableExists({ client, maxWaitTime, minDelay: 1, maxDelay: 2 }, { TableName: tableName });
  if (created) {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: ttlAttribute, Enabled: true },
      }),
    );
    return;
  }
  await addMissingIndexes(client, tableName, gsis, maxWaitTime);
}

async function addMissingIndexes(
  client: DynamoDBClient,
  tableName: string,
  gsis: GlobalSecondaryIndex[],
  maxWaitSeconds: number,
): Promise<void> {
  const described = await client.send(new DescribeTableCommand({ TableName: tableName }));
  const existing = new Set((described.Table?.GlobalSecondaryIndexes ?? []).map((g) => g.IndexName));
  for (const gsi of gsis.filter((g) => !existing.has(g.IndexName))) {
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions: (gsi.KeySchema ?? []).map((k) => attribute(k.AttributeName as string)),
        GlobalSecondaryIndexUpdates: [{ Create: gsi }],
      }),
    );
    const deadline = Date.now() + maxWaitSeconds * 1000;
    for (;;) {
      const table = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
      const status = table?.GlobalSecondaryIndexes?.find((g) => g.IndexName === gsi.IndexName)?.IndexStatus;
      if (status === 'ACTIVE' && table?.TableStatus === 'ACTIVE') break;
      if (Date.now() > deadline) throw new Error(`index ${gsi.IndexName} of ${tableName} is not ACTIVE`);
      await sleep(250);
    }
  }
}
