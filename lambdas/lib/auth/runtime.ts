import { documentClientFromEnv } from '../aws/dynamodb.ts';
import { getStringFromEnv } from '../config.ts';
import { type ApiKeyStore, createApiKeyStore } from './api-keys.ts';

/**
 * The API key store from the environment (`TABLE_NAME`; `DYNAMODB_ENDPOINT` for DynamoDB
 * Local). Kept apart from the engine's runtime so the authorizer bundles only what it uses.
 */
export function apiKeyStoreFromEnv(env: NodeJS.ProcessEnv = process.env): ApiKeyStore {
  return createApiKeyStore({
    doc: documentClientFromEnv(env),
    tableName: getStringFromEnv('TABLE_NAME', env),
  });
}
