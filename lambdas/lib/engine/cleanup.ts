import type { Job } from '../ledger/types.ts';
import type { EngineDeps } from './types.ts';

/** A session a job held, as it was ended. */
export interface EndedSession {
  application: string;
  sessionId: string;
  openedAt: string;
}

/**
 * Ends every session the job holds, gracefully: the provider saves each persisted profile
 * first, so a later session from the same profile starts with its cookies (signed in).
 * Idempotent; a session that cannot be ended now ends by its idle timeout.
 */
export async function endJobSessions(deps: EngineDeps, job: Job): Promise<EndedSession[]> {
  const ended: EndedSession[] = [];
  for (const [app, ref] of Object.entries(job.sessions ?? {})) {
    try {
      await deps.browser.detach(ref.sessionId);
      await deps.browser.endSession(ref.sessionId);
    } catch (err) {
      // A session that cannot be ended now ends by its idle timeout; the job's outcome stands.
      deps.log.warn('could not end session', {
        jobId: job.jobId,
        app,
        sessionId: ref.sessionId,
        error: String(err),
      });
    }
    ended.push({ application: app, sessionId: ref.sessionId, openedAt: ref.openedAt });
  }
  return ended;
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
