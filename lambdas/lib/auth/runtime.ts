import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { getOptionalStringFromEnv, getStringFromEnv } from '../config.ts';
import { type ApiKeyStore, createApiKeyStore } from './api-keys.ts';

/**
 * The API key store from the environment (`TABLE_NAME`; `DYNAMODB_ENDPOINT` for DynamoDB
 * Local). Kept apart from the engine's runtime so the authorizer bundles only what it uses.
 */
export function apiKeyStoreFromEnv(env: NodeJS.ProcessEnv = process.env): ApiKeyStore {
  const tableName = getStringFromEnv('TABLE_NAME', env);
  const endpoint = getOptionalStringFromEnv('DYNAMODB_ENDPOINT', env);
  const client = new DynamoDBClient(
    endpoint
      ? {
          endpoint,
          region: env.AWS_REGION ?? 'us-east-1',
          credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        }
      : {},
  );
  return createApiKeyStore({ doc: DynamoDBDocumentClient.from(client), tableName });
}
