import { DescribeExecutionCommand } from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import { executionArn } from '../../../lambdas/lib/api/step-functions.ts';
import { idempotencyKeyOf } from '../../../lambdas/lib/engine/job-identity.ts';
import { MAX_SIGN_INS_PER_STEP } from '../../../lambdas/lib/engine/sign-in.ts';
import type { Job } from '../../../lambdas/lib/ledger/index.ts';
import { GOOD_CODE } from './support/fakes.ts';
import { call, order, waitForJob } from './support/http.ts';
import { TENANT_A, useApiStack } from './support/stack.ts';

const stack = useApiStack();

const post = (path: string, body?: unknown, key = stack.key('a')) =>
  call(stack.url(), 'POST', path, { key, ...(body === undefined ? {} : { body }) });
const ledger = () => stack.deps().engine.ledger;
const until = (jobId: string, status: Job['status'] | ((j: Job) => boolean)) =>
  waitForJob(ledger(), TENANT_A, jobId, status);

async function submitAndWait(jobId: string, status: Job['status'] = 'WAITING_APPROVAL'): Promise<Job> {
  const res = await post('/jobs', order(jobId));
  expect(res.status).toBe(202);
  return until(jobId, status);
}

async function executionStatus(job: Job): Promise<string | undefined> {
  const arn = executionArn(stack.sfn().stateMachineArn, job.executionName ?? '');
  await stack
    .sfn()
    .waitForExecution(arn, 10_000)
    .catch(() => undefined);
  const out = await stack.deps().sfn.send(new DescribeExecutionCommand({ executionArn: arn }));
  return out.status;
}

/** The key the engine placed `jobId`'s order under (its idempotency key, as the scripted shop records it). */
async function orderKey(jobId: string): Promise<string> {
  return idempotencyKeyOf(await ledger().getJob(TENANT_A, jobId), 'place-order');
}

async function entryTypes(jobId: string): Promise<string[]> {
  return (await ledger().readJob(TENANT_A, jobId)).entries.map((e) => e.type);
}

