import middy from '@middy/core';
import { authorizeEvent } from '../lib/api/auth.ts';
import type { AuthorizerEvent, AuthorizerResult } from '../lib/api/events.ts';
import type { ApiKeyStore } from '../lib/auth/api-keys.ts';
import { apiKeyStoreFromEnv } from '../lib/auth/runtime.ts';

let keys: ApiKeyStore | undefined;

/**
 * Lambda authorizer of the HTTP API (simple responses): `Authorization: Bearer <api key>`
 * -> allowed with context `{tenantId, roles, keyId}`, which the API handler reads from
 * `requestContext.authorizer.lambda`. The local server runs the same `authorizeEvent`.
 */
export const handler = middy<AuthorizerEvent, AuthorizerResult>().handler(async (event) => {
  keys ??= apiKeyStoreFromEnv();
  return authorizeEvent(keys, event);
});
