import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileDeclarative } from '../../../lambdas/lib/playbooks/declarative/compile.ts';
import { parseDeclarative } from '../../../lambdas/lib/playbooks/declarative/read.ts';
import type { DeclarativePlaybook } from '../../../lambdas/lib/playbooks/declarative/schema.ts';

const NOTE = join(import.meta.dirname, '..', '..', 'fixtures', 'playbooks', 'ok', 'note.playbook.yaml');

async function noteSpec(): Promise<DeclarativePlaybook> {
  const parsed = parseDeclarative(await readFile(NOTE, 'utf8'));
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  return parsed.spec;
}

describe('compileDeclarative', () => {
  it("carries each step's needsApproval and sensitive selectors, for sign-in and scripted steps alike", async () => {
    const spec = await noteSpec();
    const [signIn, addNote] = spec.steps;
    const steps = [
      { ...signIn, needsApproval: true, sensitive: ['#otp'] },
      { ...addNote, needsApproval: true, sensitive: ['.note'] },
    ] as DeclarativePlaybook['steps'];
    const playbook = compileDeclarative({ ...spec, steps }, 'note.playbook.yaml');
    expect(playbook.steps.map((s) => [s.id, s.needsApproval, s.sensitive])).toEqual([
      ['sign-in', true, ['#otp']],
      ['add-note', true, ['.note']],
    ]);
  });

  it("carries the playbook's action cache scope, and leaves it unset (each tenant's own) when not given", async () => {
    const spec = await noteSpec();
    expect(compileDeclarative({ ...spec, actionCache: 'shared' }, 'note.playbook.yaml').actionCache).toBe(
      'shared',
    );
    expect(compileDeclarative(spec, 'note.playbook.yaml').actionCache).toBeUndefined();
    const text = `actionCache: everyone\n${await readFile(NOTE, 'utf8')}`;
    const parsed = parseDeclarative(text);
    expect(parsed.ok ? [] : parsed.problems.join('\n')).toMatch(/actionCache/);
  });

  it('leaves needsApproval and sensitive off the steps that do not ask for them', async () => {
    const playbook = compileDeclarative(await noteSpec(), 'note.playbook.yaml');
    expect(playbook.steps.map((s) => ['needsApproval' in s, 'sensitive' in s])).toEqual([
      [false, false],
      [false, false],
    ]);
  });
});
