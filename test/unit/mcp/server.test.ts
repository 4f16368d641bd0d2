import { readFile } from 'node:fs/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { JobView } from '../../../lambdas/lib/api/jobs/schemas.ts';
import { SubmitJobBodySchema } from '../../../lambdas/lib/api/jobs/schemas.ts';
import type { ApiReply, ApiRequest, BelayApi } from '../../../lambdas/lib/api/mcp/api.ts';
import { ApiUnreachableError } from '../../../lambdas/lib/api/mcp/errors.ts';
import { TOOL_NAMES } from '../../../lambdas/lib/api/mcp/names.ts';
import { createMcpServer, MCP_SERVER_INFO } from '../../../lambdas/lib/api/mcp/server.ts';
import { ZERO_COST } from '../../../lambdas/lib/ledger/types.ts';
import {
  listedByServer,
  MCP_GUIDE,
  renderReference,
  withReference,
} from '../../../tools/docs/mcp-reference.ts';

/**
 * The MCP server's tools and resources over a scripted API (the routes' answers as the API
 * gives them), through the SDK's client on an in-memory transport: what each tool calls, what
 * it answers, how it refuses, how wait_for_job reports progress. The API itself is the real one
 * in the integration tests (`test/integration/mcp`).
 */

const ZERO = ZERO_COST;

function jobView(over: Partial<JobView> = {}): JobView {
  const stepsCompleted = over.stepsCompleted ?? 0;
  return {
    jobId: 'j1',
    playbook: 'checkout@1',
    status: 'RUNNING',
    step:
      stepsCompleted < 3
        ? {
            number: stepsCompleted + 1,
            of: 3,
            id: `s${stepsCompleted + 1}`,
            title: `Step ${stepsCompleted + 1}`,
          }
        : null,
    stepsCompleted,
    stepCount: 3,
    wait: null,
    inputs: {},
    accounts: {},
    approvals: [],
    retryBudget: 3,
    retriesUsed: 0,
    sessions: {},
    cost: { ...ZERO, browserSeconds: 12 },
    createdAt: '2026-11-01T10:00:00.000Z',
    updatedAt: '2026-11-01T10:00:00.000Z',
    ...over,
  };
}

const json = (status: number, body: unknown): ApiReply => ({
  status,
  contentType: 'application/json',
  json: body,
});

interface Harness {
  client: Client;
  calls: ApiRequest[];
  /** Virtual time spent sleeping in wait_for_job. */
  slept: () => number;
}

const open: Client[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

async function harness(
  answer: (req: ApiRequest, n: number) => ApiReply | Promise<ApiReply>,
  maxWaitSeconds = 3600,
): Promise<Harness> {
  const calls: ApiRequest[] = [];
  let clock = 1_000_000;
  let slept = 0;
  const api: BelayApi = async (req) => {
    calls.push(req);
    return answer(req, calls.length);
  };
  const server = createMcpServer({
    api,
    wait: {
      now: () => clock,
      sleep: async (ms) => {
        clock += ms;
        slept += ms;
      },
      pollMs: 1000,
      maxWaitSeconds,
    },
    onUnexpectedError: () => undefined,
  });
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'test', version: '1' });
  await server.connect(a);
  await client.connect(b);
  open.push(client);
  return { client, calls, slept: () => slept };
}