describe('POST /jobs/{jobId}/decisions', () => {
  it('records the approval with who decided before the job resumes, then the job succeeds', async () => {
    const waiting = await submitAndWait('dec-1');
    const res = await post(
      '/jobs/dec-1/decisions',
      { step: 'place-order', decision: 'approve', comment: 'ok' },
      stack.key('aApprover'),
    );
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ decision: 'approve', replayed: false, resumed: true });
    const done = await until('dec-1', 'SUCCEEDED');
    const { entries } = await ledger().readJob(TENANT_A, 'dec-1');
    const recorded = entries.findIndex((e) => e.type === 'approval-recorded');
    const started = entries.findIndex((e) => e.type === 'step-started' && e.step === 'place-order');
    expect(recorded).toBeGreaterThan(-1);
    expect(recorded).toBeLessThan(started);
    expect(entries[recorded]?.actor).toBe(res.json.decidedBy);
    expect(entries[recorded]?.detail).toMatchObject({ decision: 'approve', comment: 'ok' });
    expect(res.json.decidedBy).toMatch(/^blk_[0-9a-f]{12}$/);
    expect(await executionStatus(done)).toBe('SUCCEEDED');
    expect(stack.world().orders.get(await orderKey('dec-1'))).toBeDefined();
    expect(waiting.wait?.taskToken).toBeDefined();
  });

  it('answers a second identical decision with 200 and no second resume; a different one with 409', async () => {
    await submitAndWait('dec-2');
    const first = await post('/jobs/dec-2/decisions', { step: 'place-order', decision: 'approve' });
    const again = await post('/jobs/dec-2/decisions', { step: 'place-order', decision: 'approve' });
    expect(first.json.resumed).toBe(true);
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ replayed: true, resumed: false, decidedBy: first.json.decidedBy });
    const other = await post('/jobs/dec-2/decisions', { step: 'place-order', decision: 'reject' });
    expect(other.status).toBe(409);
    expect(other.json.error.code).toBe('already_decided');
    await until('dec-2', 'SUCCEEDED');
    expect((await entryTypes('dec-2')).filter((t) => t === 'approval-recorded')).toHaveLength(1);
  });

  it('records and resumes once when two approvers send the same decision at the same time', async () => {
    await submitAndWait('dec-race');
    const body = { step: 'place-order', decision: 'approve' };
    const [one, two] = await Promise.all([
      post('/jobs/dec-race/decisions', body),
      post('/jobs/dec-race/decisions', body, stack.key('aApprover')),
    ]);
    expect([one.status, two.status]).toEqual([200, 200]);
    expect([one.json.resumed, two.json.resumed].filter(Boolean)).toHaveLength(1);
    await until('dec-race', 'SUCCEEDED');
    expect((await entryTypes('dec-race')).filter((t) => t === 'approval-recorded')).toHaveLength(1);
  });

  it('fails the job on a rejection (Belay.Rejected), with the comment as the reason', async () => {
    const waiting = await submitAndWait('dec-3');
    const res = await post('/jobs/dec-3/decisions', {
      step: 'place-order',
      decision: 'reject',
      comment: 'wrong mug',
    });
    expect(res.status).toBe(200);
    const failed = await until('dec-3', 'FAILED');
    expect(failed.failure).toMatchObject({ reason: 'rejected', message: 'wrong mug' });
    expect(await executionStatus(waiting)).toBe('FAILED');
    expect(stack.world().orders.has(await orderKey('dec-3'))).toBe(false);
  });

  it.each([
    ['a step that is not waiting', { step: 'open-cart', decision: 'approve' }, 409, 'not_waiting', 'dec-x1'],
    [
      'a resolution on an approval',
      { step: 'place-order', decision: 'approve', resolution: 'done' },
      422,
      'invalid_decision',
      'dec-x2',
    ],
    ['an unknown decision', { step: 'place-order', decision: 'maybe' }, 400, 'invalid_request', 'dec-x3'],
    ['a missing step', { decision: 'approve' }, 400, 'invalid_request', 'dec-x4'],
  ])('refuses %s and leaves the job waiting', async (_what, body, status, code, jobId) => {
    const job = await submitAndWait(jobId);
    const res = await post(`/jobs/${job.jobId}/decisions`, body);
    expect(res.status).toBe(status);
    expect(res.json.error.code).toBe(code);
    const after = await ledger().getJob(TENANT_A, job.jobId);
    expect(after).toEqual(job);
  });

  it('resumes a review of a changed page, and the job goes on', async () => {
    stack.world().layoutGlitch.add('rev-1');
    await submitAndWait('rev-1', 'WAITING_REVIEW');
    const view = await call(stack.url(), 'GET', '/jobs/rev-1', { key: stack.key('a') });
    expect(view.json.job.wait).toMatchObject({ kind: 'review', step: 'open-cart', reason: 'layout_changed' });
    const res = await post('/jobs/rev-1/decisions', {
      step: 'open-cart',
      decision: 'approve',
      comment: 'fixed',
    });
    expect(res.status).toBe(200);
    await until('rev-1', 'WAITING_APPROVAL');
    expect(await entryTypes('rev-1')).toContain('review-recorded');
  });
});

