import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Playbook } from '../../../lambdas/lib/playbooks/contract.ts';
import { inputsPerRun, markablePath } from '../../../tools/playbook/inputs.ts';

const playbook = {
  id: 'p@1',
  inputSchema: z.object({
    email: z.email(),
    code: z.string().regex(/^[A-Z]{2}$/),
    address: z.object({ line1: z.string().max(100) }),
    title: z.string(),
  }),
} as unknown as Playbook;
const base = { email: 'a@b.example', code: 'GB', address: { line1: '1 Quay' }, title: 'Trip' };

describe('playbook test: inputs per run', () => {
  it('marks the first free-text input that stays valid (not an email, not a code)', () => {
    expect(markablePath(playbook, base)).toEqual(['address', 'line1']);
    const { inputs, marked } = inputsPerRun(playbook, base, 3, 'abc');
    expect(marked).toBe('address.line1');
    expect(inputs.map((i) => (i as typeof base).address.line1)).toEqual([
      '1 Quay run-abc-0',
      '1 Quay run-abc-1',
      '1 Quay run-abc-2',
    ]);
    // Nothing else changes; the base is untouched.
    expect((inputs[1] as typeof base).title).toBe('Trip');
    expect(base.address.line1).toBe('1 Quay');
  });

  it('marks the input --mark names, or none', () => {
    expect(inputsPerRun(playbook, base, 1, 'x', 'title').inputs[0]).toMatchObject({ title: 'Trip run-x-0' });
    expect(inputsPerRun(playbook, base, 2, 'x', 'none')).toEqual({ inputs: [base, base], marked: undefined });
    expect(() => inputsPerRun(playbook, base, 1, 'x', 'code')).toThrow(
      /--mark: code marked with the run no longer fits/,
    );
    expect(() => inputsPerRun(playbook, base, 1, 'x', 'missing')).toThrow(
      /--mark: missing is not a text input/,
    );
  });

  it('takes a list as one inputs object per run, refusing a short list or an entry that does not fit', () => {
    const other = { ...base, title: 'Other' };
    expect(inputsPerRun(playbook, [base, other, base], 2, 'x')).toEqual({
      inputs: [base, other],
      marked: undefined,
    });
    expect(() => inputsPerRun(playbook, [base], 2, 'x')).toThrow(
      '--inputs: the list has 1 inputs; this test makes 2 runs, each with inputs of its own',
    );
    expect(() => inputsPerRun(playbook, [base, { title: 1 }], 2, 'x')).toThrow(
      "--inputs: entry 1 does not fit p@1's inputs",
    );
  });
});
