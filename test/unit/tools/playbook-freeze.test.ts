import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { AgentAction } from '../../../lambdas/lib/agent/actions.ts';
import { valuesOf } from '../../../lambdas/lib/agent/cache/placeholders.ts';
import { JobNotFoundError } from '../../../lambdas/lib/ledger/errors.ts';
import type { Job, LedgerEntry, LedgerEntryType } from '../../../lambdas/lib/ledger/types.ts';
import { compileDeclarative } from '../../../lambdas/lib/playbooks/declarative/compile.ts';
import { parseDeclarative } from '../../../lambdas/lib/playbooks/declarative/read.ts';
import type {
  AgentStepSpec,
  DeclarativePlaybook,
  ScriptedStep,
} from '../../../lambdas/lib/playbooks/declarative/schema.ts';
import {
  FreezeError,
  freezePlaybook,
  freezeStep,
  type RecordedPath,
  valuesLeft,
} from '../../../tools/playbook/freeze.ts';
import { freezeCommand } from '../../../tools/playbook/freeze-command.ts';
import {
  pathsFromCacheItems,
  pathsFromEntries,
  pathsFromJob,
} from '../../../tools/playbook/freeze-source.ts';

const PLAYBOOKS = join(import.meta.dirname, '..', '..', '..', 'playbooks');
const SOURCE = 'playbooks/crm-contact-decl.playbook.yaml';

/** The job's inputs: not the file's example inputs, so a value in the output is the job's. */
const INPUTS = { customerId: 'C-1002', contactName: 'Ada Quill-Byron', phone: '+44 20 7946 0123' };
const EVIDENCE = { customerId: 'C-1002', contact: 'Ada Quill-Byron', phone: '+44 20 7946 0123' };
const PASSWORD = 'crm-pass-9876';

async function demo(): Promise<DeclarativePlaybook> {
  const parsed = parseDeclarative(await readFile(join(PLAYBOOKS, 'crm-contact-decl.playbook.yaml'), 'utf8'));
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  return parsed.spec;
}

const agentOf = (spec: DeclarativePlaybook, id = 'update-contact'): AgentStepSpec =>
  spec.steps.find((s) => s.id === id) as AgentStepSpec;

/** What the local policy records on the demo's edit form (with the job's values, as the ledger holds them). */
const RECORDED: AgentAction[] = [
  { name: 'fill', target: { role: 'textbox', name: 'Contact name' }, value: INPUTS.contactName },
  { name: 'fill', target: { role: 'textbox', name: 'Phone' }, value: INPUTS.phone },
  { name: 'click', target: { role: 'button', name: 'Save record' } },
  { name: 'done', summary: 'the form was filled and submitted' },
];

let seq = 0;
function entry(type: LedgerEntryType, step: string, more: Partial<LedgerEntry> = {}): LedgerEntry {
  seq++;
  return {
    tenantId: 'demo',
    jobId: 'job_1',
    entryId: String(seq).padStart(6, '0'),
    type,
    step,
    cost: { browserSeconds: 0, modelTokens: 0 } as LedgerEntry['cost'],
    at: new Date(1_700_000_000_000 + seq * 1000).toISOString(),
    ...more,
  };
}

const chosen = (step: string, n: number, action: AgentAction, type: LedgerEntryType = 'action-chosen') =>
  entry(type, step, { detail: { n, action, source: 'model' } });

/** A job's entries: sign-in verified, the agent step's actions, then its completion. */
function jobEntries(actions: readonly AgentAction[] = RECORDED, completed = true): LedgerEntry[] {
  return [
    entry('job-created', 'crm-sign-in'),
    entry('step-completed', 'crm-sign-in', { evidence: { signedIn: true } }),
    entry('step-started', 'update-contact'),
    ...actions.map((a, i) => chosen('update-contact', i + 1, a)),
    ...(completed ? [entry('step-completed', 'update-contact', { evidence: EVIDENCE })] : []),
  ];
}

function path(actions: readonly AgentAction[], more: Partial<RecordedPath> = {}): RecordedPath {
  return {
    step: 'update-contact',
    from: 'job job_1',
    actions,
    values: valuesOf(INPUTS, { 'update-contact': EVIDENCE }),
    askedPerson: false,
    healed: false,
    ...more,
  };
}

const opts = { from: 'job job_1 (tenant demo)', source: SOURCE };

/** The output with the file's own example inputs left out (they are the author's, copied as written). */
const withoutExamples = (text: string): string => {
  const value = parse(text) as Record<string, unknown>;
  delete value.exampleInputs;
  return JSON.stringify(value);
};

