import { beforeAll, describe, expect, it } from 'vitest';
import {
  createLedger,
  IllegalTransitionError,
  InvalidInputError,
  JobNotFoundError,
  type Ledger,
} from '../../../lambdas/lib/ledger/index.ts';
import { useDynamoDb } from '../../support/dynamodb.ts';
import { jobIn, jobRequest, newId, pendingWait, testClock } from '../../support/ledger.ts';

const ddb = useDynamoDb();
const tenant = 'tenant-waits';
let ledger: Ledger;

beforeAll(() => {
  ledger = createLedger({ doc: ddb.doc(), tableName: ddb.tableName() });
});

describe('Function: setWait', () => {
  it('parks a RUNNING job with its wait in one write, and re-arms it with a new token', async () => {
    const job = await jobIn(ledger, tenant, 'RUNNING');
    const first = pendingWait('approval', 'token-1');
    const parked = await ledger.setWait(tenant, job.jobId, first, 'WAITING_APPROVAL', {
      type: 'approval-requested',
      step: first.step,
    });
    expect(parked).toMatchObject({ status: 'WAITING_APPROVAL', wait: first, version: job.version + 1 });
    const second = pendingWait('approval', 'token-2');
    const rearmed = await ledger.setWait(tenant, job.jobId, second, 'WAITING_APPROVAL');
    expect(rearmed.wait?.taskToken).toBe('token-2');
    const { entries } = await ledger.readJob(tenant, job.jobId);
    expect(entries.filter((e) => e.type === 'approval-requested')).toHaveLength(1);
  });

  it.each(['QUEUED', 'WAITING_MFA', 'SUCCEEDED'] as const)(
    'refuses to park a %s job in WAITING_APPROVAL (IllegalTransitionError)',
    async (status) => {
      const job = await jobIn(ledger, tenant, status);
      const attempt = ledger.setWait(tenant, job.jobId, pendingWait('approval'), 'WAITING_APPROVAL');
      await expect(attempt).rejects.toBeInstanceOf(IllegalTransitionError);
      expect(await ledger.getJob(tenant, job.jobId)).toEqual(job);
    },
  );

  it('refuses a wait whose kind does not match the status', async () => {
    const job = await jobIn(ledger, tenant, 'RUNNING');
    await expect(
      ledger.setWait(tenant, job.jobId, pendingWait('mfa'), 'WAITING_REVIEW'),
    ).rejects.toBeInstanceOf(InvalidInputError);
  });
});

