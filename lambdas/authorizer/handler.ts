import middy from '@middy/core';
import { authorizeEvent } from '../lib/api/auth.ts';
import type { AuthorizerEvent, AuthorizerResult } from '../lib/api/events.ts';
import { authorizerDepsFromEnv } from '../lib/auth/runtime.ts';

let deps: ReturnType<typeof authorizerDepsFromEnv> | undefined;

/**
 * Lambda authorizer of the HTTP API (simple responses): `Authorization: Bearer <api key>`
 * -> allowed with context `{tenantId, roles, keyId}`, which the API handler reads from
 * `requestContext.authorizer.lambda`. A refused key counts against its source address (past
 * the burst, it is refused before the key is looked up). The local server runs the same code.
 */
export const handler = middy<AuthorizerEvent, AuthorizerResult>().handler(async (event) => {
  deps ??= authorizerDepsFromEnv();
  return authorizeEvent(deps.keys, event, deps.refusals);
});
