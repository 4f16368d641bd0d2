import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createLedger,
  IllegalTransitionError,
  InvalidInputError,
  JOB_STATUSES,
  type JobStatus,
  LEGAL_TRANSITIONS,
  type Ledger,
  StaleCheckpointError,
  type WaitingStatus,
} from '../../../lambdas/lib/ledger/index.ts';
import { useDynamoDb } from '../../support/dynamodb.ts';
import { jobIn, pendingWait, testClock, WAIT_KIND } from '../../support/ledger.ts';

const ddb = useDynamoDb();
const tenant = 'tenant-status';
let ledger: Ledger;

beforeAll(() => {
  ledger = createLedger({ doc: ddb.doc(), tableName: ddb.tableName() });
});

const isWaiting = (s: JobStatus): s is WaitingStatus => s in WAIT_KIND;
const optionsFor = (to: JobStatus) => (isWaiting(to) ? { wait: pendingWait(WAIT_KIND[to]) } : {});

const pairs = JOB_STATUSES.flatMap((from) => JOB_STATUSES.map((to) => [from, to] as const)).filter(
  ([from, to]) => from !== to,
);
const illegal = pairs.filter(([from, to]) => !LEGAL_TRANSITIONS[from].includes(to));
const legal = pairs.filter(([from, to]) => LEGAL_TRANSITIONS[from].includes(to));

async function rawJobItem(jobId: string): Promise<Record<string, unknown> | undefined> {
  const out = await ddb.doc().send(
    new GetCommand({
      TableName: ddb.tableName(),
      Key: { pk: `T#${tenant}#J#${jobId}`, sk: 'JOB' },
      ConsistentRead: true,
    }),
  );
  return out.Item;
}