describe('MCP server: its tool list', () => {
  it('lists the tools in order, each input schema an object from the API’s zod schemas', async () => {
    const { client } = await harness(() => json(500, {}));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([...TOOL_NAMES]);
    for (const t of tools) expect(t.inputSchema.type, t.name).toBe('object');
    const submit = tools.find((t) => t.name === 'submit_job');
    const expected = z.toJSONSchema(z.strictObject(SubmitJobBodySchema.shape), {
      target: 'draft-7',
      io: 'input',
    });
    expect(submit?.inputSchema.properties).toEqual((expected as { properties: unknown }).properties);
    expect(submit?.annotations).toMatchObject({ idempotentHint: true, readOnlyHint: false });
    expect(tools.find((t) => t.name === 'get_job')?.annotations).toMatchObject({ readOnlyHint: true });
  });

  it('names itself with the package’s version', async () => {
    const pkg = JSON.parse(await readFile(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(MCP_SERVER_INFO).toEqual({ name: 'belay', version: pkg.version });
  });

  it('is what the MCP guide’s tables say (npm run docs:mcp regenerates them)', async () => {
    const page = await readFile(MCP_GUIDE, 'utf8');
    const listed = await listedByServer();
    expect(withReference(page, renderReference(listed))).toBe(page);
    for (const name of TOOL_NAMES) expect(page).toContain(`| \`${name}\` |`);
  });
});

describe('MCP server: tools over the API', () => {
  it('submit_job posts the request as it is and answers short; a repeat says created: false', async () => {
    const h = await harness((req, n) =>
      req.method === 'POST'
        ? json(n === 1 ? 202 : 200, { job: jobView({ status: 'QUEUED' }), links: {} })
        : json(404, {}),
    );
    const args = { jobId: 'j1', playbook: 'checkout@1', inputs: { search: 'mug' } };
    const first = await h.client.callTool({ name: 'submit_job', arguments: args });
    expect(first.isError).toBeFalsy();
    expect(first.structuredContent).toMatchObject({
      created: true,
      job: { jobId: 'j1', status: 'QUEUED', stepCount: 3 },
    });
    const again = await h.client.callTool({ name: 'submit_job', arguments: args });
    expect(again.structuredContent).toMatchObject({ created: false });
    expect(h.calls).toEqual([
      { method: 'POST', path: '/jobs', body: args },
      { method: 'POST', path: '/jobs', body: args },
    ]);
  });

  it('refuses arguments its schema refuses, with the schema’s message, and calls nothing', async () => {
    const h = await harness(() => json(500, {}));
    const bad = await h.client.callTool({
      name: 'submit_job',
      arguments: { playbook: 'checkout', inputs: {} },
    });
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.content)).toContain('use name@version, e.g. checkout@1');
    const both = await h.client.callTool({
      name: 'answer_wait',
      arguments: { jobId: 'j1', step: 's1', decision: 'approve', code: '123456' },
    });
    expect(JSON.stringify(both.content)).toContain(
      'send decision (with step) for an approval or a review, or code for a sign-in',
    );
    const noStep = await h.client.callTool({
      name: 'answer_wait',
      arguments: { jobId: 'j1', decision: 'approve' },
    });
    expect(JSON.stringify(noStep.content)).toContain('name the step the job waits at');
    const badId = await h.client.callTool({ name: 'get_job', arguments: { jobId: '../keys' } });
    expect(badId.isError).toBe(true);
    expect(h.calls).toEqual([]);
  });

  it("answers the API's refusals as tool errors with its code, message and fields; a 5xx says nothing more", async () => {
    const h = await harness((req) =>
      req.path === '/jobs'
        ? json(422, {
            error: {
              code: 'invalid_job',
              message: 'the job does not fit checkout@1: see details for the fields to fix',
              details: [{ field: 'inputs.search', message: 'Required' }],
            },
          })
        : json(500, {
            error: { code: 'internal_error', message: 'the request failed on our side; retry later' },
          }),
    );
    const refused = await h.client.callTool({
      name: 'submit_job',
      arguments: { playbook: 'checkout@1', inputs: {} },
    });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toEqual({
      error: {
        status: 422,
        code: 'invalid_job',
        message: 'the job does not fit checkout@1: see details for the fields to fix',
        details: [{ field: 'inputs.search', message: 'Required' }],
      },
    });
    expect((refused.content as { text: string }[])[0]?.text).toBe(
      'the job does not fit checkout@1: see details for the fields to fix (invalid_job, HTTP 422)\ninputs.search: Required',
    );
    const failed = await h.client.callTool({ name: 'get_job', arguments: { jobId: 'j1' } });
    expect((failed.content as { text: string }[])[0]?.text).toBe(
      'the request failed on our side; retry later (internal_error, HTTP 500)',
    );
  });

  it('says where Belay could not be reached', async () => {
    const h = await harness(() => {
      throw new ApiUnreachableError('http://127.0.0.1:9', 'connect ECONNREFUSED');
    });
    const out = await h.client.callTool({ name: 'list_jobs', arguments: {} });
    expect(out.structuredContent).toMatchObject({ error: { status: 503, code: 'unreachable' } });
    expect(JSON.stringify(out.content)).toContain(
      'cannot reach Belay at http://127.0.0.1:9 (connect ECONNREFUSED)',
    );
  });

  it('get_job adds the ledger: evidence of verified steps, the agent’s question, who may answer, screenshots, dollars', async () => {
    const job = jobView({
      status: 'WAITING_REVIEW',
      stepsCompleted: 1,
      wait: { kind: 'review', step: 's2', reason: 'agent-question', requestedAt: 't', expiresAt: 't2' },
      cost: { ...ZERO, browserSeconds: 100, lambdaInvocations: 4 },
    });
    const entries = [
      { entryId: 'e1', type: 'step-completed', at: 't0', step: 's1', evidence: { cart: 3 }, cost: ZERO },
      {
        entryId: 'e2',
        type: 'action-chosen',
        at: 't1',
        step: 's2',
        detail: { action: { name: 'ask_person', question: 'Blue or grey?' } },
        screenshot: { url: '/jobs/j1/screenshots/x.jpg', reason: 'before-review' },
        cost: ZERO,
      },
    ];
    const h = await harness((req) =>
      req.path.endsWith('/ledger')
        ? json(200, { jobId: 'j1', status: job.status, entries })
        : json(200, { job, links: {} }),
    );
    const out = await h.client.callTool({ name: 'get_job', arguments: { jobId: 'j1' } });
    expect(out.structuredContent).toMatchObject({
      status: 'WAITING_REVIEW',
      step: { number: 2, of: 3 },
      wait: {
        kind: 'review',
        question: 'Blue or grey?',
        answeredBy: {
          how: expect.arrayContaining(['answer_question (this MCP server, with the submitting key)']),
        },
      },
      evidence: { s1: { cart: 3 } },
      screenshots: [{ uri: 'belay://jobs/j1/screenshots/x.jpg', step: 's2', reason: 'before-review' }],
      resources: { timeline: 'belay://jobs/j1/timeline' },
    });
    expect((out.structuredContent as { cost: { usd: number } }).cost.usd).toBeGreaterThan(0);
  });

  it.each([
    [
      { jobId: 'j1', code: '123456' },
      { method: 'POST', path: '/jobs/j1/mfa', body: { code: '123456' } },
    ],
    [
      { jobId: 'j1', step: 's2', decision: 'reject', comment: 'no' },
      { method: 'POST', path: '/jobs/j1/decisions', body: { step: 's2', decision: 'reject', comment: 'no' } },
    ],
  ])('answer_wait %j calls %j', async (args, expected) => {
    const h = await harness(() => json(200, { ok: true }));
    await h.client.callTool({ name: 'answer_wait', arguments: args });
    expect(h.calls).toEqual([expected]);
  });

  it('list_jobs passes its filters as the query; cancel_job and answer_question call their routes', async () => {
    const h = await harness((req) =>
      req.path.startsWith('/jobs?')
        ? json(200, { jobs: [jobView()], nextCursor: 'c2' })
        : req.path.endsWith('/cancel')
          ? json(200, { job: jobView({ status: 'CANCELLED' }), links: {}, cancelled: true })
          : json(200, { jobId: 'j1', step: 's2', answeredBy: 'blk_1', replayed: false, resumed: true }),
    );
    const listed = await h.client.callTool({
      name: 'list_jobs',
      arguments: { status: 'RUNNING', limit: 5, cursor: 'c1' },
    });
    expect(listed.structuredContent).toEqual({
      jobs: [
        {
          jobId: 'j1',
          playbook: 'checkout@1',
          status: 'RUNNING',
          progress: '0/3',
          createdAt: '2026-11-01T10:00:00.000Z',
        },
      ],
      nextCursor: 'c2',
    });
    await h.client.callTool({ name: 'cancel_job', arguments: { jobId: 'j1' } });
    await h.client.callTool({
      name: 'answer_question',
      arguments: { jobId: 'j1', step: 's2', answer: 'blue' },
    });
    expect(h.calls).toEqual([
      { method: 'GET', path: '/jobs?status=RUNNING&limit=5&cursor=c1' },
      { method: 'POST', path: '/jobs/j1/cancel' },
      { method: 'POST', path: '/jobs/j1/answers', body: { step: 's2', answer: 'blue' } },
    ]);
  });
});

