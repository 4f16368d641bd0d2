import { beforeAll, describe, expect, it } from 'vitest';
import { createApiKeyStore } from '../../../lambdas/lib/auth/api-keys.ts';
import { createLeaseCapacity } from '../../../lambdas/lib/capacity/leases.ts';
import { createLedger, type Ledger } from '../../../lambdas/lib/ledger/index.ts';
import type { MetricName } from '../../../lambdas/lib/metrics/names.ts';
import { type WatchdogDeps, watch } from '../../../lambdas/watchdog/watchdog.ts';
import { useDynamoDb } from '../../support/dynamodb.ts';
import { jobRequest, pendingWait, type TestClock, testClock } from '../../support/ledger.ts';

/** The watchdog over a real table: two tenants with jobs in every live status, some stuck. */

const ddb = useDynamoDb();
const allowance = { runningSeconds: 900, queuedSeconds: 240, waitGraceSeconds: 300 };

let clock: TestClock;
let ledger: Ledger;
let deps: WatchdogDeps;
const recorded: { name: MetricName; value: number; dimensions: Record<string, string> }[] = [];
const warnings: Record<string, unknown>[] = [];

const value = (name: MetricName, dimensions: Record<string, string> = {}): number | undefined =>
  recorded.find((r) => r.name === name && JSON.stringify(r.dimensions) === JSON.stringify(dimensions))?.value;

beforeAll(async () => {
  clock = testClock();
  const doc = ddb.doc();
  const tableName = ddb.tableName();
  ledger = createLedger({ doc, tableName, clock: clock.now });
  const keys = createApiKeyStore({ doc, tableName, clock: clock.now });
  await keys.create('acme', ['submitter'], { plan: 'free' });
  await keys.create('globex', ['submitter'], { plan: 'starter' });
  // A second key of a known tenant lists it once.
  await keys.create('acme', ['approver']);
  const capacity = createLeaseCapacity({ doc, tableName, clock: clock.now });
  deps = {
    doc,
    tableName,
    capacity,
    metrics: {
      add: (name, v, dimensions) => recorded.push({ name, value: v, dimensions: { ...dimensions } }),
      flush: () => undefined,
    },
    log: {
      debug: () => undefined,
      info: () => undefined,
      warn: (_m, f) => warnings.push(f ?? {}),
      error: () => undefined,
    },
    clock: clock.now,
    allowance,
  };

  // acme: a RUNNING job holding a lease that went quiet, a fresh RUNNING one, a QUEUED one that
  // stopped asking, an approval wait long past its expiry.
  const started = async (tenantId: string, jobId: string): Promise<void> => {
    await ledger.createJob(tenantId, jobId, jobRequest(), 3);
    await capacity.acquire(tenantId, jobId, { sessions: 1, queuedAt: clock.now().toISOString() });
    await ledger.transition(tenantId, jobId, 'RUNNING');
  };
  await started('acme', 'quiet-runner');
  await ledger.createJob('acme', 'gone-from-queue', jobRequest(), 3);
  const waiting = await ledger.createJob('acme', 'old-approval', jobRequest(), 3);
  await ledger.transition('acme', waiting.job.jobId, 'RUNNING');
  await ledger.setWait(
    'acme',
    'old-approval',
    {
      ...pendingWait('approval'),
      requestedAt: clock.now().toISOString(),
      expiresAt: new Date(clock.now().getTime() + 600_000).toISOString(),
    },
    'WAITING_APPROVAL',
  );
  clock.advance(1_000_000); // 16.7 minutes
  await started('acme', 'busy-runner');
  // globex: a job that just queued, an MFA wait still open, one finished job (not live).
  await ledger.createJob('globex', 'fresh-in-queue', jobRequest(), 3);
  const mfa = await ledger.createJob('globex', 'mfa-wait', jobRequest(), 3);
  await ledger.transition('globex', mfa.job.jobId, 'RUNNING');
  await ledger.setWait(
    'globex',
    'mfa-wait',
    {
      ...pendingWait('mfa'),
      requestedAt: clock.now().toISOString(),
      expiresAt: new Date(clock.now().getTime() + 86_400_000).toISOString(),
    },
    'WAITING_MFA',
  );
  const done = await ledger.createJob('globex', 'done', jobRequest(), 3);
  await ledger.transition('globex', done.job.jobId, 'RUNNING');
  await ledger.transition('globex', done.job.jobId, 'SUCCEEDED');
  clock.advance(60_000);
});

describe('Function: watch', () => {
  it('counts live and stuck jobs by status, the queue, open waits and browser use', async () => {
    const report = await watch(deps);
    expect(report.tenants).toBe(2);
    expect(report.live).toEqual({
      QUEUED: 2,
      RUNNING: 2,
      WAITING_APPROVAL: 1,
      WAITING_MFA: 1,
      WAITING_REVIEW: 0,
      WAITING_TAKEOVER: 0,
    });
    expect(report.stuck.map((s) => [s.jobId, s.status]).sort()).toEqual([
      ['gone-from-queue', 'QUEUED'],
      ['old-approval', 'WAITING_APPROVAL'],
      ['quiet-runner', 'RUNNING'],
    ]);
    expect(report.queueDepth).toBe(2);
    expect(report.oldestQueuedSeconds).toBe(1060);
    expect(report.oldestWaitSeconds).toEqual({ approval: 1060, mfa: 60, review: 0, takeover: 0 });
    // acme holds one live lease of its free cap (5): the quiet runner's expired with its TTL
    // (900 s); globex holds none of starter's 25.
    expect(report.browsersInUse).toBe(1);
    expect(report.browserCap).toBe(30);
    expect(report.maxUtilizationPercent).toBe(20);

    expect(value('StuckJobs', { Status: 'RUNNING' })).toBe(1);
    expect(value('StuckJobs', { Status: 'QUEUED' })).toBe(1);
    expect(value('StuckJobs', { Status: 'WAITING_APPROVAL' })).toBe(1);
    // Zeros are published too: an alarm on StuckJobs sees data while nothing is stuck.
    expect(value('StuckJobs', { Status: 'WAITING_REVIEW' })).toBe(0);
    expect(value('QueueDepth')).toBe(2);
    expect(value('OldestQueuedAge')).toBe(1060);
    expect(value('OldestWaitAge', { Kind: 'approval' })).toBe(1060);
    expect(value('BrowserCapUtilization')).toBe(20);
    expect(warnings.map((w) => w.jobId).sort()).toEqual(['gone-from-queue', 'old-approval', 'quiet-runner']);
    expect(warnings[0]).toMatchObject({ event: 'job-stuck', tenantId: 'acme' });
  });
});
