/**
 * Smaller defects on the write path, each at the instant it happens, with the engine's cores
 * in this process against DynamoDB Local and a small in-memory application:
 * - a job past its deadline still records whether its in-flight write happened;
 * - Reconcile and Finish report a browser that dies under their probe as a lost session;
 * - Finish completes a job that still shows the MFA wait a person just answered;
 * - a retried AwaitHuman takes the decision recorded since its first attempt, instead of
 *   voiding it with a new request.
 */

import { beforeAll, describe, expect, it } from 'vitest';
import { awaitHuman } from '../../../lambdas/await-human/await-human.ts';
import { WaitAnsweredError } from '../../../lambdas/await-human/errors.ts';
import { finish } from '../../../lambdas/finish/finish.ts';
import { DeadlineExceededError } from '../../../lambdas/lib/engine/errors.ts';
import { idempotencyKeyOf } from '../../../lambdas/lib/engine/job-identity.ts';
import { createLedger, type Ledger } from '../../../lambdas/lib/ledger/index.ts';
import type { Playbook, ProbeResult, Step } from '../../../lambdas/lib/playbooks/contract.ts';
import { reconcile } from '../../../lambdas/reconcile/reconcile.ts';
import { runStep } from '../../../lambdas/run-step/run-step.ts';
import { useDynamoDb } from '../../support/dynamodb.ts';
import {
  completeSubmit,
  depsFor,
  fakeBrowser,
  oneWritePlaybook,
  openIntent,
  runningJob,
} from '../../support/in-process.ts';
import { jobRequest, newId } from '../../support/ledger.ts';

const ddb = useDynamoDb();
const tenantId = newId('tenant');
let ledger: Ledger;

beforeAll(() => {
  ledger = createLedger({ doc: ddb.doc(), tableName: ddb.tableName() });
});

/** A one-write playbook whose application holds `records`; `probe` can be replaced. */
function playbookWith(records: string[], probe?: Step['probe']): Playbook {
  return oneWritePlaybook({
    id: 'submit',
    title: 'Submit',
    kind: 'write',
    app: 'site',
    precondition: async () => ({ ok: true }),
    restore: async () => undefined,
    run: async (_page, ctx) => {
      records.push(ctx.idempotencyKey);
    },
    verify: async () => ({ submitted: true }),
    probe:
      probe ??
      (async (_page, ctx): Promise<ProbeResult> =>
        records.includes(ctx.idempotencyKey)
          ? { status: 'done', evidence: { submitted: true } }
          : { status: 'absent' }),
  });
}

/** An intent whose owner ended: what a worker that acted and then died leaves behind. */
function endedIntent(jobId: string): Promise<void> {
  const at = new Date().toISOString();
  return openIntent(ledger, tenantId, jobId, { attemptId: 'a1', heartbeatAt: at, releasedAt: at });
}