describe('POST /jobs/{jobId}/mfa', () => {
  it('keeps the job waiting on a wrong code, resumes it once the sign-in is verified', async () => {
    await submitAndWait('mfa-1', 'WAITING_MFA');
    const wrong = await post('/jobs/mfa-1/mfa', { code: '000000' });
    expect(wrong.status).toBe(422);
    expect(wrong.json.error.code).toBe('code_rejected');
    const confirmed = await post('/jobs/mfa-1/mfa', { completed: true });
    expect(confirmed.status).toBe(422);
    expect(confirmed.json.error.code).toBe('not_signed_in');
    expect((await ledger().getJob(TENANT_A, 'mfa-1')).status).toBe('WAITING_MFA');

    const right = await post('/jobs/mfa-1/mfa', { code: GOOD_CODE });
    expect(right.status).toBe(200);
    expect(right.json).toMatchObject({ signedIn: true, resumed: true, step: 'open-cart' });
    await until('mfa-1', 'WAITING_APPROVAL');
    const { entries } = await ledger().readJob(TENANT_A, 'mfa-1');
    expect(entries.filter((e) => e.type === 'mfa-completed')).toHaveLength(1);
    expect(JSON.stringify(entries)).not.toContain(GOOD_CODE);
    const again = await post('/jobs/mfa-1/mfa', { code: GOOD_CODE });
    expect(again.status).toBe(409);
  });

  it('resumes on {completed: true} once the person has signed in themselves', async () => {
    await submitAndWait('mfa-2', 'WAITING_MFA');
    const session = stack.world().sessionOf('mfa-2');
    if (session) session.signedIn = true; // done in the live view
    const res = await post('/jobs/mfa-2/mfa', { completed: true });
    expect(res.status).toBe(200);
    await until('mfa-2', 'WAITING_APPROVAL');
    const entry = (await ledger().readJob(TENANT_A, 'mfa-2')).entries.find((e) => e.type === 'mfa-completed');
    expect(entry?.detail).toMatchObject({ application: 'shop', method: 'confirmed' });
  });

  it('lets the job open a new session and ask again when the waiting session has ended (409)', async () => {
    const first = await submitAndWait('mfa-3', 'WAITING_MFA');
    const session = stack.world().sessionOf('mfa-3');
    if (session) session.ended = true;
    const res = await post('/jobs/mfa-3/mfa', { code: GOOD_CODE });
    expect(res.status).toBe(409);
    expect(res.json.error.code).toBe('session_lost');
    const again = await until(
      'mfa-3',
      (j) => j.status === 'WAITING_MFA' && j.wait?.requestedAt !== first.wait?.requestedAt,
    );
    expect(again.sessions.shop?.sessionId).not.toBe(session?.sessionId);
    expect((await post('/jobs/mfa-3/mfa', { code: GOOD_CODE })).status).toBe(200);
  });

  it.each([
    [{}, 400],
    [{ code: '1' }, 400],
    [{ code: GOOD_CODE, completed: true }, 400],
    [{ completed: false }, 400],
  ])('refuses the body %j with %i', async (body, status) => {
    const res = await post('/jobs/mfa-1/mfa', body);
    expect(res.status).toBe(status);
  });

  it('answers 409 for a job that is not waiting for a sign-in', async () => {
    await submitAndWait('plain-1');
    const res = await post('/jobs/plain-1/mfa', { code: GOOD_CODE });
    expect(res.status).toBe(409);
    expect(res.json.error.code).toBe('not_waiting');
  });
});

describe('POST /jobs/{jobId}/cancel', () => {
  it('stops the execution, records who cancelled, ends the sessions; repeating it is harmless', async () => {
    const waiting = await submitAndWait('can-1');
    const session = stack.world().sessionOf('can-1');
    expect(session?.ended).toBe(false);
    const res = await post('/jobs/can-1/cancel');
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ cancelled: true, job: { status: 'CANCELLED', wait: null } });
    expect(await executionStatus(waiting)).toBe('ABORTED');
    expect(session?.ended).toBe(true);
    const { entries } = await ledger().readJob(TENANT_A, 'can-1');
    // The cancellation, then the end of the job's session (with what the provider says it used).
    expect(entries.slice(-2)).toMatchObject([
      { type: 'cancelled', actor: expect.stringMatching(/^blk_/) },
      { type: 'session-ended', sessionId: session?.sessionId, detail: { endedBy: 'engine' } },
    ]);
    const again = await post('/jobs/can-1/cancel');
    expect(again.status).toBe(200);
    expect(again.json.cancelled).toBe(false);
    const types = await entryTypes('can-1');
    expect(types.filter((t) => t === 'cancelled')).toHaveLength(1);
    expect(types.filter((t) => t === 'session-ended')).toHaveLength(1);
    const decide = await post('/jobs/can-1/decisions', { step: 'place-order', decision: 'approve' });
    expect(decide.status).toBe(409);
    expect(stack.world().orders.has(await orderKey('can-1'))).toBe(false);
  });

  it('answers 409 for a job that has finished, 403 without the submitter role', async () => {
    await until('dec-1', 'SUCCEEDED');
    const res = await post('/jobs/dec-1/cancel');
    expect(res.status).toBe(409);
    expect(res.json.error.code).toBe('job_finished');
    expect((await post('/jobs/dec-1/cancel', undefined, stack.key('aApprover'))).status).toBe(403);
  });
});

