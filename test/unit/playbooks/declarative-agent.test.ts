import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { AgentStep } from '../../../lambdas/lib/agent/agent-step.ts';
import { compileDeclarative } from '../../../lambdas/lib/playbooks/declarative/compile.ts';
import { parseDeclarative } from '../../../lambdas/lib/playbooks/declarative/read.ts';
import type { DeclarativePlaybook } from '../../../lambdas/lib/playbooks/declarative/schema.ts';

const PLAYBOOKS = join(import.meta.dirname, '..', '..', '..', 'playbooks');
const DEMO = join(PLAYBOOKS, 'crm-contact-decl.playbook.yaml');

/** The demo agent playbook as text, and as a value to change one field of. */
const demoText = (): Promise<string> => readFile(DEMO, 'utf8');
async function demo(): Promise<Record<string, unknown> & { steps: Record<string, unknown>[] }> {
  return parse(await demoText());
}

/** The problems `read.ts` reports for the demo with its agent step changed by `change`. */
async function problemsWith(change: (step: Record<string, unknown>) => void): Promise<string[]> {
  const spec = await demo();
  change(spec.steps[1] as Record<string, unknown>);
  const parsed = parseDeclarative(JSON.stringify(spec, null, 1));
  return parsed.ok ? [] : parsed.problems.map((p) => p.replace(/^line \d+, column \d+: /, ''));
}

const agentOf = (step: Record<string, unknown>) => step.agent as Record<string, unknown>;
const probeOf = (step: Record<string, unknown>) => step.probe as { agent: Record<string, unknown> };

