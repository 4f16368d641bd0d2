import { execFile } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { TOOL_NAMES } from '../../../lambdas/lib/api/mcp/names.ts';
import { call, order, waitForJob } from '../api/support/http.ts';
import { TENANT_A, TENANT_B, useApiStack } from '../api/support/stack.ts';
import { connect, type McpConnection, structured, TRANSPORTS, type Transport, toolError } from './clients.ts';

/**
 * Belay's MCP server, both transports, over the API test stack (DynamoDB Local, the real ASL
 * on the local Step Functions runner, the real handler cores; browser and shop in memory):
 * who may do what. Tenant A lets its agents answer people's waits (BELAY_MCP_ANSWER_TENANTS),
 * tenant B does not. Another tenant's key sees nothing; a submitter key cannot approve; the
 * key that submitted a job cannot answer its waits even where agents may; bad arguments get
 * the schema's message and change nothing; an agent step's question goes to its submitter.
 */
const stack = useApiStack({ mcpAnswerTenants: [TENANT_A] });
const ledger = () => stack.deps().engine.ledger;

const open: McpConnection[] = [];
afterAll(async () => {
  for (const c of open.splice(0)) await c.close();
});

async function mcp(
  transport: Transport,
  key: 'a' | 'aApprover' | 'aSubmitter' | 'b',
): Promise<McpConnection> {
  const c = await connect(transport, stack.url(), stack.key(key));
  open.push(c);
  return c;
}

async function tool(c: McpConnection, name: string, args: Record<string, unknown>): Promise<unknown> {
  return c.client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
}

