import { z } from 'zod';
import { findSessionOwner } from '../../engine/session-owners.ts';
import { JobNotFoundError, StaleCheckpointError } from '../../ledger/errors.ts';
import { TERMINAL_STATUSES } from '../../ledger/types.ts';
import type { ApiDeps } from '../deps.ts';
import { BadRequestError, ConflictError } from '../errors.ts';
import { header } from '../events.ts';
import { forgetEvent, rememberEvent } from './deliveries.ts';
import { WebhookSignatureError } from './errors.ts';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyAnchorSignature } from './signature.ts';

/** Anchor's event envelope (docs.anchorbrowser.io/webhooks/events); other fields are kept but unused. */
export const AnchorEventSchema = z
  .object({
    id: z.string().min(1).max(200),
    type: z.string().min(1).max(100),
    created: z.string().optional(),
    data: z.record(z.string(), z.unknown()).optional(),
  })
  .passthrough()
  .meta({ id: 'AnchorEvent' });
export type AnchorEvent = z.infer<typeof AnchorEventSchema>;

/** Events that mean a browser session is over. */
export const SESSION_END_EVENTS: readonly string[] = ['session.completed', 'session.failed'];

export interface WebhookAck {
  received: true;
  eventId: string;
  /** What the event did: `session-ended`, or why it changed nothing. */
  action: string;
}

/** The session id of a session event (Anchor's payloads name it `session_id`; tolerate variants). */
export function sessionIdOf(event: AnchorEvent): string | undefined {
  const data = event.data ?? {};
  const nested = data.session as { id?: unknown } | undefined;
  for (const candidate of [data.session_id, data.sessionId, nested?.id, data.id]) {
    if (typeof candidate === 'string' && candidate.length > 0 && candidate.length <= 200) return candidate;
  }
  return undefined;
}

/**
 * Handles a delivery of Anchor's webhooks. Verified before anything else: the signature
 * (HMAC-SHA256 over `v0:<timestamp>:<raw body>`), then the timestamp's freshness, then the
 * event id, remembered with a conditional put so a replay within the window is refused
 * (409). A session-ended event for a session a job holds appends `session-ended` to the
 * job's ledger and drops the session from the job, so its next step opens a new one from
 * the profile instead of trying a dead session.
 */
export async function handleAnchorWebhook(
  deps: ApiDeps,
  request: { headers: Record<string, string | undefined>; rawBody: string },
): Promise<WebhookAck> {
  const check = verifyAnchorSignature({
    secrets: deps.webhooks.secrets,
    signatureHeader: header(request.headers, SIGNATURE_HEADER),
    timestampHeader: header(request.headers, TIMESTAMP_HEADER),
    rawBody: request.rawBody,
    now: deps.engine.clock(),
    toleranceSeconds: deps.webhooks.toleranceSeconds,
  });
  if (!check.ok) throw new WebhookSignatureError(check.reason, check.message);

  let json: unknown;
  try {
    json = JSON.parse(request.rawBody);
  } catch {
    throw new BadRequestError('invalid_json', 'the webhook body is not JSON');
  }
  const parsed = AnchorEventSchema.safeParse(json);
  if (!parsed.success)
    throw new BadRequestError('invalid_event', 'the webhook body is not an Anchor event envelope');
  const event = parsed.data;

  const fresh = await rememberEvent(deps.doc, deps.tableName, 'anchor', event.id, {
    type: event.type,
    now: deps.engine.clock(),
  });
  if (!fresh) throw new ConflictError('duplicate_event', `event ${event.id} was already received`);
  try {
    return { received: true, eventId: event.id, action: await apply(deps, event) };
  } catch (err) {
    // Not handled: let Anchor's retry be processed rather than refused as a replay.
    await forgetEvent(deps.doc, deps.tableName, 'anchor', event.id).catch(() => undefined);
    throw err;
  }
}

async function apply(deps: ApiDeps, event: AnchorEvent): Promise<string> {
  if (!SESSION_END_EVENTS.includes(event.type)) return 'ignored: not a session-ended event';
  const sessionId = sessionIdOf(event);
  if (!sessionId) return 'ignored: no session id';
  const owner = await findSessionOwner(deps.doc, deps.tableName, sessionId);
  if (!owner) return 'ignored: no job holds this session';
  const { ledger } = deps.engine;
  for (let attempt = 1; attempt <= 3; attempt++) {
    let job: Awaited<ReturnType<typeof ledger.getJob>>;
    try {
      job = await ledger.getJob(owner.tenantId, owner.jobId);
    } catch (err) {
      if (err instanceof JobNotFoundError) return 'ignored: the job is gone';
      throw err;
    }
    if (TERMINAL_STATUSES.includes(job.status)) return 'ignored: the job has finished';
    const app = Object.keys(job.sessions).find((a) => job.sessions[a]?.sessionId === sessionId);
    if (app === undefined) return 'ignored: the job no longer holds this session';
    const sessions = { ...job.sessions };
    delete sessions[app];
    try {
      await ledger.updateJob(owner.tenantId, owner.jobId, {
        expectedVersion: job.version,
        set: { sessions },
        entry: {
          type: 'session-ended',
          sessionId,
          actor: 'anchor-webhook',
          detail: { application: app, event: event.type, eventId: event.id },
          cost: { dynamoWrites: 2 },
        },
      });
      return 'session-ended';
    } catch (err) {
      if (!(err instanceof StaleCheckpointError)) throw err;
    }
  }
  throw new ConflictError('job_busy', 'the job kept changing; retry the delivery');
}