describe('MCP server: wait_for_job', () => {
  const ledger = json(200, { jobId: 'j1', status: 'WAITING_APPROVAL', entries: [] });

  it('reports each step completed as progress, never going back, and returns when a person is needed', async () => {
    // Twice at step 1, then two steps further and waiting: a notification for each of the two.
    const seen = [0, 0];
    const h = await harness((req, n) => {
      if (req.path.endsWith('/ledger')) return ledger;
      const done = seen[n - 1];
      return done === undefined
        ? json(200, {
            job: jobView({
              stepsCompleted: 2,
              status: 'WAITING_APPROVAL',
              wait: { kind: 'approval', step: 's3', requestedAt: 't', expiresAt: 't2' },
            }),
            links: {},
          })
        : json(200, { job: jobView({ stepsCompleted: done }), links: {} });
    });
    const progress: { progress: number; total?: number; message?: string }[] = [];
    const out = await h.client.callTool(
      { name: 'wait_for_job', arguments: { jobId: 'j1', timeoutSeconds: 60 } },
      undefined,
      {
        onprogress: (p) => progress.push(p),
      },
    );
    expect(out.structuredContent).toMatchObject({
      outcome: 'waiting_for_person',
      job: { status: 'WAITING_APPROVAL' },
    });
    expect(progress.map((p) => p.progress)).toEqual([0, 1, 2]);
    expect(progress[0]).toEqual({ progress: 0, total: 3, message: 'step 1/3 Step 1 (RUNNING)' });
    expect(progress[1]).toEqual({ progress: 1, total: 3, message: '1/3 steps completed' });
    expect(progress[2]?.message).toBe('step 3/3 Step 3 (WAITING_APPROVAL, waiting for approval at s3)');
    expect(h.slept()).toBe(2000);
  });

  it('gives up at the caller’s timeout (the job goes on), and at the transport’s limit when that is shorter', async () => {
    const h = await harness(() => json(200, { job: jobView(), links: {} }), 20);
    const short = await h.client.callTool({
      name: 'wait_for_job',
      arguments: { jobId: 'j1', timeoutSeconds: 3 },
    });
    expect(short.structuredContent).toMatchObject({
      outcome: 'timed_out',
      waitedSeconds: 3,
      job: { status: 'RUNNING' },
    });
    expect(short.structuredContent).not.toHaveProperty('cappedAtSeconds');
    const long = await h.client.callTool({
      name: 'wait_for_job',
      arguments: { jobId: 'j1', timeoutSeconds: 600 },
    });
    expect(long.structuredContent).toMatchObject({
      outcome: 'timed_out',
      waitedSeconds: 20,
      cappedAtSeconds: 20,
    });
  });

  it('returns at once for a finished job, with its evidence', async () => {
    const h = await harness((req) =>
      req.path.endsWith('/ledger')
        ? json(200, {
            entries: [
              {
                entryId: 'e',
                type: 'step-completed',
                at: 't',
                step: 's3',
                evidence: { orderId: 'o1' },
                cost: ZERO,
              },
            ],
          })
        : json(200, { job: jobView({ stepsCompleted: 3, status: 'SUCCEEDED' }), links: {} }),
    );
    const out = await h.client.callTool({
      name: 'wait_for_job',
      arguments: { jobId: 'j1', timeoutSeconds: 60 },
    });
    expect(out.structuredContent).toMatchObject({
      outcome: 'finished',
      waitedSeconds: 0,
      job: { status: 'SUCCEEDED', step: null, evidence: { s3: { orderId: 'o1' } } },
    });
    expect(h.slept()).toBe(0);
  });
});

