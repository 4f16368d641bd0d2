/**
 * What a model may see, and what the ledger records of what it chose: secrets and sensitive
 * inputs as placeholders in every text and every encoding, the job's own numbers exact (a phone
 * number is no card number), and actions recorded with references that replay to exactly the
 * job's values.
 */
import { describe, expect, it } from 'vitest';
import type { AgentAction } from '../../../lambdas/lib/agent/actions.ts';
import { valuesOf } from '../../../lambdas/lib/agent/cache/placeholders.ts';
import {
  forModel,
  type ModelView,
  sensitiveInputs,
  urlForModel,
  withoutSensitive,
  withValuesHidden,
} from '../../../lambdas/lib/agent/model-view.ts';
import {
  holdsMask,
  resolveAction,
  toRecorded,
  unresolvedReferences,
} from '../../../lambdas/lib/agent/references.ts';
import { declaredTargets } from '../../../lambdas/lib/agent/vet.ts';
import { maskSecrets } from '../../../lambdas/lib/redact.ts';

const INPUTS = {
  customerId: 'C-1003',
  phone: '+4479111234567',
  invoice: '4111 1111 1111 1111',
  iban: 'GB82 WEST 1234 5698 7654 32',
  ssn: '078-05-1120',
  card: { number: '4000 0566 5566 5556' },
};
const sensitive = sensitiveInputs(INPUTS, ['ssn']);
const VIEW: ModelView = {
  secrets: { password: 'pässword 1&2' },
  sensitive,
  values: valuesOf(INPUTS, {})
    .map(([, v]) => String(v))
    .filter((v) => !sensitive.some(([, s]) => s === v)),
};

describe('Function: sensitiveInputs', () => {
  it('takes the inputs named, and those named like a secret at any depth', () => {
    expect(sensitive).toEqual([
      ['inputs.ssn', '078-05-1120'],
      ['inputs.card.number', '4000 0566 5566 5556'],
    ]);
    expect(withoutSensitive(INPUTS, sensitive)).toEqual({ ...INPUTS, ssn: undefined, card: {} });
  });
});

describe('Function: forModel', () => {
  it("keeps the job's own numbers exact and masks other card-like numbers", () => {
    const page = `Phone: ${INPUTS.phone}; invoice ${INPUTS.invoice}; IBAN ${INPUTS.iban}; stored card 4242 4242 4242 4242`;
    expect(forModel(page, VIEW)).toBe(
      `Phone: ${INPUTS.phone}; invoice ${INPUTS.invoice}; IBAN ${INPUTS.iban}; stored card [card ****4242]`,
    );
  });

  it('shows secrets and sensitive inputs as placeholders only', () => {
    const text = `typed pässword 1&2, SSN 078-05-1120, card 4000 0566 5566 5556`;
    const shown = forModel(text, VIEW);
    expect(shown).toBe('typed {{secret:password}}, SSN {{inputs.ssn}}, card {{inputs.card.number}}');
    expect(withValuesHidden(text, VIEW)).toBe(shown);
  });

  it('hides a secret in a URL however it is encoded', () => {
    const encoded = encodeURIComponent('pässword 1&2');
    for (const url of [
      `http://127.0.0.1/search?q=${encoded}`,
      `http://127.0.0.1/search?q=${encoded.replace(/%20/g, '+')}`,
      `http://127.0.0.1/search?q=${encoded.toLowerCase()}`,
      `http://127.0.0.1/p/${encodeURIComponent('078-05-1120')}`,
    ]) {
      const shown = urlForModel(url, VIEW);
      expect(shown).not.toContain('pässword');
      expect(shown.toLowerCase()).not.toContain(encoded.toLowerCase());
      expect(shown).not.toContain('078-05-1120');
      expect(shown).toMatch(/\{\{(secret:password|inputs\.ssn)\}\}/);
    }
    expect(urlForModel('http://127.0.0.1/customers/C-1003?saved=2', VIEW)).toBe(
      'http://127.0.0.1/customers/C-1003?saved=2',
    );
  });
});

describe('Function: toRecorded', () => {
  const job = { inputs: INPUTS, evidence: { lookup: { orderNo: '5500 0000 0000 0004' } } };
  const values = valuesOf(job.inputs, job.evidence);

  it.each([
    [{ name: 'fill', target: { role: 'textbox', name: 'Phone' }, value: INPUTS.phone }, '{{inputs.phone}}'],
    [
      { name: 'fill', target: { role: 'textbox', name: 'Invoice' }, value: INPUTS.invoice },
      '{{inputs.invoice}}',
    ],
    [{ name: 'fill', target: { role: 'textbox', name: 'IBAN' }, value: INPUTS.iban }, '{{inputs.iban}}'],
    [
      { name: 'fill', target: { role: 'textbox', name: 'Order' }, value: 'see 5500 0000 0000 0004' },
      'see {{evidence.lookup.orderNo}}',
    ],
    [{ name: 'fill', target: { role: 'textbox', name: 'SSN' }, value: '{{inputs.ssn}}' }, '{{inputs.ssn}}'],
  ] as const)('records %o with references, and resolves it back exactly', (action, stored) => {
    const recorded = toRecorded(action as AgentAction, values, job);
    expect(recorded.literal).toBeUndefined();
    expect((recorded.action as { value: string }).value).toBe(stored);
    // What the ledger keeps survives its pass on the way in: no number is masked.
    const kept = maskSecrets(recorded.action);
    expect(resolveAction(kept, job)).toEqual(resolveAction(action as AgentAction, job));
  });

  it('keeps secret placeholders whole, and never touches a value inside one', () => {
    const action: AgentAction = {
      name: 'fill',
      target: { role: 'textbox', name: 'Phone' },
      value: '{{secret:phone}} then C-1003',
    };
    expect(toRecorded(action, valuesOf({ customerId: 'C-1003', word: 'phone' }, {}), job).action).toEqual({
      ...action,
      value: '{{secret:phone}} then {{inputs.customerId}}',
    });
  });

  it('names references the job has no value for, and finds what an older ledger masked', () => {
    const bogus: AgentAction = { name: 'goto', url: '/x/{{inputs.nope}}' };
    expect(unresolvedReferences(bogus, job)).toEqual(['{{inputs.nope}}']);
    expect(
      holdsMask({ name: 'fill', target: { role: 'textbox', name: 'Phone' }, value: '+[card ****4567]' }),
    ).toBe(true);
    expect(holdsMask({ name: 'fill', target: { role: 'textbox', name: 'Phone' }, value: INPUTS.phone })).toBe(
      false,
    );
  });
});

describe('Function: declaredTargets', () => {
  it("takes a secret's or sensitive input's field from the step's fields and its secretTargets", () => {
    const protectedNames = new Set(['secret:password', 'secret:pin', 'inputs.ssn']);
    const declared = declaredTargets(
      { 'Social security number': '{{inputs.ssn}}', Phone: '{{inputs.phone}}' },
      { pin: ['Card PIN'] },
      protectedNames,
    );
    expect(declared).toEqual(
      new Map([
        ['inputs.ssn', new Set(['social security number'])],
        ['secret:pin', new Set(['card pin'])],
      ]),
    );
  });
});
