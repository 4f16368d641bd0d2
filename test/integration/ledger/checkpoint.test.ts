import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CompleteStepInput,
  createLedger,
  JobNotFoundError,
  type Ledger,
  StaleCheckpointError,
} from '../../../lambdas/lib/ledger/index.ts';
import { createDocumentClient } from '../../../local/dynamodb.ts';
import { useDynamoDb } from '../../support/dynamodb.ts';
import { jobIn } from '../../support/ledger.ts';

const ddb = useDynamoDb();
const tenant = 'tenant-checkpoint';
let ledger: Ledger;
/** A second worker with its own connection, to race the first for real. */
let rivalDoc: DynamoDBDocumentClient;
let rival: Ledger;

beforeAll(() => {
  ledger = createLedger({ doc: ddb.doc(), tableName: ddb.tableName() });
  rivalDoc = createDocumentClient(ddb.endpoint());
  rival = createLedger({ doc: rivalDoc, tableName: ddb.tableName() });
});

afterAll(() => {
  rivalDoc.destroy();
});

function step(jobId: string, expectedVersion: number, stepIndex: number, worker = 'a'): CompleteStepInput {
  return {
    tenantId: tenant,
    jobId,
    expectedVersion,
    stepIndex,
    step: `step-${stepIndex}`,
    attempt: 1,
    sessionId: `session-${worker}`,
    identityId: 'identity-1',
    idempotencyKey: `${jobId}:step-${stepIndex}`,
    evidence: { worker, orderNumber: 1000 + stepIndex },
    cost: { lambdaMs: 120, browserSeconds: 3, dynamoWrites: 2 },
  };
}

describe('Function: completeStep', () => {
  it('writes the step-completed entry, advances the pointer and adds the cost together', async () => {
    const { jobId, version } = await jobIn(ledger, tenant, 'RUNNING');
    const after1 = await ledger.completeStep(step(jobId, version, 0));
    expect(after1).toMatchObject({ nextStep: 1, version: version + 1, status: 'RUNNING' });
    const after2 = await ledger.completeStep(step(jobId, after1.version, 1));
    expect(after2.nextStep).toBe(2);
    // Two completions of 2 writes each, after the job's creation (2).
    expect(after2.cost).toMatchObject({ lambdaMs: 240, browserSeconds: 6, dynamoWrites: 6, modelTokens: 0 });

    const { job, entries } = await ledger.readJob(tenant, jobId);
    expect(job).toEqual(after2);
    const completions = entries.filter((e) => e.type === 'step-completed');
    expect(completions).toHaveLength(2);
    expect(completions[1]).toMatchObject({
      tenantId: tenant,
      jobId,
      step: 'step-1',
      stepIndex: 1,
      attempt: 1,
      sessionId: 'session-a',
      identityId: 'identity-1',
      idempotencyKey: `${jobId}:step-1`,
      evidence: { worker: 'a', orderNumber: 1001 },
      cost: { lambdaMs: 120, browserSeconds: 3, dynamoWrites: 2, proxyBytes: 0 },
    });
  });

  it.each([
    ['an old version', { versionDelta: -1, stepIndex: 0 }],
    ['a newer version', { versionDelta: 1, stepIndex: 0 }],
    ['a step that is not next', { versionDelta: 0, stepIndex: 1 }],
  ])(
    'refuses %s with StaleCheckpointError and writes nothing',
    async (_name, { versionDelta, stepIndex }) => {
      const running = await jobIn(ledger, tenant, 'RUNNING');
      const before = await ledger.readJob(tenant, running.jobId);
      const attempt = ledger.completeStep(step(running.jobId, running.version + versionDelta, stepIndex));
      await expect(attempt).rejects.toBeInstanceOf(StaleCheckpointError);
      await expect(attempt).rejects.toMatchObject({
        jobId: running.jobId,
        stepIndex,
        expectedVersion: running.version + versionDelta,
        observed: { version: running.version, nextStep: 0, status: 'RUNNING' },
      });
      expect(await ledger.readJob(tenant, running.jobId)).toEqual(before);
    },
  );

  it.each(['QUEUED', 'WAITING_APPROVAL', 'CANCELLED'] as const)(
    'refuses to complete a step of a %s job with StaleCheckpointError',
    async (status) => {
      const job = await jobIn(ledger, tenant, status);
      const before = await ledger.readJob(tenant, job.jobId);
      await expect(ledger.completeStep(step(job.jobId, job.version, 0))).rejects.toBeInstanceOf(
        StaleCheckpointError,
      );
      expect(await ledger.readJob(tenant, job.jobId)).toEqual(before);
    },
  );

  it('given the job as read, works out the job it leaves (no read back): what a read would give', async () => {
    const { jobId } = await jobIn(ledger, tenant, 'RUNNING');
    const read = await ledger.getJob(tenant, jobId);
    const after = await ledger.completeStep({ ...step(jobId, read.version, 0), job: read });
    expect(after).toEqual((await ledger.readJob(tenant, jobId)).job);
    expect(after).toMatchObject({ nextStep: 1, version: read.version + 1 });
    // A stale one is refused like a stale version, and a job that is not the one read is no input.
    await expect(ledger.completeStep({ ...step(jobId, read.version, 1), job: read })).rejects.toThrow(
      StaleCheckpointError,
    );
    await expect(ledger.completeStep({ ...step(jobId, after.version, 1), job: read })).rejects.toThrow(
      /must be the job read at expectedVersion/,
    );
  });

  it('refuses to complete a step past the last one', async () => {
    let job = await jobIn(ledger, tenant, 'RUNNING', 1);
    job = await ledger.completeStep(step(job.jobId, job.version, 0));
    expect(job.nextStep).toBe(1);
    await expect(ledger.completeStep(step(job.jobId, job.version, 1))).rejects.toBeInstanceOf(
      StaleCheckpointError,
    );
  });

  it('refuses a missing job with JobNotFoundError', async () => {
    await expect(ledger.completeStep(step('missing-job', 2, 0))).rejects.toBeInstanceOf(JobNotFoundError);
  });

  it('lets exactly one of two workers racing on the same step win, 20 rounds in a row', async () => {
    for (let round = 0; round < 20; round++) {
      const { jobId, version } = await jobIn(ledger, tenant, 'RUNNING');
      const results = await Promise.allSettled([
        ledger.completeStep(step(jobId, version, 0, 'a')),
        rival.completeStep(step(jobId, version, 0, 'b')),
      ]);
      const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i === 0 ? 'a' : 'b'] : []));
      const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
      expect(won, `round ${round}`).toHaveLength(1);
      expect(lost[0], `round ${round}`).toBeInstanceOf(StaleCheckpointError);

      const { job, entries } = await ledger.readJob(tenant, jobId);
      const completions = entries.filter((e) => e.type === 'step-completed');
      expect(completions).toHaveLength(1);
      expect(completions[0]?.evidence?.worker).toBe(won[0]);
      expect(job).toMatchObject({ nextStep: 1, version: version + 1 });
      expect(job.cost).toMatchObject({ lambdaMs: 120, browserSeconds: 3 });
    }
  });
});

