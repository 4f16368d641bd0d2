import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { eventBridgeSdk } from '../aws/sdk/client-eventbridge.ts';
import type { BelayLogger } from '../logger.ts';
import { redact } from '../redact.ts';
import type { WaitEvent, WaitNotifier } from './types.ts';

/**
 * The most a wait event's detail carries (UTF-8 bytes of its JSON). EventBridge takes at most
 * 256 KiB a request; the evidence of a long job can be more than that, so the event carries
 * the newest evidence that fits, says how much it left out, and links to the job.
 */
export const MAX_WAIT_EVENT_DETAIL_BYTES = 64 * 1024;

/** Attempts of one notification before it is given up (logged): EventBridge throttles and fails now and then. */
export const NOTIFY_ATTEMPTS = 3;

/** The event's detail, bounded: the newest evidence entries that fit in `maxBytes`, and how many were left out. */
export function waitEventDetail(
  event: WaitEvent,
  link: string | undefined,
  maxBytes = MAX_WAIT_EVENT_DETAIL_BYTES,
): Record<string, unknown> {
  const base = redact({ ...event, evidence: [], link }) as Record<string, unknown>;
  const evidence = redact(event.evidence);
  let budget = maxBytes - Buffer.byteLength(JSON.stringify(base), 'utf8') - 64;
  const kept: Record<string, unknown>[] = [];
  for (let i = evidence.length - 1; i >= 0 && budget > 0; i--) {
    const size = Buffer.byteLength(JSON.stringify(evidence[i]), 'utf8') + 1;
    if (size > budget) break;
    budget -= size;
    kept.unshift(evidence[i] as Record<string, unknown>);
  }
  const omitted = evidence.length - kept.length;
  return { ...base, evidence: kept, ...(omitted > 0 ? { evidenceOmitted: omitted } : {}) };
}

/** The job's page in the API, when the deployment says where the API is. */
function jobLink(apiBaseUrl: string | undefined, jobId: string): string | undefined {
  return apiBaseUrl ? `${apiBaseUrl}/jobs/${jobId}` : undefined;
}

/** Fields of the log line that says a job waits (both notifiers write it). */
function waitingFields(event: WaitEvent, link: string | undefined): Record<string, unknown> {
  return {
    event: 'job-waiting',
    tenantId: event.tenantId,
    jobId: event.jobId,
    kind: event.kind,
    step: event.step,
    reason: event.reason,
    expiresAt: event.expiresAt,
    link,
  };
}

/** The message of that log line. */
const waitingMessage = (event: WaitEvent): string =>
  `job ${event.jobId} is waiting for ${event.kind} at step ${event.step}`;

/**
 * AWS: a `Belay Job Waiting` event on the bus, for rules that page approvers, open tickets,
 * post to chat. Telling people is not part of the job: a PutEvents that fails (throttled, an
 * internal error, the entry refused) is tried again a few times, then logged, and the wait
 * stands (the token is stored; the API and the console show the wait).
 */
export function eventBridgeNotifier(
  client: EventBridgeClient,
  busName: string,
  apiBaseUrl?: string,
  options: { log?: BelayLogger; retryDelayMs?: number } = {},
): WaitNotifier {
  const delay = options.retryDelayMs ?? 200;
  return {
    async waiting(event) {
      const link = jobLink(apiBaseUrl, event.jobId);
      const detail = waitEventDetail(event, link);
      const fields = waitingFields(event, link);
      const entry = {
        EventBusName: busName,
        Source: 'belay',
        DetailType: 'Belay Job Waiting',
        Detail: JSON.stringify(detail),
      };
      let problem = '';
      for (let attempt = 1; attempt <= NOTIFY_ATTEMPTS; attempt++) {
        if (attempt > 1) await new Promise((r) => setTimeout(r, delay * 2 ** (attempt - 2)));
        try {
          const res = await client.send(new (eventBridgeSdk().PutEventsCommand)({ Entries: [entry] }));
          if (!res.FailedEntryCount) {
            options.log?.info(waitingMessage(event), fields);
            return;
          }
          problem = `${res.Entries?.[0]?.ErrorCode ?? 'refused'}: ${res.Entries?.[0]?.ErrorMessage ?? ''}`;
        } catch (err) {
          problem = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
        }
      }
      options.log?.error('could not tell people the job waits (EventBridge); the wait stands', {
        ...fields,
        event: 'wait-notification-failed',
        attempts: NOTIFY_ATTEMPTS,
        error: problem,
      });
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
      const link = jobLink(options.apiBaseUrl, event.jobId);
      log.info(waitingMessage(event), waitingFields(event, link));
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
