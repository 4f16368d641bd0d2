import { describe, expect, it } from 'vitest';
import { checkedAnswer } from '../../../lambdas/lib/agent/agent-probe.ts';
import { agentCountersByStep } from '../../../lambdas/lib/agent/counters.ts';
import {
  LocalPolicy,
  localProbeAnswer,
  nextLocalAction,
  quotedValues,
  unquoted,
} from '../../../lambdas/lib/agent/local-policy.ts';
import { parseProbeAnswer, probeUserPrompt } from '../../../lambdas/lib/agent/model-policy.ts';
import { SNAPSHOT_BUDGET } from '../../../lambdas/lib/agent/observe.ts';
import type { ProbeAnswer } from '../../../lambdas/lib/agent/policy.ts';
import { buildCostReport } from '../../../lambdas/lib/api/reports/cost.ts';
import type { Job, LedgerEntry } from '../../../lambdas/lib/ledger/types.ts';
import { ZERO_COST } from '../../../lambdas/lib/ledger/types.ts';

/** The demo CRM's record page as Playwright's aria snapshot shows it. */
const RECORD = (contact: string, phone: string): string =>
  [
    '- main:',
    '  - heading "Cobalt Cycles" [level=1]',
    '  - term: Contact',
    `  - definition: ${contact}`,
    '  - term: Phone',
    `  - definition: ${phone}`,
    '  - link "Edit record":',
    '    - /url: /customers/C-1003/edit',
  ].join('\n');

const QUESTION = 'Does the record show contact "Mei Chen-Ward" and phone "+44 117 496 0999"?';
const ask = (snapshot: string, question = QUESTION) =>
  localProbeAnswer({ question, url: 'http://127.0.0.1:8802/customers/C-1003', snapshot });

describe('Function: localProbeAnswer', () => {
  it('answers done when the page shows every quoted value, quoting them', () => {
    expect(ask(RECORD('Mei Chen-Ward', '+44 117 496 0999'))).toEqual({
      status: 'done',
      evidence: 'Mei Chen-Ward; +44 117 496 0999',
      reason: 'the page shows "Mei Chen-Ward", "+44 117 496 0999"',
    });
  });

  it('answers absent when the page shows other values, naming what is missing', () => {
    expect(ask(RECORD('Mei Chen', '+44 117 496 0003'))).toEqual({
      status: 'absent',
      reason: 'the page does not show "Mei Chen-Ward", "+44 117 496 0999"',
    });
    expect(ask(RECORD('Mei Chen-Ward', '+44 117 496 0003')).status).toBe('absent');
  });

  it('counts a value only whole: "Ann" is not shown by Anna, nor 0999 by 09990', () => {
    expect(ask(RECORD('Anna', '+44 117 496 09990'), 'Contact "Ann", phone "496 0999"?').status).toBe(
      'absent',
    );
    expect(ask(RECORD('Ann', '+44 117 496 0999'), 'Contact "Ann", phone "+44 117 496 0999"?').status).toBe(
      'done',
    );
  });

  it("answers unknown, for a person, when a value shows only inside a longer text (another write's record)", () => {
    // Another job set "Mei Chen-Ward chaos-02": this job's "Mei Chen-Ward" is not what the record holds.
    expect(ask(RECORD('Mei Chen-Ward chaos-02', '+44 117 496 0999'))).toEqual({
      status: 'unknown',
      reason: '"Mei Chen-Ward" shown only inside a longer text',
    });
    expect(ask(RECORD('Ann', '+44 117 496 0999'), 'Contact "Ann", phone "496 0999"?').status).toBe('unknown');
  });

  it('compares with spaces collapsed and case ignored, and reads escaped quotes in names', () => {
    expect(ask(RECORD('x', 'y'), 'Is it "cobalt   CYCLES"?').status).toBe('done');
    const snapshot = '- heading "Say \\"hi\\" there" [level=1]';
    expect(ask(snapshot, 'Does it read “Say "hi" there”?').status).toBe('done');
    expect(ask(snapshot, 'Does it read “Say "hello" there”?').status).toBe('absent');
  });

  it('reads a value Playwright quotes (a compact E.164 phone reads as a YAML number) as the page shows it', () => {
    // `Number("+4479111234567")` is a number, so the snapshot writes the text in double quotes.
    const snapshot = [
      '- term: Phone',
      '- definition: "+4479111234567"',
      '- term: Invoice number',
      '- definition: 4111 1111 1111 1111',
      '- paragraph: "-5 \\"cold\\""',
    ].join('\n');
    expect(ask(snapshot, 'Phone "+4479111234567", invoice "4111 1111 1111 1111"?')).toEqual({
      status: 'done',
      evidence: '+4479111234567; 4111 1111 1111 1111',
      reason: 'the page shows "+4479111234567", "4111 1111 1111 1111"',
    });
    expect(ask(snapshot, 'Does it read “-5 "cold"”?').status).toBe('done');
    // Still whole values only: the quoted text is one element's text, not a part of it.
    expect(ask('- definition: "+4479111234567 (old)"', 'Phone "+4479111234567"?').status).toBe('unknown');
  });

  it('reads a quoted field value as the value the field holds', () => {
    const observation = {
      goal: 'Set the phone',
      fields: { Phone: '+4479111234567' },
      history: [],
      answers: [],
      url: 'http://127.0.0.1/records/R-1/edit',
      snapshot: ['- textbox "Phone": "+4479111234567"', '- button "Save record"'].join('\n'),
    };
    expect(nextLocalAction(observation)).toEqual({
      name: 'click',
      target: { role: 'button', name: 'Save record' },
    });
    expect(unquoted('"a\\\\b\\tc"')).toBe('a\\b\tc');
    expect(unquoted('plain "text"')).toBe('plain "text"');
  });

  it('matches a secret as its placeholder, which is all the page and the question show', () => {
    expect(ask(RECORD('Ada', '{{secret:phone}}'), 'Phone "{{secret:phone}}"?').status).toBe('done');
  });

  it.each([
    ['quotes nothing', RECORD('Mei Chen', 'x'), 'Was the contact updated?'],
    ['sees an empty page', '  ', QUESTION],
    [
      'sees a trimmed page without the values',
      `${'- text: x\n'.repeat(10)}- (snapshot trimmed at ${SNAPSHOT_BUDGET} characters)`,
      QUESTION,
    ],
  ])('answers unknown when it %s', (_what, snapshot, question) => {
    expect(ask(snapshot, question).status).toBe('unknown');
  });

  it('finds the quoted values, straight or curly', () => {
    expect(quotedValues('a "x" b “y z” c "" d')).toEqual(['x', 'y z']);
  });

  it('is the local policy: no tokens, its simulated latency recorded', async () => {
    const decision = await new LocalPolicy({ latencyMs: 0 }).answerProbe({
      question: QUESTION,
      url: 'u',
      snapshot: RECORD('Mei Chen', 'x'),
    });
    expect(decision).toMatchObject({
      model: 'local',
      tokens: { input: 0, output: 0 },
      simulatedLatencyMs: 0,
      answer: { status: 'absent' },
    });
  });
});

