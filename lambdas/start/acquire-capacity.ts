import { pollAfterSeconds } from '../lib/capacity/poll.ts';
import { QueueTimeoutError } from '../lib/engine/errors.ts';
import { requestLease } from '../lib/engine/lease.ts';
import { invocationEntry } from '../lib/engine/metering.ts';
import type { EngineDeps, JobRef } from '../lib/engine/types.ts';
import { IllegalTransitionError } from '../lib/ledger/errors.ts';
import { type Job, TERMINAL_STATUSES } from '../lib/ledger/types.ts';
import type { CheckedJob } from './authorize.ts';

export type AcquireCapacityResult =
  | {
      outcome: 'acquired';
      /** A human wait longer than this parks the job (the state machine's first-wait timeout). */
      parkAfterSeconds: number;
      /** The job as it is now (RUNNING), when this invocation moved it there. */
      job?: Job;
    }
  | { outcome: 'queued'; position: number; retryAfterSeconds: number; reason: 'cap' | 'account' }
  | { outcome: 'stopped'; status: string };

/**
 * Takes the job's browser leases (one per application it works in) under the tenant's cap.
 * Over the cap (or, with serialized accounts, while another job holds one of its accounts)
 * the job is QUEUED, keeps its place in submission order as long as it keeps asking (each
 * time is recorded on the job, `capacityAskedAt`), and the state machine asks again after a
 * pause that grows with the time queued (`pollAfterSeconds`). A job queued longer than
 * `maxQueueSeconds` fails (`QueueTimeoutError`). A job that resumes after parking comes back here too: it may queue again.
 *
 * Every account the job names is checked first: a job whose account was revoked while it
 * queued fails now (`AccountRevokedError`), without ever opening a browser.
 */
export async function acquireCapacity(
  deps: EngineDeps,
  ref: JobRef,
  checked?: CheckedJob,
): Promise<AcquireCapacityResult> {
  const job = checked?.job ?? (await deps.ledger.getJob(ref.tenantId, ref.jobId));
  if (TERMINAL_STATUSES.includes(job.status)) return { outcome: 'stopped', status: job.status };
  const result = await requestLease(deps, job, checked?.accounts);
  if (result.outcome === 'queued') {
    const now = deps.clock();
    // A job that held a slot before (resumed after parking, a new execution) waits as QUEUED again.
    if (job.status === 'RUNNING') await moveTo(deps, job, 'QUEUED');
    // A job not QUEUED yet (resumed after parking: RUNNING, or still WAITING_* while the API
    // clears the answered wait) starts waiting now; a QUEUED one has waited since it went QUEUED.
    const since = job.status === 'QUEUED' ? Date.parse(job.queuedSince ?? job.createdAt) : now.getTime();
    const queuedForSeconds = Math.max(0, (now.getTime() - since) / 1000);
    if (queuedForSeconds > deps.settings.maxQueueSeconds) {
      throw new QueueTimeoutError(queuedForSeconds, deps.settings.maxQueueSeconds);
    }
    // It is still waiting: it keeps its place (`capacityAskedAt`), recorded with this invocation.
    await deps.ledger.updateJob(job.tenantId, job.jobId, {
      set: { capacityAskedAt: now.toISOString() },
      entry: invocationEntry('Start', 'queued'),
    });
    return { ...result, retryAfterSeconds: pollAfterSeconds(queuedForSeconds, result.retryAfterSeconds) };
  }
  const now = await deps.ledger.getJob(job.tenantId, job.jobId);
  if (TERMINAL_STATUSES.includes(now.status)) {
    // Cancelled while the lease was being taken: the slot goes back at once.
    await deps.capacity.release(job.tenantId, job.jobId);
    return { outcome: 'stopped', status: now.status };
  }
  const moved = now.status === 'QUEUED' ? await moveTo(deps, now, 'RUNNING') : now;
  return {
    outcome: 'acquired',
    parkAfterSeconds: deps.settings.parkAfterSeconds,
    ...(moved ? { job: moved } : {}),
  };
}

/**
 * QUEUED <-> RUNNING, returning the job as written; a job that moved on meanwhile (cancelled,
 * already moved) is left as it is (undefined: read it again to know).
 */
async function moveTo(deps: EngineDeps, job: Job, to: 'QUEUED' | 'RUNNING'): Promise<Job | undefined> {
  try {
    return await deps.ledger.transition(job.tenantId, job.jobId, to, {
      from: [to === 'QUEUED' ? 'RUNNING' : 'QUEUED'],
    });
  } catch (err) {
    if (!(err instanceof IllegalTransitionError)) throw err;
    return undefined;
  }
}
