import middy from '@middy/core';
import { documentClientFromEnv } from '../lib/aws/dynamodb.ts';
import { createLeaseCapacity } from '../lib/capacity/leases.ts';
import { isPlanName } from '../lib/capacity/plans.ts';
import { getOptionalStringFromEnv, getStringFromEnv } from '../lib/config.ts';
import { planCapsFromEnv } from '../lib/engine/runtime.ts';
import { processLogger } from '../lib/logger.ts';
import { processMetrics } from '../lib/metrics/recorder.ts';
import { observability } from '../lib/observability/middleware.ts';
import { loadTracer } from '../lib/observability/tracing.ts';
import { allowanceFromEnv } from './allowance.ts';
import { type WatchdogDeps, type WatchReport, watch } from './watchdog.ts';

const SERVICE = 'belay-watchdog';
// Before the DynamoDB client is built, so that it is traced.
const tracer = await loadTracer(SERVICE);

let deps: WatchdogDeps | undefined;

function depsFromEnv(env: NodeJS.ProcessEnv = process.env): WatchdogDeps {
  const doc = documentClientFromEnv(env);
  const tableName = getStringFromEnv('TABLE_NAME', env);
  const plan = getOptionalStringFromEnv('BELAY_DEFAULT_PLAN', env) ?? 'free';
  return {
    doc,
    tableName,
    capacity: createLeaseCapacity({
      doc,
      tableName,
      defaultPlan: isPlanName(plan) ? plan : 'free',
      caps: planCapsFromEnv(env),
    }),
    metrics: processMetrics(env),
    log: processLogger(SERVICE),
    clock: () => new Date(),
    allowance: allowanceFromEnv(env),
  };
}

/**
 * Lambda entry point of the watchdog (an EventBridge schedule, every five minutes): one look at
 * every tenant's live jobs and leases, published as the operations metrics (`StuckJobs`,
 * `QueueDepth`, `OldestQueuedAge`, `OldestWaitAge`, `BrowsersInUse`...). Read-only.
 */
export const handler = middy(async (): Promise<Omit<WatchReport, 'stuck'> & { stuck: number }> => {
  deps ??= depsFromEnv();
  const report = await watch(deps);
  return { ...report, stuck: report.stuck.length };
}).use(
  observability({
    log: processLogger(SERVICE),
    metrics: processMetrics(),
    tracer,
    correlation: () => ({}),
  }),
);
