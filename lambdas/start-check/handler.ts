import middy from '@middy/core';
import { apiDeps } from '../lib/api/runtime.ts';
import { processLogger } from '../lib/logger.ts';
import { processMetrics } from '../lib/metrics/recorder.ts';
import { observability } from '../lib/observability/middleware.ts';
import { loadTracer } from '../lib/observability/tracing.ts';
import { type ScheduledCheck, startScheduledCheck } from './start-check.ts';

const SERVICE = 'belay-start-check';
// Before any client is built, so that it is traced.
const tracer = await loadTracer(SERVICE);

/** Target of a drift check's schedule (`belay:checks`): submits the check (see `start-check.ts`). */
export const handler = middy(async (event: ScheduledCheck) =>
  startScheduledCheck(await apiDeps(), event),
).use(
  observability({
    log: processLogger(SERVICE),
    metrics: processMetrics(),
    tracer,
    correlation: (event: ScheduledCheck) => ({ tenantId: event.tenant }),
  }),
);