describe('Function: updateJob', () => {
  it('sets sessions, retries and execution name, adds cost and writes an entry in one write', async () => {
    const job = await jobIn(ledger, tenant, 'RUNNING');
    const sessions = {
      shop: { sessionId: 's-1', profileName: 'p-shop', identityId: 'id-1', openedAt: job.createdAt },
    };
    const updated = await ledger.updateJob(tenant, job.jobId, {
      expectedVersion: job.version,
      set: { sessions, retriesUsed: 1, executionName: 'exec-1' },
      addCost: { humanInterventions: 1, lambdaInvocations: 2 },
      entry: { type: 'session-opened', sessionId: 's-1', cost: { lambdaInvocations: 2 } },
    });
    expect(updated).toMatchObject({
      sessions,
      retriesUsed: 1,
      executionName: 'exec-1',
      version: job.version + 1,
    });
    // The job's totals take both the explicit addCost and the cost the entry carries.
    expect(updated.cost).toMatchObject({ humanInterventions: 1, lambdaInvocations: 4 });
    const { job: read, entries } = await ledger.readJob(tenant, job.jobId);
    expect(read).toEqual(updated);
    expect(entries.at(-1)).toMatchObject({ type: 'session-opened', sessionId: 's-1' });

    const cleared = await ledger.updateJob(tenant, job.jobId, { set: { executionName: undefined } });
    expect(cleared.executionName).toBeUndefined();
    expect(cleared.version).toBe(job.version + 2);
  });

  it('refuses a stale expectedVersion with StaleCheckpointError, writing neither update nor entry', async () => {
    const job = await jobIn(ledger, tenant, 'RUNNING');
    const before = await ledger.readJob(tenant, job.jobId);
    const attempt = ledger.updateJob(tenant, job.jobId, {
      expectedVersion: job.version - 1,
      set: { retriesUsed: 2 },
      entry: { type: 'step-failed' },
    });
    await expect(attempt).rejects.toBeInstanceOf(StaleCheckpointError);
    expect(await ledger.readJob(tenant, job.jobId)).toEqual(before);
  });
});