describe.each(TRANSPORTS)('MCP over %s', (transport) => {
  const id = (name: string) => `mcp-${transport}-${name}`;

  it('lists the tools with their JSON schemas, and the resources', async () => {
    const c = await mcp(transport, 'a');
    const { tools } = await c.client.listTools();
    expect(tools.map((t) => t.name)).toEqual([...TOOL_NAMES]);
    const submit = tools.find((t) => t.name === 'submit_job');
    expect(submit?.inputSchema).toMatchObject({
      type: 'object',
      additionalProperties: false,
      required: ['playbook', 'inputs'],
    });
    expect(Object.keys(submit?.inputSchema.properties ?? {})).toContain('jobId');
    const { resourceTemplates } = await c.client.listResourceTemplates();
    expect(resourceTemplates.map((r) => r.uriTemplate).sort()).toEqual([
      'belay://jobs/{jobId}/screenshots/{name}',
      'belay://jobs/{jobId}/timeline',
    ]);
    const catalogue = await c.client.readResource({ uri: 'belay://playbooks' });
    expect(JSON.parse(String((catalogue.contents[0] as { text: string }).text)).playbooks[0].id).toBe(
      'test-order@1',
    );
  });

  it('refuses bad arguments with the schema’s message and creates nothing', async () => {
    const c = await mcp(transport, 'a');
    const before = (await ledger().listJobs(TENANT_A, { limit: 100 })).jobs.length;
    const bad = toolError(
      await tool(c, 'submit_job', { jobId: id('bad'), playbook: 'Test Order', inputs: {} }),
    );
    expect(bad.text).toContain('use name@version, e.g. checkout@1');
    const extra = toolError(
      await tool(c, 'submit_job', { playbook: 'test-order@1', inputs: {}, surprise: 1 }),
    );
    expect(extra.text).toMatch(/surprise/);
    // Past the tool's schema, the playbook's own (the API's answer, its fields named).
    const inputs = toolError(
      await tool(c, 'submit_job', {
        jobId: id('bad-inputs'),
        playbook: 'test-order@1',
        inputs: { sku: 'mug', quantity: 0 },
      }),
    );
    expect(inputs).toMatchObject({ status: 422, code: 'invalid_job' });
    expect(inputs.text).toContain('inputs.sku: a SKU such as MUG-001');
    expect((await ledger().listJobs(TENANT_A, { limit: 100 })).jobs.length).toBe(before);
    const wait = toolError(await tool(c, 'wait_for_job', { jobId: id('bad'), timeoutSeconds: 0 }));
    expect(wait.text).toMatch(/timeoutSeconds/);
  });

  it('submits idempotently, follows with progress, and leaves the approval to a person', async () => {
    const agent = await mcp(transport, 'a');
    const submitted = structured(await tool(agent, 'submit_job', order(id('flow'))));
    expect(submitted).toMatchObject({ created: true, job: { jobId: id('flow'), status: 'QUEUED' } });
    const again = structured(await tool(agent, 'submit_job', order(id('flow'))));
    expect(again).toMatchObject({ created: false, job: { jobId: id('flow') } });

    const progress: { progress: number; total?: number; message?: string }[] = [];
    const waited = structured(
      await agent.client.callTool(
        { name: 'wait_for_job', arguments: { jobId: id('flow'), timeoutSeconds: 15 } },
        undefined,
        {
          timeout: 60_000,
          onprogress: (p) => progress.push(p),
        },
      ),
    );
    expect(waited.outcome).toBe('waiting_for_person');
    expect(waited.job).toMatchObject({
      status: 'WAITING_APPROVAL',
      stepsCompleted: 1,
      stepCount: 2,
      wait: {
        kind: 'approval',
        step: 'place-order',
        answeredBy: { by: expect.stringContaining('approver') },
      },
      evidence: { 'open-cart': { sku: 'MUG-001', quantity: 2 } },
    });
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.at(-1)).toMatchObject({ progress: 1, total: 2 });
    for (let i = 1; i < progress.length; i++)
      expect(progress[i]?.progress).toBeGreaterThan(progress[i - 1]?.progress ?? -1);

    // The agent's own key holds the approver role and the tenant lets agents answer, yet it
    // submitted the job: refused, and nothing is recorded.
    const own = toolError(
      await tool(agent, 'answer_wait', { jobId: id('flow'), step: 'place-order', decision: 'approve' }),
    );
    expect(own).toMatchObject({ status: 403, code: 'own_job' });
    // A submitter-only key may not approve at all.
    const submitter = await mcp(transport, 'aSubmitter');
    const role = toolError(
      await tool(submitter, 'answer_wait', { jobId: id('flow'), step: 'place-order', decision: 'approve' }),
    );
    expect(role).toMatchObject({ status: 403, code: 'forbidden' });
    const { job, entries } = await ledger().readJob(TENANT_A, id('flow'));
    expect(job.status).toBe('WAITING_APPROVAL');
    expect(entries.some((e) => e.type === 'approval-recorded')).toBe(false);

    // A person approves through the API (another key); the agent's next wait sees it through.
    const approved = await call(stack.url(), 'POST', `/jobs/${id('flow')}/decisions`, {
      key: stack.key('aApprover'),
      body: { step: 'place-order', decision: 'approve' },
    });
    expect(approved.status).toBe(200);
    const done = structured(await tool(agent, 'wait_for_job', { jobId: id('flow'), timeoutSeconds: 15 }));
    expect(done).toMatchObject({
      outcome: 'finished',
      job: { status: 'SUCCEEDED', stepsCompleted: 2, wait: null },
    });
    expect((done.job as { evidence: Record<string, unknown> }).evidence['place-order']).toMatchObject({
      orderId: expect.any(String),
    });
    // The card number in the evidence is masked, as the API masks it.
    expect(JSON.stringify(done)).not.toContain('4242 4242 4242 4242');
    const timeline = await agent.client.readResource({ uri: `belay://jobs/${id('flow')}/timeline` });
    const types = JSON.parse(String((timeline.contents[0] as { text: string }).text)).entries.map(
      (e: { type: string }) => e.type,
    );
    expect(types).toContain('approval-recorded');
    expect(types).toContain('succeeded');
  });

  it('lets another approver key answer where the tenant allows agents to', async () => {
    const agent = await mcp(transport, 'a');
    structured(await tool(agent, 'submit_job', order(id('other-approver'))));
    await waitForJob(ledger(), TENANT_A, id('other-approver'), 'WAITING_APPROVAL');
    const approver = await mcp(transport, 'aApprover');
    const answered = structured(
      await tool(approver, 'answer_wait', {
        jobId: id('other-approver'),
        step: 'place-order',
        decision: 'approve',
        comment: 'ok',
      }),
    );
    expect(answered).toMatchObject({ decision: 'approve', resumed: true });
    await waitForJob(ledger(), TENANT_A, id('other-approver'), 'SUCCEEDED');
  });

  it('shows another tenant nothing, changes nothing, and answers nothing where agents may not', async () => {
    const agent = await mcp(transport, 'a');
    structured(await tool(agent, 'submit_job', order(id('private'))));
    await waitForJob(ledger(), TENANT_A, id('private'), 'WAITING_APPROVAL');
    const before = await ledger().readJob(TENANT_A, id('private'));
    const other = await mcp(transport, 'b');
    const calls: [string, Record<string, unknown>][] = [
      ['get_job', { jobId: id('private') }],
      ['wait_for_job', { jobId: id('private'), timeoutSeconds: 1 }],
      ['cancel_job', { jobId: id('private') }],
      ['answer_wait', { jobId: id('private'), step: 'place-order', decision: 'approve' }],
      ['answer_question', { jobId: id('private'), step: 'place-order', answer: 'yes' }],
    ];
    for (const [name, args] of calls) {
      const refused = toolError(await tool(other, name, args));
      expect(refused, name).toMatchObject({ status: 404, code: 'not_found' });
    }
    const listed = structured(await tool(other, 'list_jobs', {}));
    expect(JSON.stringify(listed)).not.toContain(id('private'));
    await expect(
      other.client.readResource({ uri: `belay://jobs/${id('private')}/timeline` }),
    ).rejects.toThrow(/not found/);
    expect(await ledger().readJob(TENANT_A, id('private'))).toEqual(before);

    // Tenant B's agents may not answer people's waits, even on B's own jobs with an approver key.
    structured(
      await tool(other, 'submit_job', { ...order(id('b-own')), accounts: { shop: 'acct_globex_shop' } }),
    );
    await waitForJob(ledger(), TENANT_B, id('b-own'), 'WAITING_APPROVAL');
    const off = toolError(
      await tool(other, 'answer_wait', { jobId: id('b-own'), step: 'place-order', decision: 'approve' }),
    );
    expect(off).toMatchObject({ status: 403, code: 'agent_answers_off' });
    expect((await ledger().getJob(TENANT_B, id('b-own'))).status).toBe('WAITING_APPROVAL');
    structured(await tool(other, 'cancel_job', { jobId: id('b-own') }));
    structured(await tool(agent, 'cancel_job', { jobId: id('private') }));
  });

  it("takes an agent step's question to its submitter, and only to its submitter", async () => {
    const agent = await mcp(transport, 'a');
    stack.world().asks.add(id('question'));
    structured(await tool(agent, 'submit_job', order(id('question'))));
    const waited = structured(
      await tool(agent, 'wait_for_job', { jobId: id('question'), timeoutSeconds: 15 }),
    );
    expect(waited.job).toMatchObject({
      status: 'WAITING_REVIEW',
      wait: {
        kind: 'review',
        step: 'open-cart',
        reason: 'agent-question',
        question: 'Which colour of mug: blue or grey?',
      },
    });
    // Another submitter key of the tenant did not submit this job: not its question to answer.
    const otherSubmitter = await mcp(transport, 'aSubmitter');
    const notMine = toolError(
      await tool(otherSubmitter, 'answer_question', {
        jobId: id('question'),
        step: 'open-cart',
        answer: 'grey',
      }),
    );
    expect(notMine).toMatchObject({ status: 403, code: 'not_submitter' });
    const answered = structured(
      await tool(agent, 'answer_question', {
        jobId: id('question'),
        step: 'open-cart',
        answer: 'blue, please',
      }),
    );
    expect(answered).toMatchObject({ step: 'open-cart', replayed: false, resumed: true });
    const next = structured(await tool(agent, 'wait_for_job', { jobId: id('question'), timeoutSeconds: 15 }));
    expect(next.job).toMatchObject({ status: 'WAITING_APPROVAL', wait: { kind: 'approval' } });
    expect(stack.world().answers.get(id('question'))).toBe('blue, please');
    // An approval is not a question: answer_question refuses it, and the job keeps waiting.
    const approval = toolError(
      await tool(agent, 'answer_question', {
        jobId: id('question'),
        step: 'place-order',
        answer: 'go ahead',
      }),
    );
    expect(approval).toMatchObject({ status: 409, code: 'not_a_question' });
    expect((await ledger().getJob(TENANT_A, id('question'))).status).toBe('WAITING_APPROVAL');
    structured(await tool(agent, 'cancel_job', { jobId: id('question') }));
  });
});

