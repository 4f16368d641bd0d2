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
  const counted =
    <E>(send: (event: E) => Promise<void>) =>
    async (event: E): Promise<void> => {
      try {
        await send(event);
      } catch (err) {
        metrics.add('NotificationFailures', 1, { Channel: channel });
        throw err;
      }
    };
  return {
    waiting: counted((event) => notifier.waiting(event)),
    checkFailed: counted((event) => notifier.checkFailed(event)),
  };
}

/**
 * Counts the deliveries to tenants' webhooks that failed after their retries
 * (`NotificationFailures`, channel `webhook`): the notifier function's answer, read when it ends.
 */
export function countWebhookFailures(metrics: MetricsRecorder, result: { failed: number } | undefined): void {
  if (result && result.failed > 0) metrics.add('NotificationFailures', result.failed, { Channel: 'webhook' });
}
