import { describe, expect, it } from 'vitest';
import { parseAction } from '../../../lambdas/lib/agent/actions.ts';
import { valueScope } from '../../../lambdas/lib/agent/cache/placeholders.ts';
import { onAllowedDomain } from '../../../lambdas/lib/agent/execute.ts';
import { controlsOf, nextLocalAction } from '../../../lambdas/lib/agent/local-policy.ts';
import { parseModelSpec } from '../../../lambdas/lib/agent/model-spec.ts';
import { substituteSecrets } from '../../../lambdas/lib/agent/observe.ts';
import { planReplay } from '../../../lambdas/lib/agent/replay.ts';
import { buildCostReport } from '../../../lambdas/lib/api/reports/cost.ts';
import { modelCallUsd, modelRate, priceCost } from '../../../lambdas/lib/cost/rates.ts';
import { actionRecord } from '../../../lambdas/lib/engine/step-actions.ts';
import type { Job, LedgerEntry } from '../../../lambdas/lib/ledger/types.ts';
import { ZERO_COST } from '../../../lambdas/lib/ledger/types.ts';
import { render } from '../../../lambdas/lib/playbooks/template.ts';

const SNAPSHOT = [
  '- heading "Edit Cobalt Cycles" [level=1]',
  '- textbox "Contact name": Mei Chen',
  '- textbox "Phone": +44 117 496 0003',
  '- checkbox "Subscribed" [checked]',
  '- combobox "Country": United Kingdom',
  '- button "Save record"',
].join('\n');

const observation = (fields: Record<string, string>, history: string[] = []) => ({
  goal: 'g',
  fields,
  url: 'http://127.0.0.1/x',
  snapshot: SNAPSHOT,
  history,
  answers: [],
});

describe('Function: local policy', () => {
  it('reads controls from an aria snapshot', () => {
    expect(controlsOf(SNAPSHOT).slice(1, 4)).toEqual([
      { role: 'textbox', name: 'Contact name', value: 'Mei Chen', states: [] },
      { role: 'textbox', name: 'Phone', value: '+44 117 496 0003', states: [] },
      { role: 'checkbox', name: 'Subscribed', value: '', states: ['checked'] },
    ]);
  });

  it.each([
    [
      { 'Contact name': 'Ada' },
      [],
      { name: 'fill', target: { role: 'textbox', name: 'Contact name' }, value: 'Ada' },
    ],
    [{ 'contact NAME': 'Mei Chen' }, [], { name: 'click', target: { role: 'button', name: 'Save record' } }],
    [
      { Subscribed: 'no' },
      [],
      { name: 'check', target: { role: 'checkbox', name: 'Subscribed' }, checked: false },
    ],
    [
      { Country: 'Ireland' },
      [],
      { name: 'select', target: { role: 'combobox', name: 'Country' }, option: 'Ireland' },
    ],
    [{}, ['click button "Save record"'], { name: 'done', summary: 'the form was filled and submitted' }],
    [
      { Missing: 'x' },
      [],
      { name: 'ask_person', question: 'I cannot find the field "Missing" on this page.' },
    ],
  ])('fields %o, history %o -> %o', (fields, history, want) => {
    expect(nextLocalAction(observation(fields, history))).toEqual(want);
  });
});

describe('Function: parseAction', () => {
  it('accepts only the listed actions with their arguments and roles', () => {
    expect(
      parseAction({ name: 'fill', target: { role: 'textbox', name: 'A' }, value: 'v', extra: 1 }),
    ).toEqual({
      name: 'fill',
      target: { role: 'textbox', name: 'A' },
      value: 'v',
    });
    expect(parseAction({ name: 'fill', target: { role: 'textbox', name: 'A' } })).toBeUndefined();
    expect(parseAction({ name: 'click', target: { role: 'img', name: 'A' } })).toBeUndefined();
    expect(parseAction({ name: 'evaluate', script: 'x' })).toBeUndefined();
  });
});

describe('Function: planReplay', () => {
  it('replays in order, a heal replacing the action it heals, answers apart', () => {
    const click = (name: string) => ({ name: 'click', target: { role: 'button', name } });
    const { planned, answers } = planReplay([
      { type: 'action-chosen', detail: { n: 2, action: click('B') }, at: 't' },
      { type: 'action-chosen', detail: { n: 1, action: click('A') }, at: 't' },
      { type: 'action-healed', detail: { n: 2, action: click('B2') }, at: 't' },
      { type: 'answer', detail: { answer: 'yes' }, at: 't' },
      { type: 'action-chosen', detail: { n: 3, action: { name: 'rm -rf' } }, at: 't' },
    ]);
    expect(planned.map((p) => [p.n, p.type, (p.action as { target: { name: string } }).target.name])).toEqual(
      [
        [1, 'action-chosen', 'A'],
        [2, 'action-healed', 'B2'],
      ],
    );
    expect(answers).toEqual(['yes']);
  });
});

describe('Function: actionRecord', () => {
  const entry = (type: string, detail: Record<string, unknown> = {}, step = 's'): LedgerEntry =>
    ({ type, step, detail, at: 't', seq: 1, cost: ZERO_COST }) as unknown as LedgerEntry;
  it('keeps the step own action entries and clears them after a failed attempt', () => {
    const record = actionRecord(
      [
        entry('action-chosen', { n: 1 }),
        entry('step-failed'),
        entry('action-chosen', { n: 1, name: 'x' }),
        entry('action-chosen', { n: 9 }, 'other'),
      ],
      's',
    );
    expect(record.map((r) => r.detail)).toEqual([{ n: 1, name: 'x' }]);
  });
  it("adds a person's answer only to a question the step asked", () => {
    const approve = entry('review-recorded', { decision: 'approve', comment: 'use the work phone' });
    expect(actionRecord([approve], 's')).toEqual([]);
    const asked = entry('action-chosen', {
      n: 1,
      action: { name: 'ask_person', question: 'q' },
    });
    expect(actionRecord([asked, approve], 's').at(-1)).toMatchObject({
      type: 'answer',
      detail: { answer: 'use the work phone' },
    });
  });
});

