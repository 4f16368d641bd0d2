/**
 * The parked wait's re-arm against a real ledger (DynamoDB Local): the person's decision is
 * recorded by the API before it resumes the job, so a decision that lands while the job
 * parks (answering a token that has already timed out) is taken from the ledger, whether
 * it arrives before the new token is stored or in between the store and the check. And a
 * review that comes back for the reason a person already answered spends the retry budget, then
 * fails the job with the answers' history instead of asking again and again.
 */

import { describe, expect, it } from 'vitest';
import { awaitHuman } from '../../../lambdas/await-human/await-human.ts';
import { ApprovalRejectedError, WaitAnsweredError } from '../../../lambdas/await-human/errors.ts';
import { createAccountRegistry } from '../../../lambdas/lib/accounts/directory.ts';
import { NO_ACTION_CACHE } from '../../../lambdas/lib/agent/cache/store.ts';
import { NO_VOLUMES } from '../../../lambdas/lib/browser/volumes.ts';
import { createLeaseCapacity } from '../../../lambdas/lib/capacity/leases.ts';
import { DEFAULT_SETTINGS, type EngineDeps } from '../../../lambdas/lib/engine/types.ts';
import { createNoScreenshotStore } from '../../../lambdas/lib/evidence/store.ts';
import { createLedger, type Ledger } from '../../../lambdas/lib/ledger/index.ts';
import { createLogger } from '../../../lambdas/lib/logger.ts';
import { checkoutPlaybook } from '../../../playbooks/checkout/index.ts';
import { useDynamoDb } from '../../support/dynamodb.ts';
import { CHECKOUT_INPUTS } from '../../support/fixtures.ts';
import { registryOf } from '../../support/playbooks.ts';

const ddb = useDynamoDb();
const TENANT = 't-rearm';
const STEP = 'place-order';

function deps(ledger: Ledger = createLedger({ doc: ddb.doc(), tableName: ddb.tableName() })): EngineDeps {
  const unused = (): never => {
    throw new Error('not used by the wait handler');
  };
  return {
    ledger,
    browser: {
      volumes: NO_VOLUMES,
      openSession: unused,
      attach: unused,
      detach: unused,
      runningSessions: unused,
      liveViewLink: () => undefined,
      revokeLiveViews: async () => undefined,
      endSession: unused,
      isAlive: unused,
      usage: unused,
    },
    playbooks: registryOf(checkoutPlaybook),
    // The real directory: re-arming checks the job's accounts are still the tenant's.
    accounts: createAccountRegistry({ doc: ddb.doc(), tableName: ddb.tableName() }),
    secrets: { getCredentials: unused },
    capacity: createLeaseCapacity({ doc: ddb.doc(), tableName: ddb.tableName(), leaseTtlSeconds: 60 }),
    applications: {},
    notifier: { waiting: async () => undefined, checkFailed: async () => undefined },
    screenshots: createNoScreenshotStore(),
    actionCache: NO_ACTION_CACHE,
    clock: () => new Date(),
    log: createLogger({ sink: () => undefined }),
    recordSessionOwner: async () => undefined,
    faultPoint: async () => undefined,
    settings: { ...DEFAULT_SETTINGS, parkAfterSeconds: 5, leaseTtlSeconds: 60 },
  };
}

/** A job waiting for approval at place-order with token `first`, as the first wait leaves it, on its own account. */
async function waitingJob(d: EngineDeps, jobId: string): Promise<void> {
  await createAccountRegistry({ doc: ddb.doc(), tableName: ddb.tableName() }).create({
    tenantId: TENANT,
    application: 'shop',
    label: jobId,
    accountId: `acct-${jobId}`,
    connectedWith: 'credentials',
  });
  await d.ledger.createJob(
    TENANT,
    jobId,
    {
      playbook: 'checkout@1',
      inputs: CHECKOUT_INPUTS,
      accounts: { shop: `acct-${jobId}` },
      approvals: [],
      retryBudget: 3,
    },
    14,
  );
  await d.ledger.transition(TENANT, jobId, 'RUNNING');
  await awaitHuman(d, {
    tenantId: TENANT,
    jobId,
    kind: 'approval',
    step: STEP,
    reason: 'needs_approval',
    taskToken: 'first',
  });
}

