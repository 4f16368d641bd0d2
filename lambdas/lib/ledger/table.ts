import {
  CreateTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { TABLE_KEYS } from './schema.ts';

/**
 * Creates the ledger table as `schema.ts` lays it out (the CDK stack does the same in the
 * cloud): `pk`/`sk`, GSIs `gsi1` (jobs by status) and `gsi2` (jobs by time) projecting all
 * attributes, on-demand billing, TTL on `expiresAt`. Waits until the table is ACTIVE.
 * Idempotent: an existing table of that name is left as it is.
 */
export async function createLedgerTable(
  client: DynamoDBClient,
  tableName: string,
  options: { maxWaitSeconds?: number } = {},
): Promise<void> {
  const { partitionKey, sortKey, gsi1, gsi2, ttlAttribute } = TABLE_KEYS;
  const index = (g: typeof gsi1 | typeof gsi2) => ({
    IndexName: g.name,
    KeySchema: [
      { AttributeName: g.partitionKey, KeyType: 'HASH' as const },
      { AttributeName: g.sortKey, KeyType: 'RANGE' as const },
    ],
    Projection: { ProjectionType: 'ALL' as const },
  });
  let created = true;
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          partitionKey,
          sortKey,
          gsi1.partitionKey,
          gsi1.sortKey,
          gsi2.partitionKey,
          gsi2.sortKey,
        ].map((name) => ({ AttributeName: name, AttributeType: 'S' as const })),
        KeySchema: [
          { AttributeName: partitionKey, KeyType: 'HASH' },
          { AttributeName: sortKey, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: [index(gsi1), index(gsi2)],
      }),
    );
  } catch (err) {
    if (!(err instanceof ResourceInUseException)) throw err;
    created = false;
  }
  await waitUntilTableExists(
    { client, maxWaitTime: options.maxWaitSeconds ?? 60, minDelay: 1, maxDelay: 2 },
    { TableName: tableName },
  );
  if (created) {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: ttlAttribute, Enabled: true },
      }),
    );
  }
}
