/**
 * An agent step on the local stack with a hosted model: the real Anthropic SDK in the RunStep
 * worker talks to a loopback server speaking the Messages API. The model asks a person first:
 * the job waits for a review with the question; the reviewer's comment reaches the model in its
 * next request; the question is not asked again; no request holds the account's password. A call
 * the model answers with no action still costs its tokens, in the ledger and the cost report.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { demoCredentials } from '../../../demo/accounts.ts';
import { decide } from '../../../lambdas/lib/api/jobs/decide.ts';
import { buildCostReport } from '../../../lambdas/lib/api/reports/cost.ts';
import { useEngineStack } from '../../support/engine-stack.ts';
import { PERSON } from '../../support/fixtures.ts';
import { runToSuccess, statusIs, submitContactAgent, waitForJob, waitingAt } from '../../support/jobs.ts';
import { startModelServer, WIRE } from '../../support/model-servers.ts';

const MODEL = 'anthropic:claude-haiku-4-5';
const model = await startModelServer();
afterAll(async () => {
  await model.close();
});

const engine = useEngineStack({
  env: {
    BELAY_AGENT_MODELS: MODEL,
    BELAY_AGENT_ANTHROPIC_API_KEY: 'sk-ant-loopback',
    BELAY_AGENT_ANTHROPIC_BASE_URL: `${model.url}/v1`,
  },
});

describe('Engine: an agent step on a hosted model (Anthropic wire format, loopback)', () => {
  it('asks a person, gives the answer to the model, and completes with one write', {
    timeout: 240_000,
  }, async () => {
    const e = engine();
    const jobId = 'agent-hosted';
    model.script([
      WIRE.anthropic.call('ask_person', { question: 'Should I also change the email?' }),
      WIRE.anthropic.call('fill', { target: { role: 'textbox', name: 'Contact name' }, value: 'Mei Hosted' }),
      WIRE.anthropic.call('fill', { target: { role: 'textbox', name: 'Phone' }, value: '+44 117 496 0999' }),
      WIRE.anthropic.call('click', { target: { role: 'button', name: 'Save record' } }),
      WIRE.anthropic.call('done', { summary: 'saved' }),
    ]);
    await submitContactAgent(e, { jobId, customerId: 'C-1004', contactName: 'Mei Hosted', model: MODEL });
    const waiting = await waitForJob(e, jobId, waitingAt('review', 'update-contact'), { timeoutMs: 120_000 });
    expect(waiting.job.status).toBe('WAITING_REVIEW');
    expect(model.requests).toHaveLength(1);
    const answered = await decide(e.api, PERSON, jobId, {
      step: 'update-contact',
      decision: 'approve',
      comment: 'No, only the contact name and phone.',
    });
    expect(answered.resumed).toBe(true);
    const { job, entries } = await runToSuccess(e, jobId, { timeoutMs: 180_000 });
    expect(job.status).toBe('SUCCEEDED');
    // One request per decision: the question was replayed from the ledger, not asked again.
    expect(model.requests).toHaveLength(5);
    expect(model.requests[1]?.rawBody).toContain('No, only the contact name and phone.');
    const decisions = entries.filter((x) => x.step === 'update-contact' && x.type === 'action-chosen');
    expect(decisions.map((d) => d.detail?.model)).toEqual(Array(5).fill(MODEL));
    // Tokens and dollars per decision, on the entry's cost and the job's.
    expect(decisions[0]?.cost).toMatchObject({ modelTokens: 338 });
    expect(job.cost.modelTokens).toBe(5 * 338);
    expect(job.cost.modelUsd).toBeCloseTo((5 * (321 * 1 + 17 * 5)) / 1e6, 12);
    expect((await e.crm.writes()).count).toBe(1);
    const password = demoCredentials('crm', 'ada@example.com').password;
    for (const r of model.requests) expect(r.rawBody).not.toContain(password);
  });

  it('costs a call that failed after the provider counted its tokens: in the ledger, the job and the cost report', {
    timeout: 300_000,
  }, async () => {
    const e = engine();
    const jobId = 'agent-failed-call';
    const before = model.requests.length;
    const writesBefore = (await e.crm.writes()).count;
    model.script([
      // A model that talks instead of calling a tool: no action, but 412 tokens billed.
      WIRE.anthropic.text('I would rather describe the page than act on it.'),
      WIRE.anthropic.call('fill', { target: { role: 'textbox', name: 'Contact name' }, value: 'Mei Costed' }),
      WIRE.anthropic.call('fill', { target: { role: 'textbox', name: 'Phone' }, value: '+44 117 496 0999' }),
      WIRE.anthropic.call('click', { target: { role: 'button', name: 'Save record' } }),
      WIRE.anthropic.call('done', { summary: 'saved' }),
    ]);
    await submitContactAgent(e, { jobId, customerId: 'C-1002', contactName: 'Mei Costed', model: MODEL });
    const { job, entries } = await runToSuccess(e, jobId, { timeoutMs: 280_000 });
    expect(job.status).toBe('SUCCEEDED');
    expect(model.requests.length - before).toBe(5);
    const failed = entries.filter((x) => x.type === 'model-call-failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]?.detail).toMatchObject({
      purpose: 'decide',
      model: MODEL,
      usage: { input: 400, output: 12 },
    });
    expect(String(failed[0]?.detail?.error)).toContain('NoActionChosenError');
    expect(failed[0]?.cost).toMatchObject({ modelTokens: 412 });
    // The job's cost holds every call's tokens, the failed one's included.
    expect(job.cost.modelTokens).toBe(412 + 4 * 338);
    const report = buildCostReport({
      tenantId: job.tenantId,
      from: job.createdAt,
      to: new Date().toISOString(),
      now: new Date(),
      jobs: [{ job, entries }],
    });
    expect(report.models[MODEL]).toMatchObject({
      decisions: 4,
      failedCalls: 1,
      inputTokens: 400 + 4 * 321,
      outputTokens: 12 + 4 * 17,
    });
    expect(report.agent.modelCalls).toBe(5);
    expect((await e.crm.writes()).count - writesBefore).toBe(1);
  });

  it('fails a job whose model the deployment does not offer, at once and as misconfigured', {
    timeout: 120_000,
  }, async () => {
    const e = engine();
    const jobId = 'agent-model-not-offered';
    const before = model.requests.length;
    await submitContactAgent(e, {
      jobId,
      customerId: 'C-1001',
      contactName: 'Nobody',
      model: 'openai:gpt-5',
    });
    const { job } = await waitForJob(e, jobId, statusIs('FAILED'), { timeoutMs: 100_000 });
    expect(job.failure?.reason).toBe('misconfigured');
    expect(job.retriesUsed).toBe(0);
    expect(model.requests.length).toBe(before);
  });
});
