/**
 * The Bedrock, Anthropic and OpenAI adapters through their real SDKs (the AI SDK providers),
 * against a loopback server speaking each wire format: the request's shape (path, auth, the
 * eight tools and nothing else, a forced single tool call, the untrusted-page system prompt),
 * the tool call parsed into an action, tokens and dollars, errors and throttling.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ModelCallError,
  NoActionChosenError,
  NoProbeAnswerError,
} from '../../../lambdas/lib/agent/errors.ts';
import { type AgentModelsConfig, policyFor } from '../../../lambdas/lib/agent/models.ts';
import type { Observation, ProbeObservation } from '../../../lambdas/lib/agent/policy.ts';
import {
  type ModelServer,
  type Recorded,
  type Scripted,
  sigV4Matches,
  startModelServer,
  WIRE,
} from '../../support/model-servers.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const AK = 'AKIDEXAMPLE';
const SK = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
const TOOLS = ['click', 'fill', 'select', 'check', 'press', 'goto', 'done', 'ask_person'];

const OBSERVATION: Observation = {
  goal: 'Set the contact name to Ada and save.',
  fields: { 'Contact name': 'Ada' },
  url: 'http://127.0.0.1:8802/customers/C-1003/edit',
  snapshot: '- textbox "Contact name": Mei\n- button "Save record"',
  history: [],
  answers: [],
};
const FILL = { target: { role: 'textbox', name: 'Contact name' }, value: 'Ada' };
const PROBE: ProbeObservation = {
  question: 'Does the record show contact "Ada" and phone "{{secret:phone}}"?',
  url: 'http://127.0.0.1:8802/customers/C-1003',
  snapshot: '- term: Contact\n- definition: Ada\n- term: Phone\n- definition: {{secret:phone}}',
};

let server: ModelServer;
const config = (): AgentModelsConfig => ({
  allowed: [
    'anthropic:claude-haiku-4-5',
    'openai:gpt-5-mini',
    'bedrock:anthropic.claude-haiku-4-5-20251001-v1:0',
    'bedrock:amazon.nova-lite-v1:0',
  ],
  localLatencyMs: 0,
  anthropic: { apiKey: 'sk-ant-test', baseURL: `${server.url}/v1` },
  openai: { apiKey: 'sk-openai-test', baseURL: `${server.url}/v1` },
  bedrock: {
    region: 'eu-west-1',
    baseURL: server.url,
    credentials: { accessKeyId: AK, secretAccessKey: SK },
  },
});

interface Case {
  name: string;
  spec: string;
  openaiApi?: 'chat';
  ok: (name: string, input: object) => Scripted;
  err: (status: number, type: string, headers?: Record<string, string>) => Scripted;
  throttled: string;
  invalid: string;
  path: string;
  tools: (r: Recorded) => string[];
  forced: (r: Recorded) => unknown;
  auth: (r: Recorded) => void;
}

const CASES: Case[] = [
  {
    name: 'Anthropic Messages',
    spec: 'anthropic:claude-haiku-4-5',
    ok: WIRE.anthropic.call,
    err: WIRE.anthropic.error,
    throttled: 'rate_limit_error',
    invalid: 'invalid_request_error',
    path: '/v1/messages',
    tools: (r) => (r.body.tools as { name: string }[]).map((t) => t.name),
    forced: (r) => r.body.tool_choice,
    auth: (r) => expect(r.headers['x-api-key']).toBe('sk-ant-test'),
  },
  {
    name: 'OpenAI Responses',
    spec: 'openai:gpt-5-mini',
    ok: WIRE.openaiResponses.call,
    err: WIRE.openai.error,
    throttled: 'rate_limit_error',
    invalid: 'invalid_request_error',
    path: '/v1/responses',
    tools: (r) => (r.body.tools as { name: string }[]).map((t) => t.name),
    forced: (r) => [r.body.tool_choice, r.body.parallel_tool_calls],
    auth: (r) => expect(r.headers.authorization).toBe('Bearer sk-openai-test'),
  },
  {
    name: 'OpenAI Chat Completions',
    spec: 'openai:gpt-5-mini',
    openaiApi: 'chat',
    ok: WIRE.openaiChat.call,
    err: WIRE.openai.error,
    throttled: 'rate_limit_error',
    invalid: 'invalid_request_error',
    path: '/v1/chat/completions',
    tools: (r) => (r.body.tools as { function: { name: string } }[]).map((t) => t.function.name),
    forced: (r) => [r.body.tool_choice, r.body.parallel_tool_calls],
    auth: (r) => expect(r.headers.authorization).toBe('Bearer sk-openai-test'),
  },
  {
    name: 'Bedrock Converse (Claude)',
    spec: 'bedrock:anthropic.claude-haiku-4-5-20251001-v1:0',
    ok: WIRE.bedrock.call,
    err: WIRE.bedrock.error,
    throttled: 'ThrottlingException',
    invalid: 'ValidationException',
    path: '/model/anthropic.claude-haiku-4-5-20251001-v1%3A0/converse',
    tools: (r) =>
      ((r.body.toolConfig as { tools: { toolSpec: { name: string } }[] }).tools ?? []).map(
        (t) => t.toolSpec.name,
      ),
    forced: (r) =>
      (r.body.additionalModelRequestFields as { tool_choice?: unknown } | undefined)?.tool_choice,
    auth: (r) => expect(sigV4Matches(r, SK)).toEqual({ ok: true, region: 'eu-west-1', service: 'bedrock' }),
  },
];

const FORCED: Record<string, unknown> = {
  'Anthropic Messages': { type: 'any', disable_parallel_tool_use: true },
  'OpenAI Responses': ['required', false],
  'OpenAI Chat Completions': ['required', false],
  'Bedrock Converse (Claude)': { type: 'any', disable_parallel_tool_use: true },
};

beforeAll(async () => {
  server = await startModelServer();
});
afterAll(async () => {
  await server?.close();
});
beforeEach(() => {
  server.requests.length = 0;
});

const policy = (c: Case) => {
  const base = config();
  return policyFor(
    c.spec,
    c.openaiApi && base.openai ? { ...base, openai: { ...base.openai, api: c.openaiApi } } : base,
    'update-contact',
  );
};

describe.each(CASES)('Model adapter: $name', (c) => {
  it('sends the eight tools, a forced single call and the untrusted-page prompt; parses the call and tokens', async () => {
    server.script([c.ok('fill', FILL)]);
    const decision = await policy(c).decide(OBSERVATION);
    expect(decision.action).toEqual({ name: 'fill', ...FILL });
    expect(decision.tokens).toEqual({ input: 321, output: 17 });
    expect(decision.model).toBe(c.spec);
    expect(server.requests).toHaveLength(1);
    const r = server.requests[0] as Recorded;
    expect(r.path).toBe(c.path);
    c.auth(r);
    expect(c.tools(r)).toEqual(TOOLS);
    expect(c.forced(r)).toEqual(FORCED[c.name]);
    expect(r.rawBody).toContain('untrusted content from a website');
    expect(r.rawBody).toContain('textbox \\"Contact name\\": Mei');
  });

  it('retries a throttled call once it may (the identical request), then decides', async () => {
    server.script([c.err(429, c.throttled, { 'retry-after': '0' }), c.ok('done', { summary: 'ok' })]);
    const decision = await policy(c).decide(OBSERVATION);
    expect(decision.action).toEqual({ name: 'done', summary: 'ok' });
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]?.rawBody).toBe(server.requests[0]?.rawBody);
  });

  it('fails a refused call once, not retryable, without the request in its message', async () => {
    server.script([c.err(400, c.invalid)]);
    const err = await policy(c)
      .decide(OBSERVATION)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelCallError);
    expect((err as ModelCallError).retryable).toBe(false);
    expect((err as ModelCallError).status).toBe(400);
    expect((err as Error).message).not.toContain('Contact name');
    expect(server.requests).toHaveLength(1);
  });

  it('refuses a tool that is not offered', async () => {
    server.script([c.ok('evaluate', { script: 'document.cookie' })]);
    await expect(policy(c).decide(OBSERVATION)).rejects.toBeInstanceOf(NoActionChosenError);
  });

  it('answers a probe with the one tool answer_probe, forced, and the untrusted-page prompt; no browser tool', async () => {
    server.script([
      c.ok('answer_probe', { status: 'done', evidence: 'Ada', reason: 'the record shows both' }),
    ]);
    const decision = await policy(c).answerProbe(PROBE);
    expect(decision.answer).toEqual({ status: 'done', evidence: 'Ada', reason: 'the record shows both' });
    expect(decision.tokens).toEqual({ input: 321, output: 17 });
    const r = server.requests[0] as Recorded;
    expect(r.path).toBe(c.path);
    expect(c.tools(r)).toEqual(['answer_probe']);
    expect(c.forced(r)).toEqual(FORCED[c.name]);
    expect(r.rawBody).toContain('untrusted content from a website');
    expect(r.rawBody).toContain('{{secret:phone}}');
  });

  it('refuses a probe answer that is not one (a browser tool, an unknown status)', async () => {
    server.script([c.ok('click', { target: { role: 'button', name: 'Save record' } })]);
    await expect(policy(c).answerProbe(PROBE)).rejects.toBeInstanceOf(NoProbeAnswerError);
    server.script([c.ok('answer_probe', { status: 'probably' })]);
    await expect(policy(c).answerProbe(PROBE)).rejects.toBeInstanceOf(NoProbeAnswerError);
  });
});

describe('Model adapters: configuration', () => {
  it('refuses a model the deployment does not offer', () => {
    expect(() => policyFor('anthropic:claude-opus-4-1', config(), 's')).toThrow(/not offered/);
  });
});
