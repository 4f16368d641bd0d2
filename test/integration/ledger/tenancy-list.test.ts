import { beforeAll, describe, expect, it } from 'vitest';
import {
  createLedger,
  InvalidInputError,
  type Job,
  JobNotFoundError,
  type Ledger,
} from '../../../lambdas/lib/ledger/index.ts';
import { useDynamoDb } from '../../support/dynamodb.ts';
import { jobIn, jobRequest, newId, pendingWait, testClock } from '../../support/ledger.ts';

const ddb = useDynamoDb();
let ledger: Ledger;

beforeAll(() => {
  ledger = createLedger({ doc: ddb.doc(), tableName: ddb.tableName() });
});

describe('Tenant isolation', () => {
  const owner = 'tenant-owner';
  const intruder = 'tenant-intruder';
  let victim: Job;

  beforeAll(async () => {
    victim = await jobIn(ledger, owner, 'WAITING_APPROVAL');
  });

  const operations: [string, (jobId: string, job: Job) => Promise<unknown>][] = [
    ['readJob', (id) => ledger.readJob(intruder, id)],
    ['getJob', (id) => ledger.getJob(intruder, id)],
    ['append', (id) => ledger.append(intruder, id, { type: 'cancelled' })],
    [
      'completeStep',
      (id, job) =>
        ledger.completeStep({
          tenantId: intruder,
          jobId: id,
          expectedVersion: job.version,
          stepIndex: 0,
          step: 's',
          attempt: 1,
          evidence: {},
          cost: {},
        }),
    ],
    [
      'updateJob',
      (id) => ledger.updateJob(intruder, id, { set: { retriesUsed: 99 }, entry: { type: 'parked' } }),
    ],
    ['transition to CANCELLED', (id) => ledger.transition(intruder, id, 'CANCELLED')],
    [
      'transition to the same status',
      (id) => ledger.transition(intruder, id, 'WAITING_APPROVAL', { wait: pendingWait('approval') }),
    ],
    [
      'transition with no legal source',
      (id) => ledger.transition(intruder, id, 'SUCCEEDED', { from: ['QUEUED'] }),
    ],
    ['setWait', (id) => ledger.setWait(intruder, id, pendingWait('approval'), 'WAITING_APPROVAL')],
    ['clearWait', (id, job) => ledger.clearWait(intruder, id, { taskToken: job.wait?.taskToken })],
  ];

  it.each(operations)(
    "%s on another tenant's job is JobNotFoundError and changes nothing",
    async (_name, run) => {
      const before = await ledger.readJob(owner, victim.jobId);
      const attempt = run(victim.jobId, victim);
      await expect(attempt).rejects.toBeInstanceOf(JobNotFoundError);
      await expect(attempt).rejects.toThrow(`job ${victim.jobId} not found`);
      expect(await ledger.readJob(owner, victim.jobId)).toEqual(before);
    },
  );

  it("gives the same error for another tenant's job as for a job that never existed", async () => {
    const foreign = await ledger.getJob(intruder, victim.jobId).catch((e: unknown) => e);
    const missing = await ledger.getJob(intruder, 'never-existed').catch((e: unknown) => e);
    expect(foreign).toBeInstanceOf(JobNotFoundError);
    expect(missing).toBeInstanceOf(JobNotFoundError);
    expect((foreign as Error).message.replace(victim.jobId, 'ID')).toBe(
      (missing as Error).message.replace('never-existed', 'ID'),
    );
  });

  it("lists none of another tenant's jobs, and creating the same id makes the intruder its own job", async () => {
    expect((await ledger.listJobs(intruder)).jobs).toEqual([]);
    expect((await ledger.listJobs(intruder, { status: 'WAITING_APPROVAL' })).jobs).toEqual([]);
    const before = await ledger.readJob(owner, victim.jobId);
    const { job, created } = await ledger.createJob(
      intruder,
      victim.jobId,
      jobRequest({ inputs: { other: 1 } }),
      1,
    );
    expect(created).toBe(true);
    expect(job.tenantId).toBe(intruder);
    expect(await ledger.readJob(owner, victim.jobId)).toEqual(before);
  });
});

