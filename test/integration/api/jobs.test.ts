import { ListExecutionsCommand } from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import { executionName, executionNamePrefix } from '../../../lambdas/lib/engine/executions.ts';
import { call, order, waitForJob } from './support/http.ts';
import { TENANT_A, TENANT_B, useApiStack } from './support/stack.ts';

/** Submitting jobs and reading them back: POST /jobs, GET /jobs/{jobId}, GET /jobs, GET /jobs/{jobId}/ledger. */

const stack = useApiStack();

const post = (path: string, body: unknown, key = stack.key('a'), headers?: Record<string, string>) =>
  call(stack.url(), 'POST', path, { key, body, ...(headers ? { headers } : {}) });
const get = (path: string, key = stack.key('a')) => call(stack.url(), 'GET', path, { key });

function executionsOf(tenantId: string, jobId: string): number {
  const prefix = executionNamePrefix(tenantId, jobId);
  return stack
    .sfn()
    .listExecutions()
    .filter((e) => e.name.startsWith(prefix)).length;
}

describe('POST /jobs', () => {
  it('creates the job (202, links, Location) and starts one execution', async () => {
    const res = await post('/jobs', order('sub-1'));
    expect(res.status).toBe(202);
    expect(res.json.job).toMatchObject({
      jobId: 'sub-1',
      status: 'QUEUED',
      step: { number: 1, of: 2, id: 'open-cart' },
    });
    expect(res.json.links).toMatchObject({
      self: `${stack.url()}/jobs/sub-1`,
      ledger: `${stack.url()}/jobs/sub-1/ledger`,
    });
    expect(res.headers.get('location')).toBe(`${stack.url()}/jobs/sub-1`);
    expect(res.json.job.tenantId).toBeUndefined();
    expect(executionsOf(TENANT_A, 'sub-1')).toBe(1);
  });

  it('answers a repeat with 200 and the same job, and starts no second execution', async () => {
    const first = await post('/jobs', order('sub-2'));
    const again = await post('/jobs', order('sub-2'));
    expect(first.status).toBe(202);
    expect(again.status).toBe(200);
    expect(again.json.job.createdAt).toBe(first.json.job.createdAt);
    const out = await stack
      .deps()
      .sfn.send(new ListExecutionsCommand({ stateMachineArn: stack.sfn().stateMachineArn }));
    expect(
      out.executions?.filter((e) => e.name === executionName({ ...first.json.job, tenantId: TENANT_A }, 0)),
    ).toHaveLength(1);
    expect(executionsOf(TENANT_A, 'sub-2')).toBe(1);
  });

  it('answers 409 for the same job id with a different request, and changes nothing', async () => {
    await post('/jobs', order('sub-3'));
    const before = await stack.deps().engine.ledger.getJob(TENANT_A, 'sub-3');
    const res = await post('/jobs', order('sub-3', { inputs: { sku: 'MUG-002', quantity: 1 } }));
    expect(res.status).toBe(409);
    expect(res.json.error.code).toBe('job_conflict');
    expect((await stack.deps().engine.ledger.getJob(TENANT_A, 'sub-3')).requestHash).toBe(before.requestHash);
  });

  it('takes the job id from the Idempotency-Key header', async () => {
    const { jobId: _omit, ...body } = order('unused');
    const first = await post('/jobs', body, stack.key('a'), { 'idempotency-key': 'idem-1' });
    const again = await post('/jobs', body, stack.key('a'), { 'idempotency-key': 'idem-1' });
    expect([first.status, again.status]).toEqual([202, 200]);
    expect(first.json.job.jobId).toBe('idem-1');
    const mismatch = await post('/jobs', order('idem-2'), stack.key('a'), { 'idempotency-key': 'idem-3' });
    expect(mismatch.status).toBe(400);
    const bad = await post('/jobs', body, stack.key('a'), { 'idempotency-key': 'has spaces!' });
    expect(bad.status).toBe(400);
    expect(bad.json.error.details[0].field).toBe('header:Idempotency-Key');
  });

  it('gives a job without an id one of its own', async () => {
    const { jobId: _omit, ...body } = order('unused');
    const res = await post('/jobs', body);
    expect(res.status).toBe(202);
    expect(res.json.job.jobId).toMatch(/^job_[0-9a-f]{20}$/);
  });

  it('uses the tenant’s only connected account of an application when none is named', async () => {
    const res = await post('/jobs', order('acct-default', { accounts: undefined }), stack.key('b'));
    expect(res.status).toBe(202);
    expect(res.json.job.accounts).toEqual({ shop: 'acct_globex_shop' });
  });

  it.each([
    ['invalid JSON', '{"playbook": ', 400, 'invalid_json', undefined],
    ['an empty body', '', 400, 'invalid_json', undefined],
    ['a JSON array', '[]', 400, 'invalid_request', '(body)'],
    ['a tenantId in the body', { ...order('v1'), tenantId: TENANT_B }, 400, 'invalid_request', 'tenantId'],
    ['a bad job id', order('bad id!'), 400, 'invalid_request', 'jobId'],
    ['a malformed playbook name', order('v2', { playbook: 'Checkout' }), 400, 'invalid_request', 'playbook'],
    ['inputs that are not an object', order('v3', { inputs: [1] }), 400, 'invalid_request', 'inputs'],
    ['a retry budget out of range', order('v4', { retryBudget: 99 }), 400, 'invalid_request', 'retryBudget'],
    [
      'a deadline that is not a time',
      order('v5', { deadline: 'tomorrow' }),
      400,
      'invalid_request',
      'deadline',
    ],
    ['an unknown playbook', order('v6', { playbook: 'nope@1' }), 422, 'unknown_playbook', 'playbook'],
    [
      'inputs that fail the playbook schema',
      order('v7', { inputs: { sku: 'mug', quantity: 0 } }),
      422,
      'invalid_job',
      'inputs.sku',
    ],
    [
      'an extra input',
      order('v8', { inputs: { sku: 'MUG-001', quantity: 1, card: '4242' } }),
      422,
      'invalid_job',
      'inputs.card',
    ],
    [
      'an approval of a step the playbook lacks',
      order('v9', { approvals: ['pay'] }),
      422,
      'invalid_job',
      'approvals.0',
    ],
    [
      'a deadline in the past',
      order('v10', { deadline: '2001-01-01T00:00:00Z' }),
      422,
      'invalid_job',
      'deadline',
    ],
    [
      'another tenant’s account',
      order('v11', { accounts: { shop: 'acct_globex_shop' } }),
      422,
      'invalid_job',
      'accounts.shop',
    ],
    [
      'an account of another application',
      order('v12', { accounts: { shop: 'acct_acme_crm' } }),
      422,
      'invalid_job',
      'accounts.shop',
    ],
    [
      'a revoked account',
      order('v13', { accounts: { shop: 'acct_acme_old' } }),
      422,
      'invalid_job',
      'accounts.shop',
    ],
    [
      'an application the playbook does not use',
      order('v14', { accounts: { shop: 'acct_acme_shop', crm: 'acct_acme_crm' } }),
      422,
      'invalid_job',
      'accounts.crm',
    ],
    [
      'no account where the tenant has several',
      order('v15', { accounts: {} }),
      422,
      'invalid_job',
      'accounts.shop',
    ],
  ])(
    'refuses %s with the right status and code, naming the field, writing nothing',
    async (_what, body, status, code, field) => {
      const raw = typeof body === 'string' ? body : JSON.stringify(body);
      const res = await call(stack.url(), 'POST', '/jobs', { key: stack.key('a'), raw });
      expect(res.status).toBe(status);
      expect(res.json.error.code).toBe(code);
      if (field) expect(res.json.error.details.map((d: { field: string }) => d.field)).toContain(field);
      const id = typeof body === 'object' && !Array.isArray(body) ? String(body.jobId) : undefined;
      if (id) {
        await expect(stack.deps().engine.ledger.getJob(TENANT_A, id)).rejects.toThrow(/not found|invalid/);
        expect(executionsOf(TENANT_A, id)).toBe(0);
      }
    },
  );

  it('refuses a body over 256 KiB with 413 before reading it all', async () => {
    const res = await post(
      '/jobs',
      order('big', { inputs: { sku: 'MUG-001', quantity: 1, note: 'x'.repeat(300_000) } }),
    );
    expect(res.status).toBe(413);
    expect(res.json.error).toMatchObject({ code: 'payload_too_large', details: { limitBytes: 262_144 } });
    await expect(stack.deps().engine.ledger.getJob(TENANT_A, 'big')).rejects.toThrow();
  });

  it('answers a 1 MiB body with 413 naming the limit, as API Gateway does, not a dropped connection', async () => {
    const res = await post('/jobs/no-such-job/decisions', {
      step: 'x',
      decision: 'approve',
      note: 'x'.repeat(1024 * 1024),
    });
    expect(res.status).toBe(413);
    expect(res.json.error).toMatchObject({ code: 'payload_too_large', details: { limitBytes: 262_144 } });
    expect(res.json.error.message).toContain('262144 bytes');
  });
});

