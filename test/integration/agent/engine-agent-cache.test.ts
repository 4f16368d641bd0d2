/**
 * The action cache on the local stack (the real ASL, RunStep in its esbuild bundle, the cache
 * in DynamoDB Local under RunStep's own IAM policy): a second job of crm-contact-agent@1 with
 * other inputs runs its agent step with zero model calls and verifies, and its completion
 * entry says so (the counters of the step). A served write whose answer the CRM drops is
 * settled by Reconcile's probe, and the entry it ran from stays: the next job hits it.
 */
import { describe, expect, it } from 'vitest';
import { submitJob } from '../../../lambdas/lib/api/jobs/submit.ts';
import { handleApiEvent } from '../../../lambdas/lib/api/router.ts';
import type { LedgerEntry } from '../../../lambdas/lib/ledger/types.ts';
import { useEngineStack } from '../../support/engine-stack.ts';
import { PERSON } from '../../support/fixtures.ts';
import { runToSuccess } from '../../support/jobs.ts';

const engine = useEngineStack({ env: { BELAY_AGENT_LOCAL_LATENCY_MS: '0' } });

async function submitAgentJob(jobId: string, inputs: Record<string, string>): Promise<void> {
  await submitJob(
    engine().api,
    PERSON,
    { jobId, playbook: 'crm-contact-agent@1', inputs, accounts: { crm: 'acct_demo_crm' }, model: 'local' },
    undefined,
  );
}

/** `GET /jobs/{jobId}/ledger` through the API's handler, as the person who submitted the job. */
async function ledgerOverApi(jobId: string): Promise<Record<string, unknown>> {
  const path = `/jobs/${jobId}/ledger`;
  const res = await handleApiEvent(engine().api, {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: {},
    isBase64Encoded: false,
    requestContext: {
      requestId: 'r1',
      routeKey: '$default',
      stage: '$default',
      timeEpoch: 0,
      http: { method: 'GET', path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 't' },
      authorizer: {
        lambda: { tenantId: PERSON.tenantId, roles: PERSON.roles.join(','), keyId: PERSON.keyId },
      },
    },
  });
  expect(res.statusCode).toBe(200);
  return JSON.parse(res.body as string) as Record<string, unknown>;
}

const ofStep = (entries: readonly LedgerEntry[], type: string) =>
  entries.filter((e) => e.step === 'update-contact' && e.type === type);

describe('Engine: the action cache across jobs', () => {
  it('runs the second job of the playbook, with other inputs, with zero model calls; it verifies', {
    timeout: 240_000,
  }, async () => {
    const e = engine();
    await submitAgentJob('cache-first', {
      customerId: 'C-1003',
      contactName: 'Mei Chen-Ward',
      phone: '+44 117 496 0999',
    });
    const first = await runToSuccess(e, 'cache-first', { timeoutMs: 100_000 });
    expect(first.job.status).toBe('SUCCEEDED');
    expect(ofStep(first.entries, 'step-completed')[0]?.detail?.agent).toMatchObject({
      modelCalls: 4,
      cachedActions: 0,
      cache: 'miss',
    });

    await submitAgentJob('cache-second', {
      customerId: 'C-1002',
      contactName: 'Oskar Lindqvist',
      phone: '+46 8 555 0142',
    });
    const second = await runToSuccess(e, 'cache-second', { timeoutMs: 100_000 });
    expect(second.job.status).toBe('SUCCEEDED');
    const chosen = ofStep(second.entries, 'action-chosen');
    expect(chosen.map((c) => c.detail?.describe)).toEqual([
      'fill textbox "Contact name" = "Oskar Lindqvist"',
      'fill textbox "Phone" = "+46 8 555 0142"',
      'click button "Save record"',
      'done: the form was filled and submitted',
    ]);
    expect(chosen.every((c) => c.detail?.source === 'cache' && c.cost.modelTokens === 0)).toBe(true);
    const completed = ofStep(second.entries, 'step-completed')[0];
    expect(completed?.evidence).toMatchObject({ customerId: 'C-1002', contact: 'Oskar Lindqvist' });
    expect(completed?.detail?.agent).toEqual({
      modelCalls: 0,
      cachedActions: 4,
      heals: 0,
      failedReplayActions: 0,
      usage: 0,
      modelUsd: 0,
      cache: 'hit',
    });
    // The job's counters as the API shows them: per agent step and in total.
    expect((await ledgerOverApi('cache-first')).agent).toMatchObject({
      total: { modelCalls: 4, cachedActions: 0 },
      steps: { 'update-contact': { cache: 'miss' } },
    });
    expect((await ledgerOverApi('cache-second')).agent).toEqual({
      steps: { 'update-contact': completed?.detail?.agent },
      total: { modelCalls: 0, cachedActions: 4, heals: 0, failedReplayActions: 0, usage: 0, modelUsd: 0 },
    });
  });

  it('keeps the entry a served write ran from when the CRM drops its answer and Reconcile finds it done', {
    timeout: 300_000,
  }, async () => {
    const e = engine();
    // An entry to serve (written by this job, or hit if the test above left one).
    await submitAgentJob('drop-seed', {
      customerId: 'C-1001',
      contactName: 'Ana Ribeiro',
      phone: '+351 21 555 0188',
    });
    expect((await runToSuccess(e, 'drop-seed', { timeoutMs: 100_000 })).job.status).toBe('SUCCEEDED');

    // The CRM commits the next save and drops its answer.
    // (A status line, then the connection closes: the page gets no confirmation, and the browser
    // has nothing to send again. After a reset the write guard may see the browser send it again;
    // that path records the attempt unconfirmed the same way: write-path.test.ts.)
    await e.crm.setFaults({ dropNextWriteResponse: true, dropMode: 'status-line' });
    await submitAgentJob('drop-served', {
      customerId: 'C-1002',
      contactName: 'Lena Park',
      phone: '+44 20 7946 0321',
    });
    const dropped = await runToSuccess(e, 'drop-served', { timeoutMs: 150_000 });
    expect(dropped.job.status).toBe('SUCCEEDED');
    expect(ofStep(dropped.entries, 'action-chosen').every((c) => c.detail?.source === 'cache')).toBe(true);
    const unconfirmed = ofStep(dropped.entries, 'step-unconfirmed');
    expect(unconfirmed).toHaveLength(1);
    expect(unconfirmed[0]?.detail?.cache).toMatchObject({ served: { entryId: expect.any(String) } });
    expect(ofStep(dropped.entries, 'step-completed')[0]?.evidence).toMatchObject({
      contact: 'Lena Park',
      reconciled: true,
    });

    // Not demoted: the next job runs from the same entry with no model call.
    await submitAgentJob('drop-after', {
      customerId: 'C-1003',
      contactName: 'Ruth Okafor',
      phone: '+44 161 496 0777',
    });
    const after = await runToSuccess(e, 'drop-after', { timeoutMs: 100_000 });
    expect(after.job.status).toBe('SUCCEEDED');
    expect(ofStep(after.entries, 'step-completed')[0]?.detail?.agent).toMatchObject({
      modelCalls: 0,
      cache: 'hit',
    });
  });
});
