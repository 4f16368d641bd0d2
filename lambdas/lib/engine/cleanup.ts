import type { SessionUsage } from '../browser/types.ts';
import { StaleCheckpointError } from '../ledger/errors.ts';
import type { Job } from '../ledger/types.ts';
import type { EngineDeps } from './types.ts';

/** A session a job held, as it was ended. */
export interface EndedSession {
  application: string;
  sessionId: string;
  openedAt: string;
  /** What the provider reported it used, read just before it ended (absent when it could not say). */
  usage?: SessionUsage;
}

/**
 * Ends every session the job holds, gracefully: the provider saves each persisted profile
 * first, so a later session from the same profile starts with its cookies (signed in).
 * Before each end, what the provider reports the session used (proxy bytes, model tokens)
 * is read and recorded on a `session-ended` entry, so the job's cost includes it.
 * Idempotent; a session that cannot be ended now ends by its idle timeout.
 */
export async function endJobSessions(deps: EngineDeps, job: Job): Promise<EndedSession[]> {
  const ended: EndedSession[] = [];
  for (const [app, ref] of Object.entries(job.sessions ?? {})) {
    if (ref.endedAt) {
      // Ended and recorded by an earlier call.
      ended.push({ application: app, sessionId: ref.sessionId, openedAt: ref.openedAt });
      continue;
    }
    let usage: SessionUsage | undefined;
    try {
      usage = await deps.browser.usage(ref.sessionId).catch(() => undefined);
      await deps.browser.detach(ref.sessionId);
      await deps.browser.endSession(ref.sessionId);
      await recordSessionEnd(deps, job, app, ref.sessionId, usage);
    } catch (err) {
      // A session that cannot be ended now ends by its idle timeout; the job's outcome stands.
      deps.log.warn('could not end session', {
        jobId: job.jobId,
        app,
        sessionId: ref.sessionId,
        error: String(err),
      });
    }
    ended.push({
      application: app,
      sessionId: ref.sessionId,
      openedAt: ref.openedAt,
      ...(usage ? { usage } : {}),
    });
  }
  return ended;
}

/**
 * The `session-ended` entry of a session the engine ended, with the usage the provider
 * reported, written once: with the session marked ended on the job item (`endedAt`), under
 * the job's version. A repeat (cancel and the failure path both ending the job's sessions, a
 * retried task) finds it marked and writes nothing, so the usage is never counted twice.
 */
async function recordSessionEnd(
  deps: EngineDeps,
  ref: { tenantId: string; jobId: string },
  app: string,
  sessionId: string,
  usage: SessionUsage | undefined,
): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const job = await deps.ledger.getJob(ref.tenantId, ref.jobId);
    const session = job.sessions[app];
    if (session?.sessionId !== sessionId || session.endedAt) return;
    try {
      await deps.ledger.updateJob(job.tenantId, job.jobId, {
        expectedVersion: job.version,
        set: { sessions: { ...job.sessions, [app]: { ...session, endedAt: deps.clock().toISOString() } } },
        entry: {
          type: 'session-ended',
          sessionId,
          // The usage itself is the entry's cost (proxyBytes, modelTokens).
          detail: {
            application: app,
            endedBy: 'engine',
            usageReported: usage !== undefined,
            ...(usage?.providerSeconds !== undefined ? { providerSeconds: usage.providerSeconds } : {}),
          },
          cost: { proxyBytes: usage?.proxyBytes ?? 0, modelTokens: usage?.modelTokens ?? 0, dynamoWrites: 2 },
        },
      });
      return;
    } catch (err) {
      if (!(err instanceof StaleCheckpointError)) throw err;
    }
  }
}

/**
 * Ends every session the job holds (profiles persisted on a graceful end) and gives its
 * browser leases back. Idempotent: safe to repeat after a crash at any line. Sessions end
 * before the lease is released, so a job waiting for the slot never starts while this
 * job's browser is still open.
 */
export async function releaseJobResources(deps: EngineDeps, job: Job): Promise<void> {
  await endJobSessions(deps, job);
  await deps.capacity.release(job.tenantId, job.jobId);
}
