import type { WaitNotifier } from '../engine/types.ts';
import type { NOTIFICATION_CHANNELS } from './names.ts';
import type { MetricsRecorder } from './recorder.ts';

/**
 * A notifier whose failures are counted (`NotificationFailures` by channel) and passed on as
 * they were: the caller decides what a failed notification means for the job.
 *
 * @example
 * const notifier = observeNotifier(eventBridgeNotifier(client, bus), metrics, 'eventbridge');
 */
export function observeNotifier(
  notifier: WaitNotifier,
  metrics: MetricsRecorder,
  channel: (typeof NOTIFICATION_CHANNELS)[number],
): WaitNotifier {
  return {
    async waiting(event) {
      try {
        await notifier.waiting(event);
      } catch (err) {
        metrics.add('NotificationFailures', 1, { Channel: channel });
        throw err;
      }
    },
  };
}

/**
 * Counts the deliveries to tenants' webhooks that failed after their retries
 * (`NotificationFailures`, channel `webhook`): the notifier function's answer, read when it ends.
 */
export function countWebhookFailures(metrics: MetricsRecorder, result: { failed: number } | undefined): void {
  if (result && result.failed > 0) metrics.add('NotificationFailures', result.failed, { Channel: 'webhook' });
}
