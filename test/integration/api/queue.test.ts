/**
 * A job that never gets a browser slot: it waits QUEUED, asking again as the state machine
 * polls, until `maxQueueSeconds`; then it fails with `queue-timeout`, having opened nothing.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { maxPollSeconds, pollAfterSeconds } from '../../../lambdas/lib/capacity/poll.ts';
import { QueueTimeoutError } from '../../../lambdas/lib/engine/errors.ts';
import { createLedger } from '../../../lambdas/lib/ledger/index.ts';
import { acquireCapacity } from '../../../lambdas/start/acquire-capacity.ts';
import { start } from '../../../lambdas/start/start.ts';
import { pendingWait } from '../../support/ledger.ts';
import { call, order, waitForJob } from './support/http.ts';
import { TENANT_A, TENANT_B, useApiStack } from './support/stack.ts';

const stack = useApiStack({ settings: { maxQueueSeconds: 6 } });

// This file's table is its own: the tenant's cap goes to zero for every test here.
beforeAll(async () => {
  await stack.ddb.doc().send(
    new UpdateCommand({
      TableName: stack.ddb.tableName(),
      Key: { pk: `T#${TENANT_A}`, sk: 'TENANT' },
      UpdateExpression: 'SET browserCap = :zero',
      ExpressionAttributeValues: { ':zero': 0 },
    }),
  );
});

describe('A job whose tenant never frees a slot', () => {
  it('waits QUEUED, asking again, then fails with queue-timeout without opening a browser', async () => {
    const res = await call(stack.url(), 'POST', '/jobs', {
      key: stack.key('a'),
      body: order('never-admitted'),
    });
    expect(res.status).toBe(202);
    const ledger = stack.deps().engine.ledger;
    const shown = await call(stack.url(), 'GET', '/jobs/never-admitted', { key: stack.key('a') });
    expect(shown.json.job).toMatchObject({ status: 'QUEUED', queue: { position: 1 } });

    const failed = await waitForJob(ledger, TENANT_A, 'never-admitted', 'FAILED', 30_000);
    expect(failed.failure?.reason).toBe('queue-timeout');
    expect(failed.failure?.message).toMatch(/waited \d+ s in the queue \(at most 6 s\)/);
    expect(failed.startedAt).toBeUndefined();
    const { entries } = await ledger.readJob(TENANT_A, 'never-admitted');
    const asks = entries.filter((e) => e.type === 'invocation' && e.detail?.outcome === 'queued');
    expect(asks.length).toBeGreaterThanOrEqual(2);
    expect(entries.filter((e) => e.type === 'session-opened')).toEqual([]);
    expect(stack.world().sessionOf('never-admitted')).toBeUndefined();
  });
});

describe('Function: acquireCapacity (queue time)', () => {
  it('counts the time queued from when the job went QUEUED, not from its submission', async () => {
    const engine = stack.deps().engine;
    // Jobs submitted a minute ago (the limit here is 6 s); the tenant's cap is zero.
    const past = createLedger({
      doc: stack.ddb.doc(),
      tableName: stack.ddb.tableName(),
      clock: () => new Date(Date.now() - 60_000),
    });
    const request = {
      playbook: 'test-order@1',
      inputs: { sku: 'MUG-001', quantity: 1 },
      approvals: [],
      retryBudget: 2,
    };
    const submit = async (jobId: string) =>
      (await past.createJob(TENANT_A, jobId, { ...request, accounts: { shop: 'acct_acme_shop' } }, 2)).job;

    // Still QUEUED since its submission: over the limit.
    await submit('old-queued');
    await expect(acquireCapacity(engine, { tenantId: TENANT_A, jobId: 'old-queued' })).rejects.toBeInstanceOf(
      QueueTimeoutError,
    );

    // Resumed after parking (RUNNING again): it starts waiting now, QUEUED from this moment.
    await submit('old-resumed');
    await engine.ledger.transition(TENANT_A, 'old-resumed', 'RUNNING');
    const resumed = await acquireCapacity(engine, { tenantId: TENANT_A, jobId: 'old-resumed' });
    expect(resumed).toMatchObject({ outcome: 'queued', retryAfterSeconds: 1 });
    const requeued = await engine.ledger.getJob(TENANT_A, 'old-resumed');
    expect(requeued.status).toBe('QUEUED');
    expect(Date.now() - Date.parse(requeued.queuedSince ?? '')).toBeLessThan(10_000);

    // Answered while the API has not cleared the wait yet (still WAITING_APPROVAL): waiting starts now too.
    await submit('old-answered');
    await engine.ledger.transition(TENANT_A, 'old-answered', 'RUNNING');
    await engine.ledger.setWait(TENANT_A, 'old-answered', pendingWait('approval'), 'WAITING_APPROVAL');
    const answered = await acquireCapacity(engine, { tenantId: TENANT_A, jobId: 'old-answered' });
    expect(answered).toMatchObject({ outcome: 'queued' });
  });
});

describe('Function: start (reads)', () => {
  const request = { playbook: 'test-order@1', inputs: { sku: 'MUG-001', quantity: 1 }, approvals: [] };

  it('reads the job and its accounts once per ask, and once more after taking the lease', async () => {
    const engine = stack.deps().engine;
    // acme's cap is zero here: a queue poll. globex has room: the lease, then the session.
    const asks = { tenantId: TENANT_A, jobId: 'counted-reads-queued' };
    const runs = { tenantId: TENANT_B, jobId: 'counted-reads-ready' };
    await engine.ledger.createJob(
      asks.tenantId,
      asks.jobId,
      { ...request, accounts: { shop: 'acct_acme_shop' }, retryBudget: 2 },
      2,
    );
    await engine.ledger.createJob(
      runs.tenantId,
      runs.jobId,
      { ...request, accounts: { shop: 'acct_globex_shop' }, retryBudget: 2 },
      2,
    );
    const getJob = vi.spyOn(engine.ledger, 'getJob');
    const getAccount = vi.spyOn(engine.accounts, 'get');
    try {
      expect(await start(engine, asks)).toMatchObject({ outcome: 'queued' });
      expect(getJob).toHaveBeenCalledTimes(1);
      expect(getAccount).toHaveBeenCalledTimes(1);
      getJob.mockClear();
      getAccount.mockClear();
      // One more read of the job after the lease is taken: a cancellation may have raced it.
      expect(await start(engine, runs)).toMatchObject({ outcome: 'ready', session: 'opened' });
      expect(getJob).toHaveBeenCalledTimes(2);
      expect(getAccount).toHaveBeenCalledTimes(1);
    } finally {
      getJob.mockRestore();
      getAccount.mockRestore();
      await engine.capacity.release(runs.tenantId, runs.jobId);
      for (const ref of [asks, runs]) await engine.ledger.transition(ref.tenantId, ref.jobId, 'CANCELLED');
    }
  });
});

describe('Function: pollAfterSeconds', () => {
  it('asks every poll for ten minutes, every 15 s up to an hour, then every minute', () => {
    expect(pollAfterSeconds(0, 5)).toBe(5);
    expect(pollAfterSeconds(599, 5)).toBe(5);
    expect(pollAfterSeconds(600, 5)).toBe(15);
    expect(pollAfterSeconds(3599, 5)).toBe(15);
    expect(pollAfterSeconds(3600, 5)).toBe(60);
    expect(pollAfterSeconds(86_400, 5)).toBe(60);
    // A slower configured poll is never made faster.
    expect(pollAfterSeconds(0, 30)).toBe(30);
    expect(pollAfterSeconds(900, 30)).toBe(30);
    expect(pollAfterSeconds(7200, 90)).toBe(90);
    expect(maxPollSeconds(5)).toBe(60);
  });

  it('asks 1,700 times in a day in the queue (120 in ten minutes, 200 to the hour, 1,380 to the day)', () => {
    let asks = 0;
    for (let t = 0; t < 86_400; t += pollAfterSeconds(t, 5)) asks++;
    // At nine history events per ask (Start's task events, its Choice, the Wait), ~15,300 of 25,000.
    expect(asks).toBe(1700);
  });
});
