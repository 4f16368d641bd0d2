import { API_SERVICE, createApiHandler } from '../lib/api/app.ts';
import { apiDeps } from '../lib/api/runtime.ts';
import { loadTracer } from '../lib/observability/tracing.ts';

// Before the API's AWS clients are built (at the first request), so that they are traced.
await loadTracer(API_SERVICE);

/**
 * Lambda entry point of every HTTP API route (API Gateway HTTP API, payload format 2.0).
 * A thin wrapper: routing, validation and the job operations live in `lib/api` and
 * `lib/jobs`; dependencies are built once per process from the environment.
 */
export const handler = createApiHandler(apiDeps);