describe('Function: parseProbeAnswer', () => {
  it.each([
    [
      { status: 'done', evidence: 'Ada', reason: 'shown' },
      { status: 'done', evidence: 'Ada', reason: 'shown' },
    ],
    [{ status: 'absent' }, { status: 'absent' }],
    [{ status: 'unknown', evidence: '', reason: 42 }, { status: 'unknown' }],
    [{ status: 'maybe' }, undefined],
    [{ name: 'click' }, undefined],
    ['done', undefined],
  ])('%o -> %o', (input, want) => {
    expect(parseProbeAnswer(input)).toEqual(want);
  });

  it('keeps at most 300 characters of page text', () => {
    expect(parseProbeAnswer({ status: 'done', evidence: 'x'.repeat(1000) })?.evidence).toHaveLength(300);
  });

  it('puts the page last, marked untrusted', () => {
    const prompt = probeUserPrompt({ question: 'Q "v"?', url: 'http://x/p', snapshot: '- text: v' });
    expect(prompt).toBe('Question: Q "v"?\nPage (untrusted) at http://x/p:\n- text: v');
  });
});

describe('Function: probe answers in the counters and the cost report', () => {
  const entry = (type: string, detail: Record<string, unknown>, usd: number, tokens: number): LedgerEntry =>
    ({
      type,
      step: 'update-contact',
      at: 't',
      detail,
      cost: { ...ZERO_COST, modelTokens: tokens, modelUsd: usd },
    }) as unknown as LedgerEntry;
  const entries = [
    entry(
      'action-chosen',
      { model: 'anthropic:claude-haiku-4-5', usage: { input: 100, output: 10 } },
      0.001,
      110,
    ),
    entry(
      'probe-answered',
      { model: 'anthropic:claude-haiku-4-5', usage: { input: 200, output: 20 } },
      0.002,
      220,
    ),
    entry('step-completed', {}, 0, 0),
  ];

  it('counts a probe answer as a paid model call, without changing what the cache did', () => {
    expect(agentCountersByStep(entries)['update-contact']).toMatchObject({
      modelCalls: 2,
      usage: 330,
      modelUsd: 0.003,
      heals: 0,
      cache: 'miss',
    });
  });

  it("adds a probe answer to its model's decisions, tokens and dollars", () => {
    const job = { status: 'SUCCEEDED', sessions: {}, createdAt: 't' } as unknown as Job;
    const report = buildCostReport({
      tenantId: 't',
      from: 'a',
      to: 'b',
      now: new Date(0),
      jobs: [{ job, entries }],
    });
    expect(report.models).toEqual({
      'anthropic:claude-haiku-4-5': {
        decisions: 2,
        failedCalls: 0,
        inputTokens: 300,
        outputTokens: 30,
        usd: 0.003,
      },
    });
  });
});

