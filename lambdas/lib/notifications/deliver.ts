import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { redact, redactText } from '../redact.ts';
import { SIGNATURE_HEADER, signPayload, webhookSecret } from './signing.ts';
import type { Delivery, DeliveryAttempt, Webhook, WebhookEvent, WebhookStore } from './store.ts';

/**
 * A job waits for a person, or a playbook's drift check turned red (`kind: 'check'`): what the
 * engine announces (the EventBridge event's detail).
 */
export interface WaitNotice {
  tenantId: string;
  jobId: string;
  kind: string;
  step: string;
  /** A drift check: the playbook, what it found at the step, and why. */
  playbook?: string;
  finding?: string;
  detail?: string;
  reason?: string;
  expiresAt?: string;
  /** A takeover: what the step asks the person to do in the browser. */
  question?: string;
}

export interface DeliverDeps {
  webhooks: WebhookStore;
  signingKey: string;
  /** The API's base URL: the payload links to the console page of the decision. */
  apiBaseUrl: string;
  fetch: typeof fetch;
  clock: () => Date;
  /** Pauses before the 2nd, 3rd... attempt (ms); backoff with jitter is the caller's choice. */
  backoffMs: readonly number[];
  timeoutMs: number;
  log: { warn(message: string, fields?: Record<string, unknown>): void };
}

/** The default backoff: 4 attempts over about 20 s, within one invocation. */
export const DEFAULT_BACKOFF_MS: readonly number[] = [1_000, 4_000, 15_000];

const WORDS: Readonly<Record<string, string>> = {
  approval: 'approval',
  mfa: 'a one-time code',
  review: 'a review',
  takeover: 'a person to act in its browser',
};

/**
 * The JSON a webhook receives. `text` makes it a Slack (and Mattermost, Teams workflow)
 * incoming-webhook message as it is; the rest is for programs.
 */
/** The webhook event a notice is: `job.waiting`, or `playbook.check.failed` for a drift check that turned red. */
export function eventOf(notice: Pick<WaitNotice, 'kind'>): WebhookEvent {
  return notice.kind === 'check' ? 'playbook.check.failed' : 'job.waiting';
}

export function waitPayload(
  notice: WaitNotice,
  apiBaseUrl: string,
  deliveryId: string,
  now: Date,
): Record<string, unknown> {
  const base = apiBaseUrl.replace(/\/+$/, '');
  if (notice.kind === 'check') return checkPayload(notice, base, deliveryId, now);
  const page = `${base}/console/jobs/${encodeURIComponent(notice.jobId)}`;
  // From the ledger, which keeps numbers exact: masked for people here, in the text as in `job`.
  const question =
    typeof notice.question === 'string' ? redactText(notice.question.slice(0, 500)) : undefined;
  return {
    type: 'job.waiting',
    id: deliveryId,
    createdAt: now.toISOString(),
    text:
      notice.kind === 'takeover'
        ? `Belay: job ${notice.jobId} waits for a person to act in its browser at step ${notice.step}${question ? `: ${question}` : ''}. An approver opens its live view and presses Done on the job's page: ${page}`
        : `Belay: job ${notice.jobId} waits for ${WORDS[notice.kind] ?? notice.kind} at step ${notice.step}. Decide here: ${page}`,
    job: redact({
      tenantId: notice.tenantId,
      jobId: notice.jobId,
      kind: notice.kind,
      step: notice.step,
      ...(notice.reason ? { reason: notice.reason } : {}),
      ...(notice.expiresAt ? { expiresAt: notice.expiresAt } : {}),
      ...(question ? { question } : {}),
    }),
    links: {
      console: page,
      inbox: `${base}/console/inbox`,
      api: `${base}/jobs/${encodeURIComponent(notice.jobId)}`,
    },
  };
}