describe('MCP server: resources', () => {
  it('reads a screenshot as an image blob, a timeline as JSON, and says the API’s 404', async () => {
    const h = await harness((req) =>
      req.path === '/jobs/j1/screenshots/a.jpg'
        ? { status: 200, contentType: 'image/jpeg', base64: Buffer.from('jpeg').toString('base64') }
        : req.path === '/jobs/j1/ledger'
          ? json(200, { jobId: 'j1', entries: [] })
          : json(404, { error: { code: 'not_found', message: 'job j2 not found' } }),
    );
    const shot = await h.client.readResource({ uri: 'belay://jobs/j1/screenshots/a.jpg' });
    expect(shot.contents[0]).toEqual({
      uri: 'belay://jobs/j1/screenshots/a.jpg',
      mimeType: 'image/jpeg',
      blob: Buffer.from('jpeg').toString('base64'),
    });
    const timeline = await h.client.readResource({ uri: 'belay://jobs/j1/timeline' });
    expect(JSON.parse((timeline.contents[0] as { text: string }).text)).toEqual({ jobId: 'j1', entries: [] });
    await expect(h.client.readResource({ uri: 'belay://jobs/j2/timeline' })).rejects.toThrow(
      'job j2 not found (not_found, HTTP 404)',
    );
  });
});
