import { randomBytes } from 'node:crypto';
import { DeleteTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, inject } from 'vitest';
import { createLedgerTable } from '../../lambdas/lib/ledger/table.ts';
import {
  createDocumentClient,
  createDynamoDbClient,
  type DynamoDbLocal,
  startDynamoDbLocal,
} from '../../local/dynamodb.ts';

export interface DynamoDbHandle {
  /** Document client on the local endpoint (created in beforeAll). */
  doc(): DynamoDBDocumentClient;
  /** Low-level client on the local endpoint. */
  client(): DynamoDBClient;
  /** Name of the ledger table created for this file. */
  tableName(): string;
  endpoint(): string;
  /** Creates another empty ledger table and returns its name. */
  createTable(prefix?: string): Promise<string>;
}

/**
 * Registers `beforeAll`/`afterAll` hooks that give the test file a uniquely named ledger table
 * on the run's shared DynamoDB Local (`global-dynamodb.ts`), deleting the file's tables
 * afterwards. Without a shared one (a run without the global setup) the file starts its own
 * (in memory, free port) and stops it by PID.
 *
 * @example
 * const ddb = useDynamoDb();
 * it('...', async () => { const ledger = createLedger({ doc: ddb.doc(), tableName: ddb.tableName() }); });
 */
export function useDynamoDb(): DynamoDbHandle {
  let local: DynamoDbLocal | undefined;
  let doc: DynamoDBDocumentClient | undefined;
  let client: DynamoDBClient | undefined;
  let table: string | undefined;
  let endpoint: string | undefined;
  const tables: string[] = [];
  const need = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is not ready: use it inside a test, after beforeAll`);
    return value;
  };
  const createTable = async (prefix = 'ledger'): Promise<string> => {
    const name = `${prefix}-${randomBytes(4).toString('hex')}`;
    await createLedgerTable(need(client, 'DynamoDB client'), name);
    tables.push(name);
    return name;
  };

  beforeAll(async () => {
    endpoint = inject('sharedDynamoDbEndpoint') || undefined;
    if (!endpoint) {
      local = await startDynamoDbLocal();
      endpoint = local.endpoint;
    }
    client = createDynamoDbClient(endpoint);
    doc = createDocumentClient(endpoint);
    table = await createTable();
  });

  afterAll(async () => {
    // The shared instance outlives the file: its tables go, so a run's memory stays bounded.
    if (!local && client) {
      const c = client;
      await Promise.all(
        tables.map((TableName) => c.send(new DeleteTableCommand({ TableName })).catch(() => undefined)),
      );
    }
    doc?.destroy();
    client?.destroy();
    await local?.stop();
  });

  return {
    doc: () => need(doc, 'DynamoDB document client'),
    client: () => need(client, 'DynamoDB client'),
    tableName: () => need(table, 'ledger table'),
    endpoint: () => need(endpoint, 'DynamoDB Local'),
    createTable,
  };
}