describe('Function: listJobs', () => {
  const tenant = newId('tenant-list');
  const other = newId('tenant-list');
  const running: string[] = [];
  const all: string[] = [];

  beforeAll(async () => {
    // One second apart, so "newest first" has one right answer.
    const clock = testClock();
    const clocked = createLedger({ doc: ddb.doc(), tableName: ddb.tableName(), clock: clock.now });
    for (let i = 0; i < 7; i++) {
      clock.advance(1000);
      const job = await jobIn(clocked, tenant, i % 3 === 2 ? 'QUEUED' : 'RUNNING');
      all.unshift(job.jobId);
      if (job.status === 'RUNNING') running.unshift(job.jobId);
    }
    await jobIn(clocked, other, 'RUNNING');
  });

  it('pages through jobs by status, newest first, without gaps or repeats', async () => {
    const seen: string[] = [];
    const pageSizes: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await ledger.listJobs(tenant, {
        status: 'RUNNING',
        limit: 2,
        ...(cursor ? { cursor } : {}),
      });
      pageSizes.push(page.jobs.length);
      seen.push(...page.jobs.map((j) => j.jobId));
      expect(page.jobs.every((j) => j.status === 'RUNNING' && j.tenantId === tenant)).toBe(true);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(seen).toEqual(running);
    expect(pageSizes.slice(0, 2)).toEqual([2, 2]);
  });

  it("lists all the tenant's jobs by time when no status is given", async () => {
    const page = await ledger.listJobs(tenant, { limit: 100 });
    expect(page.jobs.map((j) => j.jobId)).toEqual(all);
    expect(page.nextCursor).toBeUndefined();
    const first = await ledger.listJobs(tenant);
    expect(first.jobs).toHaveLength(7);
  });

  it('refuses a cursor replayed by another tenant, for another status, tampered, or garbage', async () => {
    const page = await ledger.listJobs(tenant, { status: 'RUNNING', limit: 1 });
    const cursor = page.nextCursor;
    expect(cursor).toBeDefined();
    if (cursor === undefined) return;
    const body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    const forged = Buffer.from(
      JSON.stringify({ ...body, t: other, k: { ...body.k, gsi1pk: `T#${other}#S#RUNNING` } }),
    ).toString('base64url');
    const retargeted = Buffer.from(
      JSON.stringify({ ...body, k: { ...body.k, pk: `T#${other}#J#x` } }),
    ).toString('base64url');
    await expect(ledger.listJobs(other, { status: 'RUNNING', cursor })).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    await expect(ledger.listJobs(tenant, { status: 'QUEUED', cursor })).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    await expect(ledger.listJobs(tenant, { cursor })).rejects.toBeInstanceOf(InvalidInputError);
    await expect(ledger.listJobs(tenant, { status: 'RUNNING', cursor: forged })).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    await expect(ledger.listJobs(tenant, { status: 'RUNNING', cursor: retargeted })).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    await expect(
      ledger.listJobs(tenant, { status: 'RUNNING', cursor: 'not-a-cursor' }),
    ).rejects.toBeInstanceOf(InvalidInputError);
    const next = await ledger.listJobs(tenant, { status: 'RUNNING', limit: 1, cursor });
    expect(next.jobs.map((j) => j.jobId)).toEqual(running.slice(1, 2));
  });

  it.each([0, 101, 2.5])('refuses limit %s', async (limit) => {
    await expect(ledger.listJobs(tenant, { limit })).rejects.toBeInstanceOf(InvalidInputError);
  });

  it('refuses an unknown status', async () => {
    await expect(ledger.listJobs(tenant, { status: 'PAUSED' as never })).rejects.toBeInstanceOf(
      InvalidInputError,
    );
  });
});