/** A drift check turned red: the playbook, the step and its finding, and where to look. */
function checkPayload(
  notice: WaitNotice,
  base: string,
  deliveryId: string,
  now: Date,
): Record<string, unknown> {
  const playbook = notice.playbook ?? '';
  const health = `${base}/console/playbooks/${encodeURIComponent(playbook)}`;
  return {
    type: 'playbook.check.failed',
    id: deliveryId,
    createdAt: now.toISOString(),
    text: redactText(
      `Belay: the drift check of ${playbook} found step ${notice.step} not as the playbook expects (${notice.finding ?? 'changed'}). Look: ${health}`,
    ),
    check: redact({
      tenantId: notice.tenantId,
      jobId: notice.jobId,
      playbook,
      step: notice.step,
      ...(notice.finding ? { finding: notice.finding } : {}),
      ...(notice.detail ? { detail: String(notice.detail).slice(0, 500) } : {}),
    }),
    links: {
      console: health,
      api: `${base}/playbooks/${encodeURIComponent(playbook)}/checks`,
    },
  };
}

async function attempt(
  deps: DeliverDeps,
  hook: Webhook,
  secret: string,
  body: string,
  deliveryId: string,
  event: WebhookEvent,
): Promise<DeliveryAttempt> {
  const started = deps.clock();
  const t = Math.floor(started.getTime() / 1000);
  try {
    const res = await deps.fetch(hook.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Belay-Webhooks/1.0',
        'belay-event': event,
        'belay-delivery': deliveryId,
        [SIGNATURE_HEADER.toLowerCase()]: signPayload(secret, t, body),
      },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(deps.timeoutMs),
    });
    await res.body?.cancel().catch(() => undefined);
    return { at: started.toISOString(), status: res.status, ms: deps.clock().getTime() - started.getTime() };
  } catch (err) {
    return {
      at: started.toISOString(),
      status: 0,
      ms: deps.clock().getTime() - started.getTime(),
      error: err instanceof Error ? err.name : 'error',
    };
  }
}

/**
 * Sends the notice to each of the tenant's live webhooks: signed, retried with backoff while the
 * receiver fails (5xx, 429, no answer), one delivery-log entry per webhook with every attempt.
 * Resolves with the deliveries; never throws for a receiver's failure (it is logged), so
 * notifying never holds a job back.
 */
export async function deliverWaitNotice(deps: DeliverDeps, notice: WaitNotice): Promise<Delivery[]> {
  const event = eventOf(notice);
  const hooks = (await deps.webhooks.list(notice.tenantId)).filter(
    (h) => !h.revokedAt && h.events.includes(event),
  );
  return Promise.all(
    hooks.map(async (hook) => {
      const deliveryId = `dlv_${randomBytes(8).toString('hex')}`;
      const body = JSON.stringify(waitPayload(notice, deps.apiBaseUrl, deliveryId, deps.clock()));
      const secret = webhookSecret(deps.signingKey, notice.tenantId, hook.webhookId);
      const attempts: DeliveryAttempt[] = [];
      for (let i = 0; i <= deps.backoffMs.length; i++) {
        if (i > 0) await sleep((deps.backoffMs[i - 1] as number) * (0.5 + Math.random() / 2));
        const a = await attempt(deps, hook, secret, body, deliveryId, event);
        attempts.push(a);
        // 2xx delivered; a 4xx other than 408/429 will not get better by sending it again.
        if (a.status >= 200 && a.status < 300) break;
        if (a.status >= 400 && a.status < 500 && a.status !== 408 && a.status !== 429) break;
      }
      const last = attempts.at(-1) as DeliveryAttempt;
      const delivery: Delivery = {
        deliveryId,
        webhookId: hook.webhookId,
        event,
        jobId: notice.jobId,
        step: notice.step,
        outcome: last.status >= 200 && last.status < 300 ? 'delivered' : 'failed',
        attempts,
        at: attempts[0]?.at ?? deps.clock().toISOString(),
      };
      if (delivery.outcome === 'failed') {
        deps.log.warn('webhook delivery failed', {
          webhookId: hook.webhookId,
          jobId: notice.jobId,
          attempts: attempts.length,
          status: last.status,
        });
      }
      await deps.webhooks.recordDelivery(notice.tenantId, delivery).catch((err: unknown) => {
        deps.log.warn('webhook delivery not logged', {
          webhookId: hook.webhookId,
          error: err instanceof Error ? err.name : 'error',
        });
      });
      return delivery;
    }),
  );
}