describe('Function: freezePlaybook (crm-contact-decl@1 from a job)', () => {
  it('writes the agent step as a scripted step with placeholders, keeping ids, kind, app and expect', async () => {
    const spec = await demo();
    const frozen = freezePlaybook(
      spec,
      pathsFromEntries(jobEntries(), INPUTS, 'job_1', ['update-contact']),
      opts,
    );
    expect(frozen.spec.name).toBe('crm-contact-decl-frozen');
    expect(frozen.spec.version).toBe(1);
    expect(frozen.kept).toEqual([]);
    expect(frozen.frozen).toEqual([{ step: 'update-contact', from: 'job job_1', actions: 3 }]);
    expect(frozen.spec.steps[0]).toEqual(spec.steps[0]);
    const step = frozen.spec.steps[1] as ScriptedStep;
    const original = agentOf(spec);
    expect(step).toMatchObject({ id: original.id, title: original.title, kind: 'write', app: 'crm' });
    expect(step.expect).toEqual(original.expect);
    expect('agent' in step).toBe(false);
    expect(step.startsAt).toEqual({
      path: '/customers/{{inputs.customerId | url}}/edit',
      ready: { role: 'textbox', name: 'Contact name', exact: true },
    });
    expect(step.actions).toEqual([
      { goto: '/customers/{{inputs.customerId | url}}/edit' },
      {
        fill: {
          target: { role: 'textbox', name: 'Contact name', exact: true },
          value: '{{inputs.contactName}}',
        },
      },
      { fill: { target: { role: 'textbox', name: 'Phone', exact: true }, value: '{{inputs.phone}}' } },
      { click: { role: 'button', name: 'Save record', exact: true } },
    ]);
    // The agent probe (a model's answer) becomes the step's own expect checks read off the probe's page.
    expect(step.probe).toEqual({
      goto: '/customers/{{inputs.customerId | url}}',
      checks: original.expect.checks,
      evidence: (original.probe as { agent: { evidence: unknown } }).agent.evidence,
    });
  });

  it('writes a file that loads through the declarative loader and validates against playbook.schema.json', async () => {
    const frozen = freezePlaybook(
      await demo(),
      pathsFromEntries(jobEntries(), INPUTS, 'job_1', ['update-contact']),
      { ...opts, schemaFile: join(PLAYBOOKS, 'playbook.schema.json'), outDir: '/tmp/x' },
    );
    expect(frozen.text.split('\n')[0]).toMatch(
      /^# yaml-language-server: \$schema=.*playbooks\/playbook\.schema\.json$/,
    );
    expect(frozen.text).toContain('# FROZEN agent step: 3 recorded actions from job job_1, no model.');
    // Written out as a person would, with no YAML anchors for what the step shares with its original.
    expect(frozen.text).not.toMatch(/[&*]a\d/);
    const parsed = parseDeclarative(frozen.text);
    expect(parsed.ok ? [] : parsed.problems).toEqual([]);
    const playbook = compileDeclarative(parsed.ok ? parsed.spec : frozen.spec, 'frozen.playbook.yaml');
    expect(playbook.steps.map((s) => [s.id, s.kind, 'agent' in s])).toEqual([
      ['crm-sign-in', 'read', false],
      ['update-contact', 'write', false],
    ]);
    expect(typeof playbook.steps[1]?.probe).toBe('function');
    const schema = JSON.parse(await readFile(join(PLAYBOOKS, 'playbook.schema.json'), 'utf8'));
    const validate = new Ajv2020({ strict: false }).compile(schema);
    expect(validate(parse(frozen.text)), JSON.stringify(validate.errors)).toBe(true);
  });

  it("holds no value of the job and no secret: the password is a reference, the job's values placeholders", async () => {
    const typed: AgentAction[] = [
      { name: 'fill', target: { role: 'textbox', name: 'Password' }, value: '{{secret:password}}' },
      // A value embedded in a longer text is replaced too.
      { name: 'fill', target: { role: 'textbox', name: 'Notes' }, value: `Call ${INPUTS.contactName} first` },
      ...RECORDED,
    ];
    const frozen = freezePlaybook(
      await demo(),
      pathsFromEntries(jobEntries(typed), INPUTS, 'job_1', ['update-contact']),
      opts,
    );
    const text = withoutExamples(frozen.text);
    for (const value of [...Object.values(INPUTS), PASSWORD]) expect(text).not.toContain(value);
    const step = frozen.spec.steps[1] as ScriptedStep;
    expect(step.actions.slice(1, 3)).toEqual([
      {
        fill: {
          target: { role: 'textbox', name: 'Password', exact: true },
          value: '{{credentials.password}}',
        },
      },
      {
        fill: {
          target: { role: 'textbox', name: 'Notes', exact: true },
          value: 'Call {{inputs.contactName}} first',
        },
      },
    ]);
    expect(valuesLeft(step.actions, path(RECORDED).values, { password: PASSWORD })).toEqual([]);
  });

  it('the scan finds a value or a secret left in the actions', () => {
    const values = path(RECORDED).values;
    expect(valuesLeft([{ fill: { target: 'x', value: `+${INPUTS.phone}` } }], values)).toEqual([
      'inputs.phone',
      'evidence.update-contact.phone',
    ]);
    expect(valuesLeft([{ goto: `/p?x=${PASSWORD}` }], values, { password: PASSWORD })).toEqual([
      'secret:password',
    ]);
    expect(
      valuesLeft([{ goto: '/customers/{{inputs.customerId}}' }], values, { password: PASSWORD }),
    ).toEqual([]);
  });
});