describe('Function: placeholders, templates, domains, specs', () => {
  it('replaces secret placeholders by their values at execution, and leaves one it has no value for', () => {
    const secrets = { password: 'hunter2-long', pin: 'hunter2' };
    expect(substituteSecrets('typed {{secret:password}} and {{secret:pin}}', secrets)).toBe(
      'typed hunter2-long and hunter2',
    );
    expect(substituteSecrets('{{secret:other}}', secrets)).toBe('{{secret:other}}');
  });
  it('fills inputs and evidence, leaves unknowns and secrets visible (missing: keep)', () => {
    const evidence: Record<string, Record<string, string>> = { s1: { orderId: 'O-1' } };
    const scope = { inputs: { a: 'x', n: 3 }, evidence: (s: string) => evidence[s] };
    const text = '{{inputs.a}} {{inputs.n}} {{evidence.s1.orderId}} {{inputs.b}} {{secret:k}}';
    expect(render(text, scope, 'keep')).toBe('x 3 O-1 {{inputs.b}} {{secret:k}}');
    // The declarative form's default: a missing value renders empty.
    expect(render(text, scope)).toBe('x 3 O-1  ');
    // One language: filters and whitespace work in agent goals as in declarative steps.
    expect(
      render('{{ inputs.a | upper }} {{inputs.q | url}}', { ...scope, inputs: { a: 'x', q: 'a b' } }, 'keep'),
    ).toBe('X a%20b');
    expect(render('{{credentials.password}}', scope, 'keep')).toBe('{{credentials.password}}');
    // An agent's goal is filled from the job's values alone: no id the action cache would keep.
    const values = valueScope({ inputs: { a: 'x' }, evidence: {} });
    expect(render('{{inputs.a}} {{idempotencyKey}} {{jobId}}', values, 'keep')).toBe(
      'x {{idempotencyKey}} {{jobId}}',
    );
  });
  it.each([
    ['http://127.0.0.1:8801/x', true],
    ['https://crm.example/x', true],
    ['https://eu.crm.example/x', true],
    ['https://crm.example.attacker.test/', false],
    ['javascript:alert(1)', false],
    ['not a url', false],
  ])('%s on the allowlist: %s', (url, ok) => {
    expect(onAllowedDomain(url, ['127.0.0.1', 'crm.example'])).toBe(ok);
  });
  it('parses model specs', () => {
    expect(parseModelSpec('bedrock:anthropic.claude-sonnet-4-5-20250929-v1:0')).toEqual({
      spec: 'bedrock:anthropic.claude-sonnet-4-5-20250929-v1:0',
      provider: 'bedrock',
      id: 'anthropic.claude-sonnet-4-5-20250929-v1:0',
    });
    expect(parseModelSpec('gemini:pro')).toBeUndefined();
  });
});

describe('Function: model rates', () => {
  it('prices per model, inference profiles as their model, unlisted ones high, local free', () => {
    expect(modelCallUsd('anthropic:claude-haiku-4-5', { input: 1_000_000, output: 100_000 })).toBeCloseTo(
      1.5,
    );
    expect(modelRate('bedrock:us.anthropic.claude-haiku-4-5-20251001-v1:0')).toMatchObject({ listed: true });
    expect(modelRate('openai:gpt-9-unknown')).toMatchObject({ listed: false, rate: { inputPerMillion: 15 } });
    expect(modelCallUsd('local', { input: 5, output: 5 })).toBe(0);
  });
  it('counts model dollars once, as priced when spent', () => {
    const priced = priceCost({ ...ZERO_COST, modelTokens: 1_000_000, modelUsd: 2.5 });
    expect(priced.modelTokens).toBe(0);
    expect(priced.modelUsd).toBe(2.5);
    expect(priced.total).toBeCloseTo(2.5);
  });
});

describe('Function: buildCostReport models', () => {
  it('splits agent decisions, tokens and dollars by model', () => {
    const decision = (model: string, input: number, output: number, usd: number): LedgerEntry =>
      ({
        type: 'action-chosen',
        step: 's',
        at: 't',
        detail: { model, usage: { input, output } },
        cost: { ...ZERO_COST, modelTokens: input + output, modelUsd: usd },
      }) as unknown as LedgerEntry;
    const job = { status: 'SUCCEEDED', sessions: {}, createdAt: 't' } as unknown as Job;
    const report = buildCostReport({
      tenantId: 't',
      from: 'a',
      to: 'b',
      now: new Date(0),
      jobs: [
        {
          job,
          entries: [
            decision('anthropic:claude-haiku-4-5', 1000, 100, 0.0015),
            decision('anthropic:claude-haiku-4-5', 1000, 100, 0.0015),
            decision('local', 0, 0, 0),
          ],
        },
      ],
    });
    expect(report.models).toEqual({
      'anthropic:claude-haiku-4-5': {
        decisions: 2,
        failedCalls: 0,
        inputTokens: 2000,
        outputTokens: 200,
        usd: 0.003,
      },
      local: { decisions: 1, failedCalls: 0, inputTokens: 0, outputTokens: 0, usd: 0 },
    });
    expect(report.cost.modelUsd).toBeCloseTo(0.003);
  });
});
