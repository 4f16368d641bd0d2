/**
 * The middy middlewares every Belay handler runs with, in one list: Powertools' Lambda context
 * on the log lines (cleared after each invocation), the X-Ray handler segment where tracing is
 * on, Belay's correlation fields, and the invocation's metrics flushed when it ends.
 */

import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type { MiddlewareObj } from '@middy/core';
import type { BelayLogger, CorrelationFields } from '../logger.ts';
import type { MetricsRecorder } from '../metrics/recorder.ts';

export interface ObservabilityOptions<E, R> {
  log: BelayLogger;
  metrics: MetricsRecorder;
  /** Where tracing is on (`loadTracer`). */
  tracer: Tracer | undefined;
  /** The correlation fields an event carries. */
  correlation(event: E): CorrelationFields;
  /** Metrics of how the invocation ended (`error` set when it threw), recorded before the flush. */
  ended?(event: E, result: R | undefined, error: unknown): void;
}

/**
 * The handler's observability middlewares.
 *
 * Traces record neither responses nor error texts (they carry evidence read from customers'
 * applications and, in errors, page text): the segment gets the function's annotations
 * (`tenantId`, `jobId`, cold start) and Lambda records the error itself.
 *
 * @example
 * middy(core).use(observability({ log, metrics, tracer, correlation: (e) => ({ jobId: e.jobId }) }));
 */
// biome-ignore lint/suspicious/noExplicitAny: middy's middleware types are parameterised by the handler.
export function observability<E, R>(options: ObservabilityOptions<E, R>): MiddlewareObj<E, R, Error, any>[] {
  const { log, metrics, tracer } = options;
  const ended = (event: E, result: R | undefined, error: unknown): void => {
    try {
      options.ended?.(event, result, error);
    } finally {
      metrics.flush();
    }
  };
  const correlate: MiddlewareObj<E, R> = {
    before: (request) => {
      const fields = options.correlation(request.event);
      log.correlate(fields);
      if (tracer) {
        if (fields.tenantId) tracer.putAnnotation('tenantId', fields.tenantId);
        if (fields.jobId) tracer.putAnnotation('jobId', fields.jobId);
      }
    },
    after: (request) => ended(request.event, request.response ?? undefined, undefined),
    onError: (request) => ended(request.event, undefined, request.error ?? new Error('unknown')),
  };
  return [
    injectLambdaContext(log.powertools, { resetKeys: true }),
    ...(tracer ? [captureLambdaHandler(tracer, { captureResponse: false })] : []),
    correlate,
  ] as MiddlewareObj<E, R>[];
}