describe('Function: freezeStep (steps kept as agent steps)', () => {
  it.each([
    [
      'a person was asked',
      path(RECORDED, { askedPerson: true }),
      'its recorded path asked a person (ask_person)',
    ],
    ['the path was healed', path(RECORDED, { healed: true }), 'action-healed'],
    [
      'a role with no target',
      path([{ name: 'select', target: { role: 'listbox', name: 'Tier' }, option: 'Gold' }, ...RECORDED]),
      'action 1 (select) targets a listbox, a role the declarative form has no target for',
    ],
    [
      'a goto to another host',
      path([{ name: 'goto', url: 'https://crm.example.com/customers' }, ...RECORDED]),
      'action 1 (goto) goes to an absolute URL',
    ],
    [
      'a secret other than the password',
      path([
        { name: 'fill', target: { role: 'textbox', name: 'PIN' }, value: '{{secret:pin}}' },
        ...RECORDED,
      ]),
      'types the secret pin',
    ],
    [
      'a value the ledger masked',
      path([{ name: 'fill', target: { role: 'textbox', name: 'Card' }, value: '[redacted]' }, ...RECORDED]),
      'the ledger masked the value',
    ],
    [
      'a target named by the job data',
      path([{ name: 'click', target: { role: 'link', name: `Open ${INPUTS.contactName}` } }, ...RECORDED]),
      "targets an element named by the job's data",
    ],
    [
      'braces a template would read',
      path([{ name: 'fill', target: { role: 'textbox', name: 'Notes' }, value: '{{jobId}}' }, ...RECORDED]),
      'that a template would read as a reference',
    ],
    ['nothing before done', path([{ name: 'done', summary: 'nothing to do' }]), 'no action before done'],
  ])('keeps the step when %s', async (_what, recorded, reason) => {
    const out = freezeStep(agentOf(await demo()), recorded);
    expect(out.ok).toBe(false);
    expect(out.ok ? '' : out.reason).toContain(reason);
  });

  it('keeps a write whose probe asks a model when its expect has no checks to read instead', async () => {
    const step = agentOf(await demo());
    const out = freezeStep({ ...step, expect: { url: '^/customers/[^/]+$' } }, path(RECORDED));
    expect(out.ok ? '' : out.reason).toContain('its probe asks a model');
  });

  it('marks a kept step in the file and freezes the others', async () => {
    const spec = await demo();
    const again: AgentStepSpec = { ...agentOf(spec), id: 'update-contact-again' };
    spec.steps.push(again);
    const paths = new Map([
      ['update-contact', path(RECORDED)],
      ['update-contact-again', path(RECORDED, { step: again.id, healed: true })],
    ]);
    const frozen = freezePlaybook(spec, paths, opts);
    expect(frozen.frozen.map((f) => f.step)).toEqual(['update-contact']);
    expect(frozen.kept).toEqual([
      {
        step: 'update-contact-again',
        reason:
          'its recorded path was healed (action-healed): the page changed under it, which a script cannot follow',
      },
    ]);
    expect(frozen.spec.steps[2]).toEqual(again);
    expect(frozen.text).toContain(
      '# KEPT AS AN AGENT STEP: its recorded path was healed (action-healed): the page changed under it',
    );
    expect(frozen.text).toContain('# Kept as agent steps (they still ask a model): update-contact-again.');
    const parsed = parseDeclarative(frozen.text);
    expect(parsed.ok ? [] : parsed.problems).toEqual([]);
  });
});

