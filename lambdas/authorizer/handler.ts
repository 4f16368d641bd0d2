import middy from '@middy/core';
import { authorizeEvent } from '../lib/api/auth.ts';
import type { AuthorizerEvent, AuthorizerResult } from '../lib/api/events.ts';
import { authorizerDepsFromEnv } from '../lib/auth/runtime.ts';
import { processLogger } from '../lib/logger.ts';
import { noMetrics } from '../lib/metrics/recorder.ts';
import { observability } from '../lib/observability/middleware.ts';
import { loadTracer } from '../lib/observability/tracing.ts';

// Before the key store's DynamoDB client is built (at the first request), so that it is traced.
const tracer = await loadTracer('belay-authorizer');

let deps: ReturnType<typeof authorizerDepsFromEnv> | undefined;

/**
 * Lambda authorizer of the HTTP API (simple responses): `Authorization: Bearer <api key>`
 * -> allowed with context `{tenantId, roles, keyId}`, which the API handler reads from
 * `requestContext.authorizer.lambda`. A refused key counts against its source address (past
 * the burst, it is refused before the key is looked up). The local server runs the same code.
 */
export const handler = middy<AuthorizerEvent, AuthorizerResult>()
  .use(
    observability<AuthorizerEvent, AuthorizerResult>({
      log: processLogger('belay-authorizer'),
      metrics: noMetrics,
      tracer,
      correlation: () => ({}),
    }),
  )
  .handler(async (event) => {
    deps ??= authorizerDepsFromEnv();
    return authorizeEvent(deps.keys, event, deps.refusals);
  });
