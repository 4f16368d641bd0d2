import type { Job } from '../ledger/types.ts';
import type { EngineDeps } from './types.ts';

/**
 * Applies a cancellation asked for while a write was in flight (`Job.cancelRequested`), once
 * the write is settled (its checkpoint written, or its probe's finding recorded): CANCELLED,
 * with who asked. Finish then ends the job's sessions and gives its leases back, as for any
 * job that stopped.
 */
export async function applyCancel(deps: EngineDeps, job: Job, settled: string): Promise<Job> {
  const by = job.cancelRequested?.by ?? 'unknown';
  return deps.ledger.transition(job.tenantId, job.jobId, 'CANCELLED', {
    entry: {
      type: 'cancelled',
      actor: by,
      ...(job.nextStep < job.stepCount ? { stepIndex: job.nextStep } : {}),
      detail: { cancelledBy: by, previousStatus: job.status, settled, requestedAt: job.cancelRequested?.at },
      cost: { lambdaInvocations: 1, dynamoWrites: 2 },
    },
  });
}
