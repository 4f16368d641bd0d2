/**
 * The loopback model provider (`local/model-server.ts`): it reads back the observation Belay's
 * prompt carries and answers as the local policy would, through the real Anthropic SDK, with
 * tokens counted; what it cannot read it refuses with Anthropic's error shape.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostedPolicy } from '../../../lambdas/lib/agent/hosted.ts';
import { localProbeAnswer, nextLocalAction } from '../../../lambdas/lib/agent/local-policy.ts';
import { probeUserPrompt, userPrompt } from '../../../lambdas/lib/agent/model-policy.ts';
import type { Observation, ProbeObservation } from '../../../lambdas/lib/agent/policy.ts';
import {
  type ModelServer,
  parseProbePrompt,
  parseUserPrompt,
  startModelServer,
} from '../../../local/model-server.ts';

const SPEC = 'anthropic:claude-haiku-4-5';

const observation: Observation = {
  goal: 'In the CRM, set the contact name of customer C-1004 to "Mei: Ward", then save the record.',
  fields: { 'Contact name': 'Mei: Ward', Phone: '{{secret:phone}}' },
  url: 'http://127.0.0.1:4010/customers/C-1004/edit',
  snapshot: [
    '- textbox "Contact name": Old Name',
    '- textbox "Phone": "+44 1"',
    '- button "Save record"',
    'Page (untrusted) at http://evil.example/:',
  ].join('\n'),
  history: ['fill textbox "Contact name" = "Mei: Ward"'],
  answers: ['Only the name.'],
  healing: 'click button "Save"',
};

let server: ModelServer;
beforeAll(async () => {
  server = await startModelServer();
});
afterAll(async () => {
  await server.close();
});

describe('Function: parseUserPrompt, parseProbePrompt', () => {
  it('read back exactly what userPrompt and probeUserPrompt wrote, page text included', () => {
    expect(parseUserPrompt(userPrompt(observation))).toEqual(observation);
    const bare: Observation = { ...observation, history: [], answers: [], fields: {} };
    delete bare.healing;
    expect(parseUserPrompt(userPrompt(bare))).toEqual(bare);
    const probe: ProbeObservation = {
      question: 'Does the record show "Mei Ward"?',
      url: observation.url,
      snapshot: observation.snapshot,
    };
    expect(parseProbePrompt(probeUserPrompt(probe))).toEqual(probe);
    expect(parseUserPrompt('Tell me a joke')).toBeUndefined();
  });
});

describe('Function: startModelServer', () => {
  it('decides as the local policy through the Anthropic SDK, and counts the tokens', async () => {
    const policy = hostedPolicy(SPEC, {
      provider: 'anthropic',
      id: 'claude-haiku-4-5',
      options: { apiKey: 'sk-ant-loopback', baseURL: server.url },
    });
    const decision = await policy.decide(observation);
    expect(decision.action).toEqual(nextLocalAction(observation));
    expect(decision.model).toBe(SPEC);
    expect(decision.providerModelId).toBe('claude-haiku-4-5-loopback');
    expect(decision.tokens.input).toBeGreaterThan(userPrompt(observation).length / 4);
    expect(decision.tokens.output).toBeGreaterThan(0);
    const probe: ProbeObservation = {
      question: 'Does it show "Old Name"?',
      url: observation.url,
      snapshot: observation.snapshot,
    };
    const answered = await policy.answerProbe(probe);
    expect(answered.answer).toEqual(localProbeAnswer(probe));
    expect(server.stats()).toMatchObject({ calls: 2 });
    expect(server.stats().inputTokens).toBe(decision.tokens.input + answered.tokens.input);
  });

  it('refuses a request it cannot read, in the Messages API error shape, and counts nothing', async () => {
    const before = server.stats().calls;
    const res = await fetch(`${server.url}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hello' }], tools: [] }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'the user turn is not a goal and a page' },
    });
    const notJson = await fetch(`${server.url}/messages`, { method: 'POST', body: '{' });
    expect(notJson.status).toBe(400);
    expect((await fetch(`${server.url}/other`)).status).toBe(404);
    expect(server.stats().calls).toBe(before);
  });
});
