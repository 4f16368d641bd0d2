import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createApiKeyStore } from '../../../lambdas/lib/auth/api-keys.ts';
import { executionNamePrefix } from '../../../lambdas/lib/engine/executions.ts';
import { useEngineStack } from '../../support/engine-stack.ts';
import { sleep, TENANT } from '../../support/fixtures.ts';
import { waitForJob } from '../../support/jobs.ts';
import { keyOf } from '../../support/records.ts';
import { call as callApi } from './support/http.ts';

/**
 * The HTTP API as a client meets it: the local server over loopback in front of the real
 * stack (real ASL, real handlers, DynamoDB Local, real Chromium, the demo sites). Three jobs
 * on three shop accounts run side by side: approve-to-success, cancel mid-run, MFA handoff.
 */
const getEngine = useEngineStack();
const checkout = JSON.parse(
  readFileSync(new URL('../../../demo/jobs/checkout.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;

interface Reply {
  status: number;
  body: Record<string, unknown>;
  text: string;
}

/** An HTTP call to the stack's API with a key (the shared client, its JSON body as `body`). */
async function call(key: string, method: string, path: string, body?: unknown): Promise<Reply> {
  const res = await callApi(getEngine().stack.apiUrl as string, method, path, {
    key,
    ...(body === undefined ? {} : { body }),
  });
  return { status: res.status, text: res.text, body: (res.json ?? {}) as Record<string, unknown> };
}

const jobOf = (r: Reply): Record<string, unknown> => r.body.job as Record<string, unknown>;

async function pollStatus(
  key: string,
  jobId: string,
  until: (job: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 240_000;
  for (;;) {
    const job = jobOf(await call(key, 'GET', `/jobs/${jobId}`));
    if (until(job)) return job;
    if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(String(job.status)) || Date.now() > deadline) {
      throw new Error(
        `job ${jobId} ended or timed out in ${String(job.status)}: ${JSON.stringify(job).slice(0, 600)}`,
      );
    }
    await sleep(300);
  }
}

describe('HTTP API on the real local stack', () => {
  it('submits, shows, approves and finishes jobs; cancels one mid-run; resumes one after an MFA code', async () => {
    const engine = getEngine();
    const { stack } = engine;
    const key = stack.demoApiKey;
    const other = (
      await createApiKeyStore({ doc: stack.doc, tableName: stack.tableName }).create('other-tenant', [
        'submitter',
        'approver',
        'admin',
      ])
    ).apiKey;

    const approveJob = { ...checkout, jobId: 'http-approve' };
    const cancelJob = { ...checkout, jobId: 'http-cancel', accounts: { shop: 'acct_demo_shop_totp' } };
    const mfaJob = { ...checkout, jobId: 'http-mfa', accounts: { shop: 'acct_demo_shop_sms' } };

    // Submission: 202, a repeat is 200 with one execution, a conflicting body 409.
    const first = await call(key, 'POST', '/jobs', approveJob);
    expect(first.status).toBe(202);
    expect(await call(key, 'POST', '/jobs', approveJob)).toMatchObject({ status: 200 });
    const conflict = await call(key, 'POST', '/jobs', {
      ...approveJob,
      inputs: { ...(checkout.inputs as object), search: 'pen' },
    });
    expect(conflict.status).toBe(409);
    expect((conflict.body.error as { code: string }).code).toBeTruthy();
    expect(
      stack.sfn
        .listExecutions()
        .filter((e) => e.name.startsWith(executionNamePrefix(TENANT, 'http-approve'))),
    ).toHaveLength(1);
    expect((await call(key, 'POST', '/jobs', cancelJob)).status).toBe(202);
    expect((await call(key, 'POST', '/jobs', mfaJob)).status).toBe(202);

    // The SMS account's sign-in waits for a person; a wrong code leaves it waiting.
    await waitForJob(engine, 'http-mfa', ({ job }) => job.status === 'WAITING_MFA', {
      timeoutMs: 240_000,
      what: 'WAITING_MFA',
    });
    const wrong = await call(key, 'POST', '/jobs/http-mfa/mfa', { code: '000000' });
    expect(wrong.status).toBe(422);
    expect(jobOf(await call(key, 'GET', '/jobs/http-mfa')).status).toBe('WAITING_MFA');
    const code = await engine.shop.latestCode('alan@example.com');
    expect(code).toMatch(/^\d{6}$/);
    expect((await call(key, 'POST', '/jobs/http-mfa/mfa', { code })).status).toBe(200);

    // Cancel the TOTP account's job while it runs: it stops, its session ends, no order.
    const running = await pollStatus(
      key,
      'http-cancel',
      (j) => j.status === 'RUNNING' && Number(j.stepsCompleted) >= 3,
    );
    const sessionId = (running.sessions as Record<string, { sessionId?: string }>).shop?.sessionId;
    expect(sessionId).toBeTruthy();
    const cancelled = await call(key, 'POST', '/jobs/http-cancel/cancel');
    expect(cancelled.status).toBe(200);
    expect(jobOf(cancelled).status).toBe('CANCELLED');
    expect((await call(key, 'POST', '/jobs/http-cancel/cancel')).status).toBe(200);
    expect(stack.anchor.session(sessionId ?? '')?.status).toBe('completed');

    // The first job waits for approval: the view names the wait, never its token.
    const waiting = await pollStatus(key, 'http-approve', (j) => j.status === 'WAITING_APPROVAL');
    expect(waiting.wait).toMatchObject({ kind: 'approval', step: 'place-order' });
    const view = await call(key, 'GET', '/jobs/http-approve');
    const stored = await stack.ledger.getJob(TENANT, 'http-approve');
    expect(view.text).not.toContain(stored.wait?.taskToken as string);

    // Another tenant sees nothing and changes nothing, on every job-scoped route.
    const before = await stack.ledger.readJob(TENANT, 'http-approve');
    const missing = await call(key, 'GET', '/jobs/no-such-job');
    expect(missing.status).toBe(404);
    // Another tenant's job answers as a job that does not exist: the same status and code.
    const notFound = (missing.body.error as { code: string }).code;
    expect(notFound).toBe('not_found');
    for (const [method, path, body] of [
      ['GET', '/jobs/http-approve', undefined],
      ['GET', '/jobs/http-approve/ledger', undefined],
      ['POST', '/jobs/http-approve/decisions', { step: 'place-order', decision: 'approve' }],
      ['POST', '/jobs/http-approve/mfa', { code: '123456' }],
      ['POST', '/jobs/http-approve/cancel', undefined],
    ] as const) {
      const reply = await call(other, method, path, body);
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect((reply.body.error as { code: string }).code).toBe(notFound);
    }
    expect(await stack.ledger.readJob(TENANT, 'http-approve')).toEqual(before);

    // Approve: recorded with who decided, then the job runs to a verified finish; a repeat resumes nothing.
    expect(
      (await call(key, 'POST', '/jobs/http-approve/decisions', { step: 'place-order', decision: 'approve' }))
        .status,
    ).toBe(200);
    const again = await call(key, 'POST', '/jobs/http-approve/decisions', {
      step: 'place-order',
      decision: 'approve',
    });
    expect(again.status).toBe(200);
    expect(again.body.resumed).toBe(false);
    await pollStatus(key, 'http-approve', (j) => j.status === 'SUCCEEDED');
    const ledger = await call(key, 'GET', '/jobs/http-approve/ledger');
    const entries = ledger.body.entries as {
      type: string;
      step?: string;
      detail?: Record<string, unknown>;
    }[];
    const approvalAt = entries.findIndex((e) => e.type === 'approval-recorded' && e.step === 'place-order');
    const intentAt = entries.findIndex((e) => e.type === 'step-started' && e.step === 'place-order');
    expect(approvalAt).toBeGreaterThan(-1);
    expect(intentAt).toBeGreaterThan(approvalAt);
    expect(entries.at(-1)?.type).toBe('succeeded');

    // The MFA job goes on to its approval and finishes too.
    await pollStatus(key, 'http-mfa', (j) => j.status === 'WAITING_APPROVAL');
    expect(
      (await call(key, 'POST', '/jobs/http-mfa/decisions', { step: 'place-order', decision: 'approve' }))
        .status,
    ).toBe(200);
    await pollStatus(key, 'http-mfa', (j) => j.status === 'SUCCEEDED');
    const mfaLedger = (await call(key, 'GET', '/jobs/http-mfa/ledger')).text;
    expect(mfaLedger).not.toContain(code as string);

    // The shop's own record: one order per finished job, none for the cancelled one.
    const writes = await engine.shop.writes();
    expect(writes.countsByKey[await keyOf(stack, 'http-approve', 'place-order')]).toBe(1);
    expect(writes.countsByKey[await keyOf(stack, 'http-mfa', 'place-order')]).toBe(1);
    expect(writes.countsByKey[await keyOf(stack, 'http-cancel', 'place-order')]).toBeUndefined();
  }, 600_000);
});