/** What the API's `decide` writes before it resumes: the decision, fenced by the job's version. */
async function recordDecision(ledger: Ledger, jobId: string, decision: 'approve' | 'reject'): Promise<void> {
  const job = await ledger.getJob(TENANT, jobId);
  await ledger.updateJob(TENANT, jobId, {
    expectedVersion: job.version,
    entry: { type: 'approval-recorded', step: STEP, stepIndex: 13, actor: 'key_1', detail: { decision } },
  });
}

const rearm = (d: EngineDeps, jobId: string) =>
  awaitHuman(d, {
    tenantId: TENANT,
    jobId,
    kind: 'approval',
    step: STEP,
    reason: 'needs_approval',
    taskToken: 'second',
    rearm: true,
  });

describe('Function: awaitHuman (parked wait)', () => {
  it('extends the lease over the first wait, then re-arms with the new token without asking again', async () => {
    const d = deps();
    const jobId = 'rearm-plain';
    await d.capacity.acquire(TENANT, jobId, { sessions: 1, queuedAt: new Date().toISOString() });
    const before = Math.floor(Date.now() / 1000);
    await waitingJob(d, jobId);
    const lease = (await createLeaseCapacity({ doc: ddb.doc(), tableName: ddb.tableName() }).status(TENANT))
      .leases[0];
    // Held while the browser may wait: park-after (5 s) plus a TTL (60 s).
    expect(lease?.leaseExpiresAt).toBeGreaterThanOrEqual(before + 65);
    const first = await d.ledger.getJob(TENANT, jobId);

    await expect(rearm(d, jobId)).resolves.toMatchObject({ outcome: 'waiting', parked: true });
    const { job, entries } = await d.ledger.readJob(TENANT, jobId);
    expect(job.status).toBe('WAITING_APPROVAL');
    expect(job.wait).toMatchObject({
      taskToken: 'second',
      requestedAt: first.wait?.requestedAt,
      expiresAt: first.wait?.expiresAt,
    });
    expect(entries.filter((e) => e.type === 'approval-requested')).toHaveLength(1);
  });

  it('takes an approval recorded before the re-arm from the ledger (WaitAnsweredError) and clears the wait', async () => {
    const d = deps();
    const jobId = 'rearm-approved-before';
    await waitingJob(d, jobId);
    await recordDecision(d.ledger, jobId, 'approve');
    const err = await rearm(d, jobId).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WaitAnsweredError);
    expect((err as Error).name).toBe('WaitAnsweredError');
    const job = await d.ledger.getJob(TENANT, jobId);
    expect(job.status).toBe('RUNNING');
    expect(job.wait).toBeUndefined();
  });

  it('takes an approval recorded between storing the new token and checking (the race)', async () => {
    const ledger = createLedger({ doc: ddb.doc(), tableName: ddb.tableName() });
    const raced: Ledger = {
      ...ledger,
      async setWait(...args) {
        const job = await ledger.setWait(...args);
        // The API read the job before the new token was stored and recorded its decision now.
        if (args[1] === 'rearm-race') await recordDecision(ledger, 'rearm-race', 'approve');
        return job;
      },
    };
    const d = deps(raced);
    await waitingJob(deps(ledger), 'rearm-race');
    await expect(rearm(d, 'rearm-race')).rejects.toBeInstanceOf(WaitAnsweredError);
    const job = await ledger.getJob(TENANT, 'rearm-race');
    expect(job.status).toBe('RUNNING');
    expect(job.wait).toBeUndefined();
  });

  it('fails the wait as Belay.Rejected when the person rejected while the job parked', async () => {
    const d = deps();
    const jobId = 'rearm-rejected';
    await waitingJob(d, jobId);
    await recordDecision(d.ledger, jobId, 'reject');
    const err = await rearm(d, jobId).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApprovalRejectedError);
    expect((err as Error).name).toBe('Belay.Rejected');
  });

  it('fails the parked wait with AccountRevokedError when the account was revoked meanwhile, arming nothing', async () => {
    const d = deps();
    const jobId = 'rearm-revoked';
    await waitingJob(d, jobId);
    await createAccountRegistry({ doc: ddb.doc(), tableName: ddb.tableName() }).revoke(
      TENANT,
      `acct-${jobId}`,
    );
    await expect(rearm(d, jobId)).rejects.toMatchObject({ name: 'AccountRevokedError' });
    expect((await d.ledger.getJob(TENANT, jobId)).wait?.taskToken).toBe('first');
  });

  it('lets a job that ended while parked go on to its end', async () => {
    const d = deps();
    const jobId = 'rearm-cancelled';
    await waitingJob(d, jobId);
    await d.ledger.transition(TENANT, jobId, 'CANCELLED');
    await expect(rearm(d, jobId)).rejects.toMatchObject({ name: 'WaitAnsweredError', answer: 'finished' });
  });

  it('does not ask again for a decision of an earlier wait at the same step', async () => {
    const d = deps();
    const jobId = 'rearm-earlier';
    await waitingJob(d, jobId);
    await recordDecision(d.ledger, jobId, 'approve');
    // A later wait at the same step (a new request) is not answered by the old decision.
    await d.ledger.clearWait(TENANT, jobId, { to: 'RUNNING' });
    await awaitHuman(d, {
      tenantId: TENANT,
      jobId,
      kind: 'approval',
      step: STEP,
      reason: 'needs_approval',
      taskToken: 'third',
    });
    await expect(rearm(d, jobId)).resolves.toMatchObject({ outcome: 'waiting' });
  });
});