describe('GET /jobs/{jobId}, /jobs, /jobs/{jobId}/ledger', () => {
  it('shows status, step n/N, the pending wait without its token, cost, sessions and times', async () => {
    await post(
      '/jobs',
      order('read-1', { inputs: { sku: 'MUG-001', quantity: 1, note: 'card 4242 4242 4242 4242' } }),
    );
    const job = await waitForJob(stack.deps().engine.ledger, TENANT_A, 'read-1', 'WAITING_APPROVAL');
    const res = await get('/jobs/read-1');
    expect(res.status).toBe(200);
    expect(res.json.job).toMatchObject({
      status: 'WAITING_APPROVAL',
      step: { number: 2, of: 2, id: 'place-order', title: 'Place the order' },
      stepsCompleted: 1,
      wait: {
        kind: 'approval',
        step: 'place-order',
        stepTitle: 'Place the order',
        expiresAt: job.wait?.expiresAt,
      },
      sessions: { shop: { sessionId: job.sessions.shop?.sessionId } },
    });
    expect(res.json.job.cost.stateTransitions).toBeGreaterThan(0);
    expect(res.json.job.createdAt).toBe(job.createdAt);
    expect(res.text).not.toContain(job.wait?.taskToken);
    expect(res.text).not.toContain('taskToken');
    expect(res.text).not.toContain('4242 4242 4242 4242');
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('shows the ledger in order, redacted', async () => {
    await waitForJob(stack.deps().engine.ledger, TENANT_A, 'read-1', 'WAITING_APPROVAL');
    const res = await get('/jobs/read-1/ledger');
    expect(res.status).toBe(200);
    const types = res.json.entries.map((e: { type: string }) => e.type);
    expect(types.slice(0, 4)).toEqual([
      'job-created',
      'session-opened',
      'step-completed',
      'approval-requested',
    ]);
    expect(res.json.entries[2].evidence).toEqual({ sku: 'MUG-001', quantity: 1 });
    expect(res.json.entries[0].tenantId).toBeUndefined();
    expect(res.text).not.toContain('taskToken');
  });

  it('lists jobs newest first, by status, page by page', async () => {
    for (const id of ['list-1', 'list-2', 'list-3']) {
      expect(
        (await post('/jobs', order(id, { accounts: { shop: 'acct_globex_shop' } }), stack.key('b'))).status,
      ).toBe(202);
    }
    const page1 = await get('/jobs?limit=2', stack.key('b'));
    expect(page1.status).toBe(200);
    expect(page1.json.jobs).toHaveLength(2);
    expect(page1.json.nextCursor).toBeDefined();
    const page2 = await get(
      `/jobs?limit=2&cursor=${encodeURIComponent(page1.json.nextCursor)}`,
      stack.key('b'),
    );
    const ids = [...page1.json.jobs, ...page2.json.jobs].map((j: { jobId: string }) => j.jobId);
    expect(ids).toEqual(expect.arrayContaining(['list-1', 'list-2', 'list-3', 'acct-default']));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.indexOf('list-3')).toBeLessThan(ids.indexOf('list-1'));
    expect(ids.every((id) => !id.startsWith('sub-'))).toBe(true);
    await waitForJob(stack.deps().engine.ledger, TENANT_B, 'list-3', 'WAITING_APPROVAL');
    const waiting = await get('/jobs?status=WAITING_APPROVAL&limit=100', stack.key('b'));
    expect(waiting.json.jobs.every((j: { status: string }) => j.status === 'WAITING_APPROVAL')).toBe(true);
  });

  it.each([
    ['status=DONE', 'query.status'],
    ['limit=0', 'query.limit'],
    ['limit=abc', 'query.limit'],
    ['cursor=garbage', 'cursor'],
    ['colour=red', 'query.colour'],
  ])('refuses ?%s with 400 naming %s', async (query, field) => {
    const res = await get(`/jobs?${query}`);
    expect(res.status).toBe(400);
    expect(res.json.error.details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it('refuses another tenant’s cursor', async () => {
    const page = await get('/jobs?limit=1', stack.key('b'));
    const res = await get(`/jobs?limit=1&cursor=${encodeURIComponent(page.json.nextCursor)}`);
    expect(res.status).toBe(400);
  });

  it('answers 404 for a job that does not exist or cannot exist', async () => {
    for (const id of ['missing', 'bad%20id', 'x'.repeat(65)]) {
      const res = await get(`/jobs/${id}`);
      expect(res.status).toBe(404);
      expect(res.json.error.code).toBe('not_found');
    }
  });
});
