import middy from '@middy/core';
import { processLogger } from '../lib/logger.ts';
import { processMetrics } from '../lib/metrics/recorder.ts';
import { countRecovery } from '../lib/metrics/recovery-metrics.ts';
import { observability } from '../lib/observability/middleware.ts';
import { loadTracer } from '../lib/observability/tracing.ts';
import { recoverDeps } from './deps.ts';
import {
  type ExecutionStatusChange,
  handleRecoveryEvent,
  type RecoveryOutcome,
  type ScheduledEvent,
  type SweepResult,
} from './recover.ts';

const SERVICE = 'belay-recover';
// Before the engine's clients are built, so that they are traced.
const tracer = await loadTracer(SERVICE);

type RecoveryEvent = ExecutionStatusChange | ScheduledEvent;
type RecoveryResult = RecoveryOutcome | SweepResult;

/**
 * Lambda entry point of the recovery function: the EventBridge rule on the job state machine's
 * execution status changes and the scheduled sweep both invoke it; the logic is
 * `handleRecoveryEvent` (pure, takes its dependencies).
 */
export const handler = middy(
  async (event: RecoveryEvent): Promise<RecoveryResult> => handleRecoveryEvent(await recoverDeps(), event),
).use(
  observability<RecoveryEvent, RecoveryResult>({
    log: processLogger(SERVICE),
    metrics: processMetrics(),
    tracer,
    correlation: () => ({}),
    ended: (_event, result, error) => countRecovery(processMetrics(), result, error),
  }),
);
