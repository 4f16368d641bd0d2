/**
 * The watchdog in the local stack: the same `watch` as the scheduled function in AWS, run on a
 * timer in the stack's process, publishing to the stack's metrics file (`<dataDir>/metrics.jsonl`)
 * and logging stuck jobs to the terminal.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createLeaseCapacity } from '../lambdas/lib/capacity/leases.ts';
import { planCapsFromEnv } from '../lambdas/lib/engine/runtime.ts';
import { processLogger } from '../lambdas/lib/logger.ts';
import type { MetricsRecorder } from '../lambdas/lib/metrics/recorder.ts';
import { allowanceFromEnv } from '../lambdas/watchdog/allowance.ts';
import { watch } from '../lambdas/watchdog/watchdog.ts';

export interface LocalWatchdog {
  stop(): void;
}

/** Runs `watch` every `intervalMs` (never two at once); a failed look is logged and the next one runs. */
export function startLocalWatchdog(options: {
  doc: DynamoDBDocumentClient;
  tableName: string;
  env: Record<string, string>;
  metrics: MetricsRecorder;
  intervalMs: number;
}): LocalWatchdog {
  const log = processLogger('belay-watchdog');
  const deps = {
    doc: options.doc,
    tableName: options.tableName,
    capacity: createLeaseCapacity({
      doc: options.doc,
      tableName: options.tableName,
      caps: planCapsFromEnv(options.env),
    }),
    metrics: options.metrics,
    log,
    clock: () => new Date(),
    allowance: allowanceFromEnv(options.env),
  };
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    watch(deps)
      .catch((err: unknown) =>
        log.warn('watchdog look failed', { error: err instanceof Error ? err.name : String(err) }),
      )
      .finally(() => {
        running = false;
      });
  }, options.intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