describe('Function: transition', () => {
  it('has a non-trivial table of illegal pairs', () => {
    expect(illegal.length).toBeGreaterThan(20);
    expect(illegal).toContainEqual(['SUCCEEDED', 'RUNNING']);
  });

  it.each(illegal)('refuses %s -> %s with IllegalTransitionError and changes nothing', async (from, to) => {
    const job = await jobIn(ledger, tenant, from);
    const before = await ledger.readJob(tenant, job.jobId);
    const attempt = ledger.transition(tenant, job.jobId, to, {
      ...optionsFor(to),
      entry: { type: 'parked' },
    });
    await expect(attempt).rejects.toBeInstanceOf(IllegalTransitionError);
    await expect(attempt).rejects.toMatchObject({ from, to, jobId: job.jobId });
    expect(await ledger.readJob(tenant, job.jobId)).toEqual(before);
  });

  it.each(legal)('allows %s -> %s and keeps the status index in step', async (from, to) => {
    const job = await jobIn(ledger, tenant, from);
    const after = await ledger.transition(tenant, job.jobId, to, optionsFor(to));
    expect(after).toMatchObject({ status: to, version: job.version + 1 });
    expect((await rawJobItem(job.jobId))?.gsi1pk).toBe(`T#${tenant}#S#${to}`);
    if (!isWaiting(to)) expect(after.wait).toBeUndefined();
  });

  it('refuses a legal status change that is not from one of the statuses in `from`', async () => {
    const job = await jobIn(ledger, tenant, 'WAITING_MFA');
    const attempt = ledger.transition(tenant, job.jobId, 'RUNNING', { from: ['WAITING_APPROVAL'] });
    await expect(attempt).rejects.toMatchObject({
      name: 'IllegalTransitionError',
      from: 'WAITING_MFA',
      to: 'RUNNING',
    });
  });

  it.each(JOB_STATUSES)(
    'is a no-op returning the job for %s -> the same status (no entry, no version bump)',
    async (s) => {
      const job = await jobIn(ledger, tenant, s);
      const before = await ledger.readJob(tenant, job.jobId);
      const again = await ledger.transition(tenant, job.jobId, s, {
        ...optionsFor(s),
        entry: { type: 'parked' },
      });
      expect(again).toEqual(before.job);
      expect(await ledger.readJob(tenant, job.jobId)).toEqual(before);
    },
  );

  it('puts the optimistic lock before the no-op: a stale expectedVersion is StaleCheckpointError', async () => {
    const queued = await jobIn(ledger, tenant, 'QUEUED');
    await ledger.transition(tenant, queued.jobId, 'RUNNING', { expectedVersion: queued.version });
    const retry = ledger.transition(tenant, queued.jobId, 'RUNNING', { expectedVersion: queued.version });
    await expect(retry).rejects.toBeInstanceOf(StaleCheckpointError);
  });

  it('lets exactly one of two racing claims (QUEUED -> RUNNING at the same version) win', async () => {
    for (let round = 0; round < 5; round++) {
      const job = await jobIn(ledger, tenant, 'QUEUED');
      const results = await Promise.allSettled([
        ledger.transition(tenant, job.jobId, 'RUNNING', { expectedVersion: job.version }),
        ledger.transition(tenant, job.jobId, 'RUNNING', { expectedVersion: job.version }),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const lost = results.find((r) => r.status === 'rejected');
      expect(lost?.status === 'rejected' && lost.reason).toBeInstanceOf(StaleCheckpointError);
    }
  });

  it('lets exactly one of two racing terminal transitions win; the other is illegal', async () => {
    for (let round = 0; round < 5; round++) {
      const job = await jobIn(ledger, tenant, 'RUNNING');
      const results = await Promise.allSettled([
        ledger.transition(tenant, job.jobId, 'SUCCEEDED'),
        ledger.transition(tenant, job.jobId, 'CANCELLED'),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const lost = results.find((r) => r.status === 'rejected');
      expect(lost?.status === 'rejected' && lost.reason).toBeInstanceOf(IllegalTransitionError);
    }
  });

  it('requires a matching wait for a waiting status and refuses one for any other status', async () => {
    const job = await jobIn(ledger, tenant, 'RUNNING');
    await expect(ledger.transition(tenant, job.jobId, 'WAITING_MFA')).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    await expect(
      ledger.transition(tenant, job.jobId, 'WAITING_MFA', { wait: pendingWait('approval') }),
    ).rejects.toBeInstanceOf(InvalidInputError);
    await expect(
      ledger.transition(tenant, job.jobId, 'QUEUED', { wait: pendingWait('approval') }),
    ).rejects.toBeInstanceOf(InvalidInputError);
  });
});

describe('Function: transition (startedAt)', () => {
  it('stamps startedAt on the first move to RUNNING only, queuedSince on every move to QUEUED', async () => {
    const clock = testClock();
    const clocked = createLedger({ doc: ddb.doc(), tableName: ddb.tableName(), clock: clock.now });
    const job = await jobIn(clocked, tenant, 'QUEUED');
    expect(job.startedAt).toBeUndefined();
    expect(job.queuedSince).toBe(job.createdAt);
    clock.advance(5_000);
    const admitted = clock.now().toISOString();
    const running = await clocked.transition(tenant, job.jobId, 'RUNNING');
    expect(running.startedAt).toBe(admitted);
    clock.advance(5_000);
    await clocked.transition(tenant, job.jobId, 'WAITING_APPROVAL', { wait: pendingWait('approval') });
    const requeued = await clocked.transition(tenant, job.jobId, 'QUEUED');
    expect(requeued.queuedSince).toBe(clock.now().toISOString());
    clock.advance(5_000);
    const resumed = await clocked.transition(tenant, job.jobId, 'RUNNING');
    expect(resumed.updatedAt).toBe(clock.now().toISOString());
    expect(resumed.startedAt).toBe(admitted);
    expect((await rawJobItem(job.jobId))?.startedAt).toBe(admitted);
  });
});

describe('Function: transition (terminal)', () => {
  it.each([
    ['RUNNING', 'SUCCEEDED'],
    ['WAITING_REVIEW', 'FAILED'],
    ['WAITING_APPROVAL', 'CANCELLED'],
  ] as const)('%s -> %s sets finishedAt and the TTL, and clears any pending wait', async (from, to) => {
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    const clocked = createLedger({
      doc: ddb.doc(),
      tableName: ddb.tableName(),
      clock: () => now,
      terminalTtlDays: 7,
    });
    const job = await jobIn(clocked, tenant, from);
    const done = await clocked.transition(tenant, job.jobId, to, {
      failure: { reason: 'test', message: 'upstream said: Authorization Bearer abcdefghijkl' },
    });
    expect(done.finishedAt).toBe(now.toISOString());
    expect(done.expiresAt).toBe(now.getTime() / 1000 + 7 * 86_400);
    expect(done.wait).toBeUndefined();
    expect(JSON.stringify(done.failure)).not.toContain('abcdefghijkl');
    const item = await rawJobItem(job.jobId);
    expect(item?.expiresAt).toBe(done.expiresAt);
    expect(item).not.toHaveProperty('wait');
  });
});
