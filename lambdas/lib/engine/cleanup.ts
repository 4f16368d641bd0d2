import type { Job } from '../ledger/types.ts';
import type { EngineDeps } from './types.ts';

/**
 * Ends every session the job holds (profiles persisted on a graceful end) and gives its
 * browser leases back. Idempotent: safe to repeat after a crash at any line.
 */
export async function releaseJobResources(deps: EngineDeps, job: Job): Promise<void> {
  for (const [app, ref] of Object.entries(job.sessions)) {
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
  }
  await deps.capacity.release(job.tenantId, job.jobId);
}