describe('Declarative form: agent steps', () => {
  it('reads and compiles the demo agent playbook into an agent step with its expect and agent probe', async () => {
    const parsed = parseDeclarative(await demoText());
    if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
    const playbook = compileDeclarative(parsed.spec, 'crm-contact-decl.playbook.yaml');
    expect(playbook.id).toBe('crm-contact-decl@1');
    const [signIn, update] = playbook.steps;
    expect(signIn?.id).toBe('crm-sign-in');
    expect(update).toMatchObject({ id: 'update-contact', kind: 'write', app: 'crm' });
    expect((update as AgentStep<unknown>).agent).toEqual({
      goal: 'In the CRM, set the contact name of customer {{inputs.customerId}} to "{{inputs.contactName}}" and the phone to "{{inputs.phone}}", then save the record.',
      model: 'local',
      maxActions: 6,
      sensitiveInputs: [],
    });
    expect(typeof update?.verify).toBe('function');
    expect(typeof update?.probe).toBe('function');
    expect(typeof update?.refusal).toBe('function');
  });

  it('accepts a scripted probe in an agent step, and a read agent step without one (default model and bound)', async () => {
    const spec = (await demo()) as unknown as DeclarativePlaybook;
    const write = {
      ...spec.steps[1],
      probe: {
        goto: '/audit',
        records: { testId: 'audit-row', where: { 'data-key': '{{idempotencyKey}}' } },
        absent: { testId: 'audit-empty' },
      },
    };
    const { probe: _p, ...withoutProbe } = spec.steps[1] as Record<string, unknown>;
    const agent = { ...(withoutProbe.agent as object) } as Record<string, unknown>;
    delete agent.model;
    delete agent.maxActions;
    const read = { ...withoutProbe, id: 'read-contact', kind: 'read', agent };
    const value = { ...spec, steps: [spec.steps[0], write, read] };
    const parsed = parseDeclarative(JSON.stringify(value));
    expect(parsed.ok ? [] : parsed.problems).toEqual([]);
    const playbook = compileDeclarative(value as DeclarativePlaybook, 'x.playbook.json');
    expect(typeof playbook.steps[1]?.probe).toBe('function');
    expect((playbook.steps[2] as AgentStep<unknown>).agent).toMatchObject({ model: 'local', maxActions: 12 });
    expect(playbook.steps[2]?.probe).toBeUndefined();
  });

  it.each([
    [
      'a write without a probe',
      (s: Record<string, unknown>) => delete s.probe,
      'steps[1].probe: a write needs a probe: where to look for its effect after a crash',
    ],
    [
      'a read with a probe',
      (s: Record<string, unknown>) => {
        s.kind = 'read';
      },
      'steps[1].probe: only writes have one',
    ],
    [
      'an unknown application',
      (s: Record<string, unknown>) => {
        s.app = 'billing';
      },
      'steps[1].app: billing is not one of applications (crm)',
    ],
    [
      'maxActions 0',
      (s: Record<string, unknown>) => {
        agentOf(s).maxActions = 0;
      },
      'steps[1].agent.maxActions: at least 1 action',
    ],
    [
      'maxActions 2.5',
      (s: Record<string, unknown>) => {
        agentOf(s).maxActions = 2.5;
      },
      'steps[1].agent.maxActions: a whole number of actions',
    ],
    [
      'maxActions 500',
      (s: Record<string, unknown>) => {
        agentOf(s).maxActions = 500;
      },
      'steps[1].agent.maxActions: at most 50 actions per attempt',
    ],
    [
      'maxActions as text',
      (s: Record<string, unknown>) => {
        agentOf(s).maxActions = 'six';
      },
      'steps[1].agent.maxActions: Invalid input: expected number, received string',
    ],
    [
      'a model that is not a model spec',
      (s: Record<string, unknown>) => {
        agentOf(s).model = 'gpt-5';
      },
      'steps[1].agent.model: local, bedrock:<model id>, anthropic:<model id> or openai:<model id>',
    ],
    [
      'no goal',
      (s: Record<string, unknown>) => delete agentOf(s).goal,
      'steps[1].agent.goal: Invalid input: expected string, received undefined',
    ],
    [
      'an unknown field of agent',
      (s: Record<string, unknown>) => {
        agentOf(s).steps = 3;
      },
      'steps[1].agent.steps: unknown field steps',
    ],
    [
      'no title',
      (s: Record<string, unknown>) => delete s.title,
      'steps[1].title: a line for people: what the step does',
    ],
    [
      'an expect that says nothing',
      (s: Record<string, unknown>) => {
        s.expect = {};
      },
      'steps[1].expect: say what shows the step worked: url, visible, checks or evidence',
    ],
    [
      'actions and agent in one step',
      (s: Record<string, unknown>) => {
        s.actions = [];
      },
      'steps[1]: a step has one of actions, agent, signIn, not actions and agent',
    ],
    [
      'credentials in a field',
      (s: Record<string, unknown>) => {
        agentOf(s).fields = { Password: '{{credentials.password}}' };
      },
      "steps[1].agent.fields.Password: {{credentials.password}}: credentials never go where a model reads them (an agent's goal, fields or question); sign in with a signIn step",
    ],
    [
      'credentials in the probe question',
      (s: Record<string, unknown>) => {
        probeOf(s).agent.question = 'Is "{{credentials.username}}" shown?';
      },
      "steps[1].probe.agent.question: {{credentials.username}}: credentials never go where a model reads them (an agent's goal, fields or question); sign in with a signIn step",
    ],
    [
      'the idempotency key in the goal',
      (s: Record<string, unknown>) => {
        agentOf(s).goal = 'Save with reference {{idempotencyKey}}';
      },
      "steps[1].agent.goal: {{idempotencyKey}}: an agent's goal and fields take {{inputs.x}} and {{evidence.<step>.<field>}} only (its actions are cached by their names)",
    ],
    [
      'an input the schema does not have',
      (s: Record<string, unknown>) => {
        agentOf(s).goal = 'Set the email to {{inputs.email}}';
      },
      "steps[1].agent.goal: {{inputs.email}}: the inputs' schema has no email",
    ],
    [
      'an agent probe without a question',
      (s: Record<string, unknown>) => delete probeOf(s).agent.question,
      'steps[1].probe.agent.question: Invalid input: expected string, received undefined',
    ],
    [
      'approve: effect with needsApproval',
      (s: Record<string, unknown>) => {
        s.approve = 'effect';
        s.needsApproval = true;
      },
      'steps[1].needsApproval: approve: effect asks for the approval: remove needsApproval',
    ],
    [
      'approve: effect on a read',
      (s: Record<string, unknown>) => {
        s.kind = 'read';
        delete s.probe;
        s.approve = 'effect';
      },
      'steps[1].approve: only writes have one',
    ],
    [
      'a scripted probe without its absent sign',
      (s: Record<string, unknown>) => {
        s.probe = { goto: '/audit', records: { testId: 'audit-row' } };
      },
      'steps[1].probe.absent: Invalid input',
    ],
  ])('refuses %s, naming the field', async (_what, change, problem) => {
    expect(await problemsWith(change)).toContain(problem);
  });

  it.each([
    ['approve: effect', 'effect'],
    ['the long form with shows', { effect: true, shows: { Phone: { label: 'Phone' } } }],
  ])('compiles an agent write with %s into a step prepared up to its commit', async (_what, approve) => {
    const spec = await demo();
    (spec.steps[1] as Record<string, unknown>).approve = approve;
    const parsed = parseDeclarative(JSON.stringify(spec));
    if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
    const step = compileDeclarative(parsed.spec, 'x.playbook.json').steps[1] as AgentStep<unknown>;
    expect(step.approve).toBe('effect');
    expect(step.agent.model).toBe('local');
    for (const part of ['prepare', 'effectOf', 'commit'] as const) expect(typeof step[part]).toBe('function');
    // Without approve, the agent write runs as one (no parts).
    const plain = compileDeclarative((await demo()) as unknown as DeclarativePlaybook, 'y.playbook.json');
    expect(plain.steps[1]?.approve).toBeUndefined();
    expect(plain.steps[1]?.prepare).toBeUndefined();
  });

  it('names the line of the field in the file', async () => {
    const text = (await demoText()).replace('maxActions: 6', 'maxActions: 0');
    const parsed = parseDeclarative(text);
    expect(parsed.ok).toBe(false);
    const line = text.split('\n').findIndex((l) => l.includes('maxActions: 0')) + 1;
    expect(parsed.ok ? [] : parsed.problems).toEqual([
      `line ${line}, column 19: steps[1].agent.maxActions: at least 1 action`,
    ]);
  });
});

describe('Declarative form: the published JSON Schema', () => {
  it('accepts the demo agent playbook and refuses its agent step with a bad maxActions or no goal', async () => {
    const schema = JSON.parse(await readFile(join(PLAYBOOKS, 'playbook.schema.json'), 'utf8'));
    const validate = new Ajv2020({ strict: false }).compile(schema);
    const spec = await demo();
    expect(validate(spec), JSON.stringify(validate.errors)).toBe(true);
    agentOf(spec.steps[1] as Record<string, unknown>).maxActions = 0;
    expect(validate(spec)).toBe(false);
    agentOf(spec.steps[1] as Record<string, unknown>).maxActions = 6;
    delete agentOf(spec.steps[1] as Record<string, unknown>).goal;
    expect(validate(spec)).toBe(false);
  });
});
