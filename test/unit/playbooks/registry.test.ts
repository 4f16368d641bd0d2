import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Playbook, Step } from '../../../lambdas/lib/playbooks/contract.ts';
import { definePlaybook, playbookProblems } from '../../../lambdas/lib/playbooks/define.ts';
import {
  DuplicatePlaybookError,
  PlaybookDefinitionError,
  PlaybookFileError,
  UnknownPlaybookError,
} from '../../../lambdas/lib/playbooks/errors.ts';
import { formSignIn } from '../../../lambdas/lib/playbooks/form-sign-in.ts';
import { createPlaybookRegistry, tenantMayRun } from '../../../lambdas/lib/playbooks/registry.ts';
import { signInStep } from '../../../lambdas/lib/playbooks/sign-in-step.ts';
import { repoPlaybooks } from '../../support/playbooks.ts';

const site = formSignIn({
  name: 'site',
  signInPath: '/login',
  username: '#user',
  password: '#pass',
  submit: '#go',
  signedIn: '#me',
});

const read: Step = {
  id: 'look',
  title: 'Look',
  kind: 'read',
  app: 'site',
  precondition: async () => ({ ok: true }),
  restore: async () => undefined,
  run: async () => undefined,
  verify: async () => ({ seen: true }),
};

function playbook(over: Partial<Playbook> = {}): Playbook {
  return {
    name: 'p',
    version: 1,
    id: 'p@1',
    description: 'A test playbook.',
    inputSchema: z.object({}),
    applications: { site },
    steps: [signInStep('sign-in', 'site', site), read],
    ...over,
  };
}

describe('definePlaybook', () => {
  it('accepts a valid playbook and fills in its id', () => {
    const { id: _id, ...rest } = playbook();
    expect(definePlaybook(rest).id).toBe('p@1');
  });

  it.each([
    [
      'a write without a probe',
      { steps: [{ ...read, kind: 'write' as const }] },
      'steps[0] (look).probe: a write needs a probe',
    ],
    [
      'a step in an undeclared application',
      { steps: [{ ...read, app: 'elsewhere' }] },
      'steps[0] (look).app: "elsewhere" is not one of',
    ],
    ['no input schema', { inputSchema: undefined as never }, 'inputSchema: the inputs need a schema'],
    ['an id that is not name@version', { id: 'p@2' }, 'id: must be name@version (p@1)'],
    ['two steps with one id', { steps: [read, read] }, 'steps: two steps have the id look'],
    ['a bad step id', { steps: [{ ...read, id: 'Look Around' }] }, 'steps[0].id: lower-case letters'],
    [
      'an action cache scope it does not know',
      { actionCache: 'everyone' as never },
      'actionCache: tenant or shared',
    ],
    [
      'example inputs that do not fit',
      { exampleInputs: { x: 1 }, inputSchema: z.object({}).strict() },
      'exampleInputs: do not fit',
    ],
  ])('refuses %s, naming the field', (_label, over, message) => {
    const p = playbook(over as Partial<Playbook>);
    expect(playbookProblems(p).join('\n')).toContain(message);
    expect(() => definePlaybook(p)).toThrow(PlaybookDefinitionError);
  });
});

describe('createPlaybookRegistry', () => {
  it('finds playbooks by id and names the known ones for an unknown id', () => {
    const registry = createPlaybookRegistry([{ playbook: playbook(), source: 'a/p/index.ts' }]);
    expect(registry.get('p@1').steps).toHaveLength(2);
    expect(registry.sourceOf('p@1')).toBe('a/p/index.ts');
    const error = (() => {
      try {
        registry.get('p@2');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(UnknownPlaybookError);
    expect((error as UnknownPlaybookError).known).toEqual(['p@1']);
  });

  it('refuses two playbooks with one id, naming both files', () => {
    expect(() =>
      createPlaybookRegistry([
        { playbook: playbook(), source: 'a/p/index.ts' },
        { playbook: playbook(), source: 'b/p.playbook.yaml' },
      ]),
    ).toThrow(new DuplicatePlaybookError('p@1', ['a/p/index.ts', 'b/p.playbook.yaml']));
  });

  it('checks what a module exported without definePlaybook, naming its file', () => {
    const bad = { ...playbook(), steps: [{ ...read, kind: 'write' as const }] };
    const error = (() => {
      try {
        createPlaybookRegistry([{ playbook: bad, source: 'c/bad/index.ts' }]);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(PlaybookFileError);
    expect((error as Error).message).toMatch(/^c\/bad\/index\.ts:/);
    expect((error as Error).message).toContain('a write needs a probe');
  });

  it('builds a lazy entry on first use only, once, and checks it then', () => {
    let builds = 0;
    const registry = createPlaybookRegistry([
      { playbook: playbook(), source: 'a/p/index.ts' },
      {
        id: 'q@1',
        load: () => {
          builds++;
          return playbook({ name: 'q', id: 'q@1' });
        },
        source: 'b/q.playbook.yaml',
      },
    ]);
    expect(builds).toBe(0);
    expect(registry.get('p@1').id).toBe('p@1');
    expect(builds).toBe(0);
    expect(registry.sourceOf('q@1')).toBe('b/q.playbook.yaml');
    expect(registry.get('q@1').id).toBe('q@1');
    expect(registry.list().map((p) => p.id)).toEqual(['p@1', 'q@1']);
    expect(builds).toBe(1);
  });

  it('refuses a lazy entry whose playbook is not the id it was registered as, or not valid', () => {
    const registry = createPlaybookRegistry([
      { id: 'r@1', load: () => playbook(), source: 'r.playbook.yaml' },
      {
        id: 's@1',
        load: () => ({ ...playbook({ name: 's', id: 's@1' }), steps: [{ ...read, kind: 'write' as const }] }),
        source: 's.playbook.yaml',
      },
    ]);
    expect(() => registry.get('r@1')).toThrow(
      /^r\.playbook\.yaml:\n {2}registered as r@1, but its id is p@1$/,
    );
    expect(() => registry.get('s@1')).toThrow(/a write needs a probe/);
    expect(() =>
      createPlaybookRegistry([
        { playbook: playbook(), source: 'a/p/index.ts' },
        { id: 'p@1', load: () => playbook(), source: 'b/p.playbook.yaml' },
      ]),
    ).toThrow(new DuplicatePlaybookError('p@1', ['a/p/index.ts', 'b/p.playbook.yaml']));
  });

  it('limits a playbook to its tenants when it names them', () => {
    expect(tenantMayRun(playbook(), 'acme')).toBe(true);
    expect(tenantMayRun(playbook({ tenants: ['demo'] }), 'acme')).toBe(false);
  });
});

describe("the repository's playbooks", () => {
  it('all load and pass the checks (whichever ship)', async () => {
    const { playbooks } = await repoPlaybooks();
    expect(playbooks.length).toBeGreaterThan(0);
    for (const { playbook: p, source } of playbooks) {
      expect(playbookProblems(p), source).toEqual([]);
      expect(source.startsWith('playbooks/'), source).toBe(true);
    }
  });
});
