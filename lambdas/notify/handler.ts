import middy from '@middy/core';
import { type DeliverDeps, deliverWaitNotice, type WaitNotice } from '../lib/notifications/deliver.ts';
import { deliverDepsFromEnv } from '../lib/notifications/runtime.ts';

let deps: Promise<DeliverDeps> | undefined;

/**
 * Target of the rule on `Belay Job Waiting` events (EventBridge in AWS; the local stack's
 * stand-in locally): sends the notice to the tenant's webhooks, signed and retried, and logs
 * each delivery. It runs apart from the job (asynchronously), so a slow or failing receiver
 * never holds a job back.
 */
export const handler = middy(async (event: { detail?: WaitNotice } & Partial<WaitNotice>) => {
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
});