describe('Function: awaitHuman (a review asked again for the same reason)', () => {
  /** The review of place-order asked (for `reason`) and answered `absent` by a person, as the API records it. */
  async function askedAndAnswered(d: EngineDeps, jobId: string, reason: string, n: number): Promise<unknown> {
    const asked = await awaitHuman(d, {
      tenantId: TENANT,
      jobId,
      kind: 'review',
      step: STEP,
      reason,
      taskToken: `review-${n}`,
      waitId: `wait-${n}`,
    }).catch((e: unknown) => e);
    if (asked instanceof Error) return asked;
    const job = await d.ledger.getJob(TENANT, jobId);
    await d.ledger.updateJob(TENANT, jobId, {
      expectedVersion: job.version,
      entry: {
        type: 'review-recorded',
        step: STEP,
        stepIndex: 13,
        actor: 'key_reviewer',
        detail: { decision: 'approve', resolution: 'absent' },
      },
    });
    await d.ledger.clearWait(TENANT, jobId, { taskToken: `review-${n}`, to: 'RUNNING' });
    return asked;
  }

  it('spends a retry each time the write comes back for the answered reason, then fails with the answers', async () => {
    const d = deps();
    const jobId = 'review-again';
    await waitingJob(d, jobId);
    await recordDecision(d.ledger, jobId, 'approve');
    await d.ledger.clearWait(TENANT, jobId, { taskToken: 'first', to: 'RUNNING' });
    // The first ask spends nothing; each of the next three spends one of the budget's three retries.
    for (let n = 1; n <= 4; n++) {
      await expect(askedAndAnswered(d, jobId, 'unknown', n)).resolves.toMatchObject({ outcome: 'waiting' });
      expect((await d.ledger.getJob(TENANT, jobId)).retriesUsed).toBe(n - 1);
    }
    const err = (await askedAndAnswered(d, jobId, 'unknown', 5)) as Error;
    expect(err.name).toBe('RetryBudgetExhaustedError');
    expect(err.message).toContain('a person was asked 4 times about the same write (unknown)');
    expect(err.message).toContain('approve, absent by key_reviewer at');
    const { entries } = await d.ledger.readJob(TENANT, jobId);
    // Asked four times, never a fifth.
    expect(entries.filter((e) => e.type === 'review-requested')).toHaveLength(4);
    expect(entries.filter((e) => e.type === 'step-failed')).toHaveLength(3);
  });

  it('spends nothing for a review of another reason, nor for a retried attempt of the same wait', async () => {
    const d = deps();
    const jobId = 'review-other-reason';
    await waitingJob(d, jobId);
    await recordDecision(d.ledger, jobId, 'approve');
    await d.ledger.clearWait(TENANT, jobId, { taskToken: 'first', to: 'RUNNING' });
    await askedAndAnswered(d, jobId, 'unknown', 1);
    await askedAndAnswered(d, jobId, 'duplicate', 2);
    expect((await d.ledger.getJob(TENANT, jobId)).retriesUsed).toBe(0);
    // The same wait again (its Lambda retried after it stored the request): not a new ask.
    await awaitHuman(d, {
      tenantId: TENANT,
      jobId,
      kind: 'review',
      step: STEP,
      reason: 'unknown',
      taskToken: 't',
      waitId: 'w9',
    });
    await awaitHuman(d, {
      tenantId: TENANT,
      jobId,
      kind: 'review',
      step: STEP,
      reason: 'unknown',
      taskToken: 't2',
      waitId: 'w9',
    });
    expect((await d.ledger.getJob(TENANT, jobId)).retriesUsed).toBe(1);
  });
});
