import { type LedgerEntryInput, prepareEntry } from './entries.ts';
import { JobNotFoundError, StaleCheckpointError } from './errors.ts';
import { UpdateBuilder } from './expression.ts';
import { assertId } from './keys.ts';
import { type LedgerContext, writeJob } from './store.ts';
import { type Job, TERMINAL_STATUSES } from './types.ts';

/**
 * Records that `by` asked to cancel the job while a write may be in flight
 * (`Job.cancelRequested`), with its entry, without moving the job's version: the attempt
 * running the write keeps its fence and can still write its checkpoint; the engine cancels
 * the job once the write is settled. Refused (`StaleCheckpointError`) for a job that has
 * finished meanwhile.
 */
export async function requestCancel(
  ctx: LedgerContext,
  tenantId: string,
  jobId: string,
  by: string,
  entry: LedgerEntryInput,
): Promise<Job> {
  assertId('tenantId', tenantId);
  assertId('jobId', jobId);
  const u = new UpdateBuilder();
  u.set('cancelRequested', { at: ctx.now().toISOString(), by });
  u.when(`NOT ${u.path('status')} IN (${TERMINAL_STATUSES.map((s) => u.value(s)).join(', ')})`);
  const prepared = await prepareEntry(ctx, tenantId, jobId, entry);
  const { job } = await writeJob(ctx, {
    operation: 'requestCancel',
    tenantId,
    jobId,
    update: u,
    entry: prepared,
    onConditionFailed: (s) =>
      s
        ? new StaleCheckpointError(jobId, undefined, undefined, { status: s.status })
        : new JobNotFoundError(tenantId, jobId),
  });
  return job;
}
