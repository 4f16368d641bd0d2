import middy, { type MiddlewareObj } from '@middy/core';
import httpErrorHandler from '@middy/http-error-handler';
import { type BelayLogger, processLogger } from '../logger.ts';
import { processMetrics } from '../metrics/recorder.ts';
import { observability } from '../observability/middleware.ts';
import { activeTracer } from '../observability/tracing.ts';
import { requestTenant } from './auth.ts';
import type { ApiDeps } from './deps.ts';
import { errorBody } from './errors.ts';
import type { HttpApiEvent, HttpApiResult } from './events.ts';
import { handleApiEvent } from './router.ts';

/**
 * Turns any error into the API's envelope before `@middy/http-error-handler` writes the
 * response: a 4xx `ApiError` keeps its code, message and details; anything else becomes a
 * 500 (or 503) that says nothing about the cause, which is logged instead.
 */
export function errorEnvelope(
  log: () => BelayLogger | undefined,
): MiddlewareObj<HttpApiEvent, HttpApiResult> {
  return {
    onError: async (request) => {
      if (request.response !== undefined) return;
      const { statusCode, body, headers } = errorBody(request.error, {
        tenantId: requestTenant(request.event),
      });
      if (statusCode >= 500) {
        const err = request.error as (Error & { cause?: unknown }) | null;
        log()?.error('request failed', {
          path: request.event?.rawPath,
          method: request.event?.requestContext?.http?.method,
          requestId: request.event?.requestContext?.requestId,
          error: err ? { name: err.name, message: err.message, cause: String(err.cause ?? '') } : 'unknown',
        });
      }
      // The shape http-error-handler formats: an exposed HTTP error whose message is the JSON body.
      request.error = Object.assign(new Error(JSON.stringify(body)), {
        statusCode,
        expose: true,
        headers: { 'Cache-Control': 'no-store', ...headers },
      });
    },
  };
}

/** The `service` of the API's log lines. */
export const API_SERVICE = 'belay-api';

/** A job id in the request path (`/jobs/{jobId}...`), for the log lines of the request. */
const JOB_PATH = /^\/jobs\/([A-Za-z0-9_-]{1,64})(?:\/|$)/;

/**
 * The API's Lambda handler (one function for every HTTP API route), over dependencies that
 * are built once per process (cold start) by `deps`. Its log lines carry the Lambda context,
 * the caller's tenant and the job in the path; its metrics (the ledger writes it makes:
 * submissions, decisions, cancellations) are flushed after each request.
 *
 * @example
 * export const handler = createApiHandler(() => apiDeps());
 */
export function createApiHandler(
  deps: () => Promise<ApiDeps>,
): middy.MiddyfiedHandler<HttpApiEvent, HttpApiResult> {
  let resolved: ApiDeps | undefined;
  return middy<HttpApiEvent, HttpApiResult>()
    .use(
      observability<HttpApiEvent, HttpApiResult>({
        log: processLogger(API_SERVICE),
        metrics: processMetrics(),
        tracer: activeTracer(),
        correlation: (event) => ({
          tenantId: requestTenant(event) || undefined,
          jobId: JOB_PATH.exec(event?.rawPath ?? '')?.[1],
        }),
      }),
    )
    .use(httpErrorHandler({ logger: false }))
    .use(errorEnvelope(() => resolved?.engine.log))
    .handler(async (event) => {
      resolved = await deps();
      return handleApiEvent(resolved, event);
    });
}