describe('Another tenant', () => {
  let targets: Promise<Job[]> | undefined;
  // One job waiting for approval and one waiting for MFA: every route would have something to change.
  const jobs = (): Promise<Job[]> =>
    (targets ??= (async () => [
      await submitAndWait('xt-approval'),
      await submitAndWait('mfa-xt', 'WAITING_MFA'),
    ])());

  it.each([
    ['GET', '/jobs/{id}', undefined],
    ['GET', '/jobs/{id}/ledger', undefined],
    ['POST', '/jobs/{id}/decisions', { step: 'place-order', decision: 'approve' }],
    ['POST', '/jobs/{id}/decisions', { step: 'open-cart', decision: 'reject' }],
    ['POST', '/jobs/{id}/mfa', { code: GOOD_CODE }],
    ['POST', '/jobs/{id}/mfa', { completed: true }],
    ['POST', '/jobs/{id}/cancel', undefined],
  ])('gets 404 for %s %s, exactly as for a missing job, and changes nothing', async (method, path, body) => {
    for (const job of await jobs()) {
      const before = await ledger().readJob(TENANT_A, job.jobId);
      const as = (id: string) =>
        call(stack.url(), method, path.replace('{id}', id), {
          key: stack.key('b'),
          ...(body ? { body } : {}),
        });
      const res = await as(job.jobId);
      const missing = await as('no-such-job');
      expect(res.status).toBe(404);
      expect(missing.status).toBe(404);
      expect(res.json.error).toEqual({
        ...missing.json.error,
        message: missing.json.error.message.replace('no-such-job', job.jobId),
      });
      expect(await ledger().readJob(TENANT_A, job.jobId)).toEqual(before);
      expect(stack.world().sessionOf(job.jobId)?.ended).toBe(false);
    }
  });
});

describe('A sign-in that does not hold', () => {
  it('is signed in again a few times at no cost, then spends the retry budget and fails, instead of looping', async () => {
    const res = await post('/jobs', order('loop-1'));
    expect(res.status).toBe(202);
    const failed = await until('loop-1', 'FAILED');
    expect(failed.failure?.reason).toBe('retry-budget-exhausted');
    const { entries } = await ledger().readJob(TENANT_A, 'loop-1');
    const signIns = entries.filter((e) => e.type === 'reauth' && e.step === 'open-cart');
    // Up to MAX_SIGN_INS_PER_STEP at no cost (plus the one in flight when the limit was seen).
    expect(signIns.length).toBeGreaterThanOrEqual(MAX_SIGN_INS_PER_STEP);
    expect(signIns.length).toBeLessThanOrEqual(MAX_SIGN_INS_PER_STEP + 1);
    const failures = entries.filter((e) => e.type === 'step-failed');
    expect(failures.length).toBe(failed.retryBudget);
    expect(failures.every((f) => String(f.detail?.reason).includes('sign-ins'))).toBe(true);
    expect(entries.some((e) => e.type === 'step-completed')).toBe(false);
  });
});