describe('Engine: the write path at its edges', () => {
  it('past the deadline, probes the write in flight and records it before it stops the job', async () => {
    const jobId = newId('job');
    const { job } = await ledger.createJob(
      tenantId,
      jobId,
      jobRequest({
        playbook: 'report@1',
        accounts: { site: 'acct-site' },
        approvals: [],
        deadline: new Date(Date.now() + 1_000).toISOString(),
      }),
      1,
    );
    const running = await ledger.transition(tenantId, jobId, 'RUNNING', { expectedVersion: job.version });
    await ledger.updateJob(tenantId, jobId, {
      expectedVersion: running.version,
      set: { sessions: { site: { sessionId: 's1', openedAt: new Date().toISOString() } } },
    });
    await endedIntent(jobId);
    const records = [idempotencyKeyOf(await ledger.getJob(tenantId, jobId), 'submit')];
    await new Promise((r) => setTimeout(r, 1_100));
    await expect(runStep(depsFor(ledger, playbookWith(records)), { tenantId, jobId })).rejects.toBeInstanceOf(
      DeadlineExceededError,
    );
    const { entries } = await ledger.readJob(tenantId, jobId);
    const done = entries.find((e) => e.type === 'step-completed');
    expect(done?.evidence).toMatchObject({ submitted: true, reconciled: true });
    expect(records).toHaveLength(1);
  });

  it.each([['reconcile'], ['finish']] as const)(
    '%s reports a browser that dies under its probe as a lost session',
    async (which) => {
      const jobId = await runningJob(ledger, tenantId, 'report@1');
      await endedIntent(jobId);
      if (which === 'finish') await completeSubmit(ledger, tenantId, jobId);
      let alive = true;
      const dying = playbookWith([], async () => {
        alive = false;
        throw new Error('Target page, context or browser has been closed');
      });
      const deps = depsFor(ledger, dying, fakeBrowser({ connected: () => alive }));
      const result =
        which === 'reconcile'
          ? await reconcile(deps, { tenantId, jobId })
          : await finish(deps, { tenantId, jobId });
      expect(result).toMatchObject({ outcome: 'session_lost', app: 'site' });
    },
  );

  it.each([
    ['done', 'completes it, reconciled, with no retry spent', 0],
    ['absent', 'spends a retry on it (the attempt acted and its write did not happen)', 1],
  ] as const)(
    'records a write the browser sent again as unconfirmed; a probe that finds it %s %s',
    async (found, _what, retries) => {
      const jobId = await runningJob(ledger, tenantId, 'report@1');
      const records: string[] = [];
      const resent = [{ method: 'POST', url: 'http://127.0.0.1:9/submit', extra: 1, errors: [-101] }];
      const playbook = playbookWith(records);
      const deps = depsFor(ledger, playbook, fakeBrowser({ resent }));
      expect(await runStep(deps, { tenantId, jobId })).toMatchObject({
        outcome: 'uncertain',
        step: 'submit',
      });
      const before = await ledger.readJob(tenantId, jobId);
      const unconfirmed = before.entries.filter((e) => e.type === 'step-unconfirmed');
      expect(unconfirmed).toHaveLength(1);
      expect(String(unconfirmed[0]?.detail?.reason)).toMatch(/sent the write again by itself/);
      expect(unconfirmed[0]?.detail?.writeGuard).toMatchObject({ resent: 1 });
      expect(before.entries.some((e) => e.type === 'step-completed')).toBe(false);

      if (found === 'absent') records.length = 0;
      await reconcile(deps, { tenantId, jobId });
      const after = await ledger.readJob(tenantId, jobId);
      expect(after.job.retriesUsed).toBe(retries);
      const completed = after.entries.filter((e) => e.type === 'step-completed');
      if (found === 'done')
        expect(completed[0]?.evidence).toMatchObject({ submitted: true, reconciled: true });
      else expect(completed).toEqual([]);
    },
  );

  it('completes a job whose every write is verified though it still shows the answered MFA wait', async () => {
    const jobId = await runningJob(ledger, tenantId, 'report@1');
    const records = [idempotencyKeyOf(await ledger.getJob(tenantId, jobId), 'submit')];
    await completeSubmit(ledger, tenantId, jobId);
    await ledger.setWait(
      tenantId,
      jobId,
      {
        kind: 'mfa',
        step: 'submit',
        stepIndex: 0,
        taskToken: 'token-answered',
        expiresAt: new Date(Date.now() + 60_000).toISOString(),
        requestedAt: new Date().toISOString(),
        reason: 'mfa_required',
      },
      'WAITING_MFA',
    );
    expect(await finish(depsFor(ledger, playbookWith(records)), { tenantId, jobId })).toMatchObject({
      outcome: 'succeeded',
    });
    expect((await ledger.getJob(tenantId, jobId)).status).toBe('SUCCEEDED');
  });

  it('lets a retried AwaitHuman take the approval recorded since its first attempt', async () => {
    const jobId = await runningJob(ledger, tenantId, 'report@1');
    const deps = depsFor(ledger, playbookWith([]));
    const wait = {
      tenantId,
      jobId,
      kind: 'approval',
      step: 'submit',
      reason: 'needs_approval',
      waitId: 'w-1',
    };
    expect(await awaitHuman(deps, { ...wait, taskToken: 'token-1' })).toMatchObject({ outcome: 'waiting' });
    // The first attempt failed after storing its token; meanwhile the person approved (the API
    // records first, then finds the token dead and clears the wait).
    const waiting = await ledger.getJob(tenantId, jobId);
    await ledger.updateJob(tenantId, jobId, {
      expectedVersion: waiting.version,
      entry: {
        type: 'approval-recorded',
        step: 'submit',
        actor: 'blk_person',
        detail: { decision: 'approve', decidedBy: 'blk_person' },
        cost: { dynamoWrites: 2 },
      },
    });
    await ledger.clearWait(tenantId, jobId, { taskToken: 'token-1', to: 'RUNNING' });
    await expect(awaitHuman(deps, { ...wait, taskToken: 'token-2' })).rejects.toBeInstanceOf(
      WaitAnsweredError,
    );
    const job = await ledger.getJob(tenantId, jobId);
    expect(job.status).toBe('RUNNING');
    expect(job.wait).toBeUndefined();
  });

  it('asks again for a new wait at the same step (a new request id) after an earlier one was decided', async () => {
    const jobId = await runningJob(ledger, tenantId, 'report@1');
    const deps = depsFor(ledger, playbookWith([]));
    const wait = { tenantId, jobId, kind: 'review', step: 'submit', reason: 'layout_changed' };
    await awaitHuman(deps, { ...wait, waitId: 'w-1', taskToken: 'token-1' });
    const waiting = await ledger.getJob(tenantId, jobId);
    await ledger.updateJob(tenantId, jobId, {
      expectedVersion: waiting.version,
      entry: { type: 'review-recorded', step: 'submit', detail: { decision: 'approve' }, cost: {} },
    });
    await ledger.clearWait(tenantId, jobId, { taskToken: 'token-1', to: 'RUNNING' });
    expect(await awaitHuman(deps, { ...wait, waitId: 'w-2', taskToken: 'token-2' })).toMatchObject({
      outcome: 'waiting',
    });
  });
});