describe('Refusals', () => {
  it('refuses a playbook with no agent steps', async () => {
    const spec = await demo();
    const noAgents = { ...spec, steps: [spec.steps[0] as DeclarativePlaybook['steps'][number]] };
    expect(() => freezePlaybook(noAgents, new Map(), opts)).toThrow(
      new FreezeError('crm-contact-decl@1 has no agent steps: there is no recorded path to freeze'),
    );
  });

  it('refuses when no agent step can be frozen, naming each and why', async () => {
    const paths = new Map([['update-contact', path(RECORDED, { askedPerson: true })]]);
    const spec = await demo();
    expect(() => freezePlaybook(spec, paths, opts)).toThrow(
      'no agent step of crm-contact-decl@1 can be frozen: update-contact: its recorded path asked a person (ask_person)',
    );
  });

  it('refuses a job whose agent step never verified', () => {
    expect(() => pathsFromEntries(jobEntries(RECORDED, false), INPUTS, 'job_1', ['update-contact'])).toThrow(
      'step update-contact of job job_1 never verified: freeze from a job that succeeded',
    );
  });

  it('refuses a step that verified without its actions reaching done (its probe found the write)', () => {
    const cut = [
      ...jobEntries(RECORDED.slice(0, 3), false),
      entry('step-completed', 'update-contact', { evidence: EVIDENCE }),
    ];
    expect(() => pathsFromEntries(cut, INPUTS, 'job_1', ['update-contact'])).toThrow(
      /without its recorded actions reaching done/,
    );
  });

  it("names an earlier step's evidence as a placeholder, never the step's own or a later one's", async () => {
    const typed: AgentAction[] = [
      { name: 'fill', target: { role: 'textbox', name: 'Account' }, value: 'ada@example.com' },
      ...RECORDED,
    ];
    const entries = jobEntries(typed);
    (entries[1] as LedgerEntry).evidence = { username: 'ada@example.com' };
    const order = ['crm-sign-in', 'update-contact'];
    const paths = pathsFromEntries(entries, INPUTS, 'job_1', ['update-contact'], order);
    const frozen = freezePlaybook(await demo(), paths, opts);
    expect((frozen.spec.steps[1] as ScriptedStep).actions[1]).toEqual({
      fill: {
        target: { role: 'textbox', name: 'Account', exact: true },
        value: '{{evidence.crm-sign-in.username}}',
      },
    });
    expect(parseDeclarative(frozen.text).ok).toBe(true);
    // The step's own evidence is not a value it had when it ran.
    const own = paths.get('update-contact')?.values.map(([name]) => name) ?? [];
    expect(own.filter((n) => n.startsWith('evidence.update-contact'))).toEqual([]);
    // With the order reversed, sign-in's evidence is a later step's: not a placeholder.
    const reversed = pathsFromEntries(entries, INPUTS, 'job_1', ['update-contact'], [...order].reverse());
    expect(reversed.get('update-contact')?.values.map(([name]) => name)).toEqual(
      expect.not.arrayContaining(['evidence.crm-sign-in.username']),
    );
  });

  it('reads an answered question and a heal from the record in force', () => {
    const entries = jobEntries();
    entries.splice(5, 0, chosen('update-contact', 2, RECORDED[1] as AgentAction, 'action-healed'));
    const read = pathsFromEntries(entries, INPUTS, 'job_1', ['update-contact']).get('update-contact');
    expect(read?.healed).toBe(true);
    expect(read?.askedPerson).toBe(false);
    expect(read?.actions).toEqual(RECORDED);
  });

  it('refuses a job not found for the tenant, and a job of another playbook', async () => {
    const job = { playbook: 'crm-contact-agent@1', inputs: INPUTS } as unknown as Job;
    const found = { readJob: async () => ({ job, entries: jobEntries() }) };
    await expect(
      pathsFromJob(found, 'demo', 'job_1', 'crm-contact-decl@1', ['update-contact']),
    ).rejects.toThrow('job job_1 is a job of crm-contact-agent@1, not of crm-contact-decl@1');
    const missing = {
      readJob: async (): Promise<never> => {
        throw new JobNotFoundError('acme', 'job_9');
      },
    };
    await expect(
      pathsFromJob(missing, 'acme', 'job_9', 'crm-contact-decl@1', ['update-contact']),
    ).rejects.toThrow('job job_9 is not found for tenant acme');
  });

  it('refuses a step with no verified cache entry, naming the step', () => {
    const demoted = {
      status: 'demoted',
      key: { step: 'update-contact' },
      actions: [],
      createdAt: '2026-01-02',
    };
    expect(() => pathsFromCacheItems([demoted], 'demo', 'crm-contact-decl@1', ['update-contact'])).toThrow(
      'step update-contact of crm-contact-decl@1 has no verified action-cache entry for tenant demo: run a job of it first, or give --job <jobId>',
    );
  });
});