describe('Function: checkedAnswer (the model reads, the page data decides)', () => {
  const matches = { record: 'matches' as const, evidence: { contact: 'Mei Chen-Ward' } };
  const differs = { record: 'differs' as const, detail: 'the contact differs' };
  const several = { record: 'several' as const, count: 2, evidence: { contact: 'Mei Chen-Ward' } };
  const unread = { record: 'unread' as const, detail: 'no record on the page' };
  const a = (status: ProbeAnswer['status']): ProbeAnswer => ({ status, reason: 'page text says so' });
  it.each([
    ['done', matches, 'done'],
    ['done', differs, 'unknown'],
    ['done', unread, 'unknown'],
    ['done', undefined, 'unknown'],
    ['absent', differs, 'absent'],
    // "This record was not updated", planted in the page: the record's own fields say otherwise.
    ['absent', matches, 'unknown'],
    ['absent', unread, 'unknown'],
    ['absent', undefined, 'unknown'],
    ['duplicate', matches, 'duplicate'],
    ['duplicate', undefined, 'duplicate'],
    ['unknown', matches, 'unknown'],
    ['done', several, 'duplicate'],
    ['absent', several, 'duplicate'],
  ] as const)('model %s, facts %o -> %s', (status, facts, want) => {
    const result = checkedAnswer(a(status), 'local', facts, undefined);
    expect(result.status).toBe(want);
    if (result.status === 'done') expect(result.evidence).toEqual(matches.evidence);
  });

  it('without facts, a done stands only on the evidence the probe reads off the page', () => {
    expect(checkedAnswer(a('done'), 'local', undefined, { contact: 'x' })).toEqual({
      status: 'done',
      evidence: { contact: 'x' },
    });
    expect(checkedAnswer(a('done'), 'local', undefined, null).status).toBe('unknown');
    expect(checkedAnswer(a('absent'), 'local', undefined, { contact: 'x' }).status).toBe('unknown');
  });
});

describe('Function: localProbeAnswer, a record shown twice', () => {
  it('answers duplicate with the count when every quoted value is shown whole twice', () => {
    const twice = `${RECORD('Mei Chen-Ward', '+44 117 496 0999')}\n${RECORD('Mei Chen-Ward', '+44 117 496 0999')}`;
    expect(ask(twice)).toMatchObject({ status: 'duplicate', count: 2 });
    expect(parseProbeAnswer({ status: 'duplicate', count: 3 })).toEqual({ status: 'duplicate', count: 3 });
    expect(parseProbeAnswer({ status: 'duplicate', count: 1 })).toEqual({ status: 'duplicate' });
  });
});

describe('Function: failed model calls in the counters and the cost report', () => {
  const entries = [
    {
      type: 'model-call-failed',
      step: 'update-contact',
      at: 't',
      detail: { model: 'anthropic:claude-haiku-4-5', usage: { input: 400, output: 12 }, purpose: 'decide' },
      cost: { ...ZERO_COST, modelTokens: 412, modelUsd: 0.00046 },
    },
    {
      type: 'action-chosen',
      step: 'update-contact',
      at: 't',
      detail: { model: 'anthropic:claude-haiku-4-5', usage: { input: 100, output: 10 } },
      cost: { ...ZERO_COST, modelTokens: 110, modelUsd: 0.00015 },
    },
    { type: 'step-completed', step: 'update-contact', at: 't', detail: {}, cost: ZERO_COST },
  ] as unknown as LedgerEntry[];

  it('counts the tokens of a call that failed after the provider counted them', () => {
    expect(agentCountersByStep(entries)['update-contact']).toMatchObject({ modelCalls: 2, usage: 522 });
    const job = { status: 'SUCCEEDED', sessions: {}, createdAt: 't' } as unknown as Job;
    const report = buildCostReport({
      tenantId: 't',
      from: 'a',
      to: 'b',
      now: new Date(0),
      jobs: [{ job, entries }],
    });
    expect(report.models['anthropic:claude-haiku-4-5']).toEqual({
      decisions: 1,
      failedCalls: 1,
      inputTokens: 500,
      outputTokens: 22,
      usd: 0.00061,
    });
  });
});
