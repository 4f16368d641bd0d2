import type { EngineDeps, JobRef } from '../lib/engine/types.ts';
import { openSession } from '../open-session/open-session.ts';
import { acquireCapacity } from './acquire-capacity.ts';
import { authorize } from './authorize.ts';

export type StartResult =
  | {
      outcome: 'ready';
      /** A human wait longer than this parks the job (the state machine's first-wait timeout). */
      parkAfterSeconds: number;
      /** The application the next step works in, and its live session. */
      app: string;
      sessionId: string;
      /** Whether the session was already alive, newly opened, or replaced a dead one. */
      session: 'reused' | 'opened' | 'replaced';
      nextStep: number;
      stepCount: number;
    }
  | { outcome: 'queued'; position: number; retryAfterSeconds: number; reason: 'cap' | 'account' }
  | { outcome: 'stopped'; status: string };

/**
 * First state of every execution, and where a parked job comes back to: in one invocation,
 *
 * 1. **authorize**: the job exists and is not finished, its playbook is known, every account it
 *    names is still the tenant's; the coordinating execution is recorded;
 * 2. **acquire capacity**: the job's browser leases under the tenant's cap, or `queued` with its
 *    place (the state machine waits and comes back here);
 * 3. **open a session**: the live session of the next step's application, or a new one from the
 *    account's persisted profile.
 *
 * Each part is idempotent, so a Start retried after a crash at any point repeats nothing
 * harmful: a lease already held is the job's own, a live recorded session is reused, and a
 * session opened but never recorded (the process died in between) ends at its idle timeout.
 */
export async function start(
  deps: EngineDeps,
  ref: JobRef & { executionName?: string },
): Promise<StartResult> {
  const authorized = await authorize(deps, ref);
  if (authorized.outcome === 'stopped') return authorized;
  // The job and accounts read here are not read again by the parts after (the job is read
  // once more after the lease is taken, to see a cancellation that raced it).
  const { checked } = authorized;
  const capacity = await acquireCapacity(deps, ref, checked);
  if (capacity.outcome !== 'acquired') return capacity;
  const session = await openSession(
    deps,
    { tenantId: ref.tenantId, jobId: ref.jobId },
    capacity.job ? { job: capacity.job, accounts: checked.accounts } : undefined,
  );
  if (session.outcome === 'stopped') return session;
  return {
    outcome: 'ready',
    parkAfterSeconds: capacity.parkAfterSeconds,
    app: session.app,
    sessionId: session.sessionId,
    session: session.outcome,
    nextStep: authorized.nextStep,
    stepCount: authorized.stepCount,
  };
}