describe('Function: pathsFromCacheItems', () => {
  const cached = (entryId: string, createdAt: string, more: Record<string, unknown> = {}) => ({
    status: 'verified',
    entryId,
    jobId: `job_${entryId}`,
    createdAt,
    key: { step: 'update-contact' },
    actions: [
      { name: 'fill', target: { role: 'textbox', name: 'Contact name' }, value: '{{inputs.contactName}}' },
      { name: 'click', target: { role: 'button', name: 'Save record' } },
      { name: 'done', summary: 'saved' },
    ],
    ...more,
  });

  it('takes the newest verified entry per step, and freezes its placeholders as they are', async () => {
    const items = [
      cached('ac_old', '2026-11-01T00:00:00.000Z'),
      cached('ac_new', '2026-11-03T00:00:00.000Z'),
      cached('ac_demoted', '2026-11-04T00:00:00.000Z', { status: 'demoted' }),
    ];
    const paths = pathsFromCacheItems(items, 'demo', 'crm-contact-decl@1', ['update-contact']);
    expect(paths.get('update-contact')).toMatchObject({
      from: 'cache entry ac_new (from job job_ac_new)',
      healed: false,
    });
    const frozen = freezePlaybook(await demo(), paths, { ...opts, from: 'the action cache of tenant demo' });
    expect((frozen.spec.steps[1] as ScriptedStep).actions).toEqual([
      { goto: '/customers/{{inputs.customerId | url}}/edit' },
      {
        fill: {
          target: { role: 'textbox', name: 'Contact name', exact: true },
          value: '{{inputs.contactName}}',
        },
      },
      { click: { role: 'button', name: 'Save record', exact: true } },
    ]);
  });

  it('counts an entry that replaced a healed one as healed', () => {
    const paths = pathsFromCacheItems([cached('ac_h', '2026-11-01', { healedFrom: 'ac_x' })], 'demo', 'p@1', [
      'update-contact',
    ]);
    expect(paths.get('update-contact')?.healed).toBe(true);
  });
});

describe('Function: freezeCommand (refusals before any table is read)', () => {
  const run = async (id: string, out?: string): Promise<{ code: number; err: string[] }> => {
    const err: string[] = [];
    const code = await freezeCommand(
      id,
      {
        playbooks: [],
        tenant: 'demo',
        table: 'none',
        endpoint: 'http://127.0.0.1:9',
        ...(out ? { out } : {}),
      },
      { out: () => undefined, err: (l) => err.push(l) },
      {},
    );
    return { code, err };
  };

  it.each([
    ['nope@1', /^unknown playbook nope@1 \(known: .*crm-contact-decl@1/],
    [
      'crm-contact-agent@1',
      /^crm-contact-agent@1 is a TypeScript playbook \(playbooks\/crm-agent\/index.ts\): step update-contact's start, verify and probe are code/,
    ],
    ['crm-address@1', /^crm-address@1 has no agent steps/],
  ])('refuses %s', async (id, message) => {
    const { code, err } = await run(id);
    expect(code).toBe(1);
    expect(err.join('\n')).toMatch(message);
  });

  it('refuses an --out file that a playbook folder would not find', async () => {
    const { code, err } = await run('crm-contact-decl@1', '/tmp/frozen.yaml');
    expect(code).toBe(2);
    expect(err).toEqual([
      '--out: /tmp/frozen.yaml must end in .playbook.yaml (or .yml) to be found in a playbook folder',
    ]);
  });
});

describe('Declarative form: the checks probe', () => {
  it('refuses an agent probe on a scripted step and a checks probe with no checks', async () => {
    const frozen = freezePlaybook(
      await demo(),
      pathsFromEntries(jobEntries(), INPUTS, 'job_1', ['update-contact']),
      opts,
    );
    const value = parse(frozen.text) as { steps: Record<string, unknown>[] };
    const step = value.steps[1] as Record<string, unknown>;
    step.probe = { agent: { goto: '/customers/{{inputs.customerId}}', question: 'Saved?' } };
    let parsed = parseDeclarative(JSON.stringify(value));
    expect(parsed.ok ? [] : parsed.problems.map((p) => p.replace(/^line \d+, column \d+: /, ''))).toEqual([
      'steps[1].probe.agent: an agent probe goes with an agent step (a scripted step has no model)',
    ]);
    step.probe = { goto: '/customers/{{inputs.customerId}}', checks: [] };
    parsed = parseDeclarative(JSON.stringify(value));
    expect(parsed.ok ? [] : parsed.problems.map((p) => p.replace(/^line \d+, column \d+: /, ''))).toEqual([
      'steps[1].probe.checks: at least one check',
    ]);
  });
});