/**
 * The MCP Inspector's command line (`@modelcontextprotocol/inspector-cli`), a client nobody here
 * wrote, lists the same tools over both transports. It reads its own package.json relative to
 * the working directory, so it runs from its build folder.
 */
describe('The MCP Inspector CLI', () => {
  const inspector = resolve('node_modules/@modelcontextprotocol/inspector-cli/build/index.js');
  const run = async (
    args: string[],
    env: Record<string, string> = {},
  ): Promise<{ tools: { name: string }[] }> => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [inspector, ...args, '--method', 'tools/list'],
      {
        cwd: dirname(inspector),
        env: { PATH: process.env.PATH ?? '', ...env },
        timeout: 60_000,
      },
    );
    return JSON.parse(stdout) as { tools: { name: string }[] };
  };

  it('lists the tools over Streamable HTTP, with the key as a header', async () => {
    const listed = await run([`${stack.url()}/mcp`, '--header', `Authorization: Bearer ${stack.key('a')}`]);
    expect(listed.tools.map((t) => t.name)).toEqual([...TOOL_NAMES]);
  });

  it('lists the tools over stdio, starting belay mcp itself', async () => {
    const listed = await run([process.execPath, resolve('tools/cli/bin/belay.js'), 'mcp'], {
      BELAY_URL: stack.url(),
      BELAY_KEY: stack.key('a'),
    });
    expect(listed.tools.map((t) => t.name)).toEqual([...TOOL_NAMES]);
  });
});