describe('Function: clearWait', () => {
  it('clears nothing and returns null when the token does not match', async () => {
    const job = await jobIn(ledger, tenant, 'WAITING_MFA');
    expect(await ledger.clearWait(tenant, job.jobId, { taskToken: 'forged' })).toBeNull();
    expect(await ledger.getJob(tenant, job.jobId)).toEqual(job);
  });

  it('returns the cleared wait, resumes the job (RUNNING) and returns null the second time', async () => {
    const job = await jobIn(ledger, tenant, 'WAITING_REVIEW');
    const token = job.wait?.taskToken;
    const cleared = await ledger.clearWait(tenant, job.jobId, {
      taskToken: token,
      entry: { type: 'review-recorded', actor: 'key-7' },
    });
    expect(cleared).toEqual(job.wait);
    const { job: after, entries } = await ledger.readJob(tenant, job.jobId);
    expect(after).toMatchObject({ status: 'RUNNING', version: job.version + 1 });
    expect(after.wait).toBeUndefined();
    expect(entries.at(-1)).toMatchObject({ type: 'review-recorded', actor: 'key-7' });
    expect(await ledger.clearWait(tenant, job.jobId, { taskToken: token })).toBeNull();
  });

  it('returns null for a job that has no wait', async () => {
    const job = await jobIn(ledger, tenant, 'RUNNING');
    expect(await ledger.clearWait(tenant, job.jobId)).toBeNull();
    expect((await ledger.getJob(tenant, job.jobId)).version).toBe(job.version);
  });

  it('can leave the wait for a terminal status, which sets the TTL', async () => {
    const job = await jobIn(ledger, tenant, 'WAITING_APPROVAL');
    const cleared = await ledger.clearWait(tenant, job.jobId, { to: 'CANCELLED' });
    expect(cleared?.taskToken).toBe(job.wait?.taskToken);
    const after = await ledger.getJob(tenant, job.jobId);
    expect(after).toMatchObject({ status: 'CANCELLED' });
    expect(after.expiresAt).toBeGreaterThan(Date.now() / 1000);
  });

  it('refuses to leave the wait for a status that is not legal from it', async () => {
    const job = await jobIn(ledger, tenant, 'WAITING_APPROVAL');
    await expect(ledger.clearWait(tenant, job.jobId, { to: 'SUCCEEDED' })).rejects.toBeInstanceOf(
      IllegalTransitionError,
    );
    expect(await ledger.getJob(tenant, job.jobId)).toEqual(job);
  });

  it('gives the wait to exactly one of two racing callers', async () => {
    for (let round = 0; round < 5; round++) {
      const job = await jobIn(ledger, tenant, 'WAITING_APPROVAL');
      const token = job.wait?.taskToken;
      const results = await Promise.all([
        ledger.clearWait(tenant, job.jobId, { taskToken: token, entry: { type: 'approval-recorded' } }),
        ledger.clearWait(tenant, job.jobId, { taskToken: token, entry: { type: 'approval-recorded' } }),
      ]);
      expect(results.filter((r) => r !== null)).toHaveLength(1);
      const { job: after, entries } = await ledger.readJob(tenant, job.jobId);
      expect(after.version).toBe(job.version + 1);
      expect(entries.filter((e) => e.type === 'approval-recorded')).toHaveLength(1);
    }
  });
});

describe('Expiry of terminal jobs', () => {
  it('treats a terminal job past its TTL as missing for every read and write, and frees its id', async () => {
    const clock = testClock();
    const clocked = createLedger({
      doc: ddb.doc(),
      tableName: ddb.tableName(),
      clock: clock.now,
      terminalTtlDays: 1,
    });
    const expiredTenant = newId('tenant');
    const job = await jobIn(clocked, expiredTenant, 'SUCCEEDED');
    clock.advance(86_400_000 - 5_000);
    expect((await clocked.readJob(expiredTenant, job.jobId)).job.status).toBe('SUCCEEDED');
    expect((await clocked.listJobs(expiredTenant)).jobs.map((j) => j.jobId)).toEqual([job.jobId]);

    clock.advance(10_000);
    const { jobId } = job;
    await expect(clocked.readJob(expiredTenant, jobId)).rejects.toBeInstanceOf(JobNotFoundError);
    await expect(clocked.getJob(expiredTenant, jobId)).rejects.toBeInstanceOf(JobNotFoundError);
    await expect(clocked.append(expiredTenant, jobId, { type: 'reauth' })).rejects.toBeInstanceOf(
      JobNotFoundError,
    );
    await expect(clocked.updateJob(expiredTenant, jobId, { set: { retriesUsed: 1 } })).rejects.toBeInstanceOf(
      JobNotFoundError,
    );
    await expect(clocked.transition(expiredTenant, jobId, 'SUCCEEDED')).rejects.toBeInstanceOf(
      JobNotFoundError,
    );
    await expect(clocked.transition(expiredTenant, jobId, 'FAILED')).rejects.toBeInstanceOf(JobNotFoundError);
    expect((await clocked.listJobs(expiredTenant)).jobs).toEqual([]);
    expect((await clocked.listJobs(expiredTenant, { status: 'SUCCEEDED' })).jobs).toEqual([]);

    const again = await clocked.createJob(expiredTenant, jobId, jobRequest({ retryBudget: 9 }), 2);
    expect(again).toMatchObject({ created: true, job: { status: 'QUEUED', retryBudget: 9, version: 1 } });
    const { entries } = await clocked.readJob(expiredTenant, jobId);
    expect(entries.map((e) => e.type)).toEqual(['job-created']);
  });
});
