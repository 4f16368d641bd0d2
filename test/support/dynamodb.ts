import { randomBytes } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll } from 'vitest';
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
  /** PID of the DynamoDB Local JVM. */
  pid(): number;
  /** Creates another empty ledger table and returns its name. */
  createTable(prefix?: string): Promise<string>;
}

/**
 * Registers `beforeAll`/`afterAll` hooks that start one DynamoDB Local for the test file
 * (in memory, free port), create a uniquely named ledger table, and stop it by PID afterwards.
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
  const need = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is not ready: use it inside a test, after beforeAll`);
    return value;
  };
  const createTable = async (prefix = 'ledger'): Promise<string> => {
    const name = `${prefix}-${randomBytes(4).toString('hex')}`;
    await createLedgerTable(need(client, 'DynamoDB client'), name);
    return name;
  };

  beforeAll(async () => {
    local = await startDynamoDbLocal();
    client = createDynamoDbClient(local.endpoint);
    doc = createDocumentClient(local.endpoint);
    table = await createTable();
  });

  afterAll(async () => {
    doc?.destroy();
    client?.destroy();
    await local?.stop();
  });

  return {
    doc: () => need(doc, 'DynamoDB document client'),
    client: () => need(client, 'DynamoDB client'),
    tableName: () => need(table, 'ledger table'),
    endpoint: () => need(local, 'DynamoDB Local').endpoint,
    pid: () => need(local, 'DynamoDB Local').pid,
    createTable,
  };
}
