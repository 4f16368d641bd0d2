import { traced } from '../observability/tracing.ts';
import { clientConfigFromEnv } from './endpoint.ts';
import { DynamoDBClient } from './sdk/client-dynamodb.ts';
import { DynamoDBDocumentClient } from './sdk/lib-dynamodb.ts';

/**
 * The process's DynamoDB document client; `DYNAMODB_ENDPOINT` points it at DynamoDB Local.
 * Built once at the edge (cold start) and handed to every store that needs the table.
 */
export function documentClientFromEnv(env: NodeJS.ProcessEnv = process.env): DynamoDBDocumentClient {
  const client = traced(new DynamoDBClient(clientConfigFromEnv('DYNAMODB_ENDPOINT', env)));
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}
