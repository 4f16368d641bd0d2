import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { eventBridgeSdk } from '../aws/sdk/client-eventbridge.ts';
import type { BelayLogger } from '../logger.ts';
import { redact } from '../redact.ts';
import type { CheckFailedEvent, WaitEvent, WaitNotifier } from './types.ts';

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
  /** One event on the bus, tried again a few times; a failure is logged, never thrown. */
  const put = async (
    detailType: string,
    detail: Record<string, unknown>,
    said: { message: string; fields: Record<string, unknown>; failed: string },
  ): Promise<void> => {
    const entry = {
      EventBusName: busName,
      Source: 'belay',
      DetailType: detailType,
      Detail: JSON.stringify(detail),
    };
    let problem = '';
    for (let attempt = 1; attempt <= NOTIFY_ATTEMPTS; attempt++) {
      if (attempt > 1) await new Promise((r) => setTimeout(r, delay * 2 ** (attempt - 2)));
      try {
        const res = await client.send(new (eventBridgeSdk().PutEventsCommand)({ Entries: [entry] }));
        if (!res.FailedEntryCount) {
          options.log?.info(said.message, said.fields);
          return;
        }
        problem = `${res.Entries?.[0]?.ErrorCode ?? 'refused'}: ${res.Entries?.[0]?.ErrorMessage ?? ''}`;
      } catch (err) {
        problem = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      }
    }
    options.log?.error(said.failed, {
      ...said.fields,
      event: `${String(said.fields.event)}-notification-failed`,
      attempts: NOTIFY_ATTEMPTS,
      error: problem,
    });
  };
  return {
    async waiting(event) {
      const link = jobLink(apiBaseUrl, event.jobId);
      await put('Belay Job Waiting', waitEventDetail(event, link), {
        message: waitingMessage(event),
        fields: waitingFields(event, link),
        failed: 'could not tell people the job waits (EventBridge); the wait stands',
      });
    },
    async checkFailed(event) {
      const link = jobLink(apiBaseUrl, event.jobId);
      await put('Belay Check Failed', redact({ ...event, kind: 'check', link }), {
        message: checkFailedMessage(event),
        fields: checkFailedFields(event, link),
        failed: 'could not tell people a drift check failed (EventBridge)',
      });
    },
  };
}

/** Fields of the log line that says a drift check turned red. */
function checkFailedFields(event: CheckFailedEvent, link: string | undefined): Record<string, unknown> {
  return {
    event: 'check-failed',
    tenantId: event.tenantId,
    jobId: event.jobId,
    playbook: event.playbook,
    step: event.step,
    finding: event.finding,
    link,
  };
}

const checkFailedMessage = (event: CheckFailedEvent): string =>
  `the drift check of ${event.playbook} found step ${event.step} not as expected (${event.finding})`;

/**
 * Local stack: a log line with the link, and optionally a POST of the same JSON to a
 * configured webhook (best effort, bounded by a timeout: people are told, the job does not
 * depend on it).
 */
export function localNotifier(
  log: BelayLogger,
  options: { apiBaseUrl?: string; webhookUrl?: string } = {},
): WaitNotifier {
  const post = async (jobId: string, body: Record<string, unknown>): Promise<void> => {
    if (!options.webhookUrl) return;
    try {
      await fetch(options.webhookUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(redact(body)),
        signal: AbortSignal.timeout(3000),
      });
    } catch (err) {
      log.warn('notification webhook failed', { jobId, error: String(err) });
    }
  };
  return {
    async waiting(event: WaitEvent) {
      const link = jobLink(options.apiBaseUrl, event.jobId);
      log.info(waitingMessage(event), waitingFields(event, link));
      await post(event.jobId, { ...event, link });
    },
    async checkFailed(event: CheckFailedEvent) {
      const link = jobLink(options.apiBaseUrl, event.jobId);
      log.warn(checkFailedMessage(event), checkFailedFields(event, link));
      await post(event.jobId, { ...event, kind: 'check', link });
    },
  };
}
