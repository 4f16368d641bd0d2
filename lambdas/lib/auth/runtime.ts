import { anonymousRateLimiterFromEnv, type RateLimiter } from '../api/rate-limit.ts';
import { documentClientFromEnv } from '../aws/dynamodb.ts';
import { getStringFromEnv } from '../config.ts';
import { type ApiKeyStore, createApiKeyStore } from './api-keys.ts';

/**
 * The authorizer's dependencies from the environment (`TABLE_NAME`; `DYNAMODB_ENDPOINT` for
 * DynamoDB Local): the API key store, and the per-address count of refused keys. Kept apart
 * from the engine's runtime so the authorizer bundles only what it uses.
 */
export function authorizerDepsFromEnv(env: NodeJS.ProcessEnv = process.env): {
  keys: ApiKeyStore;
  refusals: RateLimiter;
} {
  const doc = documentClientFromEnv(env);
  const tableName = getStringFromEnv('TABLE_NAME', env);
  return {
    keys: createApiKeyStore({ doc, tableName }),
    refusals: anonymousRateLimiterFromEnv(doc, tableName, env),
  };
}

/** The API key store alone, from the environment (the `keys` command). */
export function apiKeyStoreFromEnv(env: NodeJS.ProcessEnv = process.env): ApiKeyStore {
  return createApiKeyStore({
    doc: documentClientFromEnv(env),
    tableName: getStringFromEnv('TABLE_NAME', env),
  });
}
