import type { RECOVERY_ACTIONS } from './names.ts';
import type { MetricsRecorder } from './recorder.ts';

type Outcome = { action: 'none' | 'restarted' | 'failed' };

const ACTION: Readonly<Record<Outcome['action'], (typeof RECOVERY_ACTIONS)[number]>> = {
  restarted: 'resumed',
  failed: 'failed',
  none: 'skipped',
};

/**
 * The recovery function's metrics, read off its answer when it ends: `RecoveryActions` by what it
 * did with each job (one for a status change, one per job a sweep looked at), `RecoveryErrors`
 * when the invocation threw.
 */
export function countRecovery(
  metrics: MetricsRecorder,
  result: Outcome | { outcomes: Outcome[] } | undefined,
  error: unknown,
): void {
  if (error !== undefined) {
    metrics.add('RecoveryErrors', 1, {});
    return;
  }
  if (!result) return;
  const outcomes = 'outcomes' in result ? result.outcomes : [result];
  for (const o of outcomes) metrics.add('RecoveryActions', 1, { Action: ACTION[o.action] });
}
