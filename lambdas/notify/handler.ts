import middy from '@middy/core';
import { processLogger } from '../lib/logger.ts';
import { countWebhookFailures } from '../lib/metrics/notifier-metrics.ts';
import { processMetrics } from '../lib/metrics/recorder.ts';
import { type DeliverDeps, deliverWaitNotice, type WaitNotice } from '../lib/notifications/deliver.ts';
import { deliverDepsFromEnv } from '../lib/notifications/runtime.ts';
import { observability } from '../lib/observability/middleware.ts';
import { loadTracer } from '../lib/observability/tracing.ts';

const SERVICE = 'belay-notify';
// Before any client is built, so that it is traced.
const tracer = await loadTracer(SERVICE);

let deps: Promise<DeliverDeps> | undefined;

/**
 * Target of the rule on `Belay Job Waiting` events (EventBridge in AWS; the local stack's
 * stand-in locally): sends the notice to the tenant's webhooks, signed and retried, and logs
 * each delivery. It runs apart from the job (asynchronously), so a slow or failing receiver
 * never holds a job back.
 */
type NotifyEvent = { detail?: WaitNotice } & Partial<WaitNotice>;
type NotifyResult = { delivered: number; failed: number };

export const handler = middy(async (event: NotifyEvent): Promise<NotifyResult> => {
  const notice = (event.detail ?? event) as WaitNotice;
  if (typeof notice.tenantId !== 'string' || typeof notice.jobId !== 'string')
    return { delivered: 0, failed: 0 };
  deps ??= deliverDepsFromEnv().catch((err: unknown) => {
    deps = undefined;
    throw err;
  });
  const deliveries = await deliverWaitNotice(await deps, notice);
  return {
    delivered: deliveries.filter((d) => d.outcome === 'delivered').length,
    failed: deliveries.filter((d) => d.outcome === 'failed').length,
  };
}).use(
  observability<NotifyEvent, NotifyResult>({
    log: processLogger(SERVICE),
    metrics: processMetrics(),
    tracer,
    correlation: (event) => {
      const notice = (event.detail ?? event) as Partial<WaitNotice>;
      return { tenantId: notice.tenantId, jobId: notice.jobId, step: notice.step };
    },
    ended: (_event, result) => countWebhookFailures(processMetrics(), result),
  }),
);
