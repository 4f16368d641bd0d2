import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { BelayLogger } from '../logger.ts';
import { redact } from '../redact.ts';
import type { WaitEvent, WaitNotifier } from './types.ts';

/** AWS: a `Belay Job Waiting` event on the bus, for rules that page approvers, open tickets, post to chat. */
export function eventBridgeNotifier(
  client: EventBridgeClient,
  busName: string,
  apiBaseUrl?: string,
): WaitNotifier {
  return {
    async waiting(event) {
      const detail = redact({ ...event, link: apiBaseUrl ? `${apiBaseUrl}/jobs/${event.jobId}` : undefined });
      const res = await client.send(
        new PutEventsCommand({
          Entries: [
            {
              EventBusName: busName,
              Source: 'belay',
              DetailType: 'Belay Job Waiting',
              Detail: JSON.stringify(detail),
            },
          ],
        }),
      );
      if (res.FailedEntryCount)
        throw new Error(`EventBridge refused the wait event: ${res.Entries?.[0]?.ErrorMessage}`);
    },
  };
}

/**
 * Local stack: a log line with the link, and optionally a POST of the same JSON to a
 * configured webhook (best effort, bounded by a timeout: people are told, the job does not
 * depend on it).
 */
export function localNotifier(
  log: BelayLogger,
  options: { apiBaseUrl?: string; webhookUrl?: string } = {},
): WaitNotifier {
  return {
    async waiting(event: WaitEvent) {
      const link = options.apiBaseUrl ? `${options.apiBaseUrl}/jobs/${event.jobId}` : undefined;
      log.info(`job ${event.jobId} is waiting for ${event.kind} at step ${event.step}`, {
        event: 'job-waiting',
        tenantId: event.tenantId,
        jobId: event.jobId,
        kind: event.kind,
        step: event.step,
        reason: event.reason,
        expiresAt: event.expiresAt,
        link,
      });
      if (!options.webhookUrl) return;
      try {
        await fetch(options.webhookUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(redact({ ...event, link })),
          signal: AbortSignal.timeout(3000),
        });
      } catch (err) {
        log.warn('wait webhook failed', { jobId: event.jobId, error: String(err) });
      }
    },
  };
}
