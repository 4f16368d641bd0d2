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

describe('the declarative takeover action', () => {
  const yaml = `name: handoff
version: 1
description: A person types the search term.
inputs: { type: object, additionalProperties: false, properties: { customer: { type: string } } }
applications:
  shop:
    formSignIn:
      signInPath: /signin
      username: { label: Email }
      password: { label: Password }
      submit: { role: button, name: Sign in }
      signedIn: { role: button, name: Sign out }
steps:
  - id: handoff
    title: A person types the search term
    kind: read
    app: shop
    startsAt: { path: /, ready: { label: Search } }
    actions:
      - takeover: { reason: "Type what {{inputs.customer}} asked for into the search box" }
    expect: { url: ^/$ }
`;

  it('asks the person through ctx.takeover with the reason filled in', async () => {
    const parsed = parseDeclarative(yaml);
    if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
    const playbook = compileDeclarative(parsed.spec, 'handoff.playbook.yaml');
    const asked: string[] = [];
    const ctx = {
      stepId: 'handoff',
      inputs: { customer: 'Ada' },
      faultPoint: async () => undefined,
      takeover: async ({ reason }: { reason: string }) => {
        asked.push(reason);
      },
    } as unknown as Parameters<(typeof playbook.steps)[number]['run']>[1];
    await playbook.steps[0]?.run({} as Parameters<(typeof playbook.steps)[number]['run']>[0], ctx);
    expect(asked).toEqual(['Type what Ada asked for into the search box']);
  });

  it('refuses a takeover without a reason, naming the field', () => {
    const parsed = parseDeclarative(
      yaml.replace(
        'takeover: { reason: "Type what {{inputs.customer}} asked for into the search box" }',
        'takeover: {}',
      ),
    );
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problems.join('\n')).toMatch(/takeover.*reason|reason/);
  });
});
