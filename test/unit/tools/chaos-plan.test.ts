/**
 * The chaos plan without a stack: the demo playbooks' run is the one the suite planned before it
 * could run any playbook (fixtures written by that planner), the default mixes every playbook of
 * the repository on records of each one's own, the same seed gives the same plan, and a playbook
 * the suite does not know gets only the faults that can land in it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { seedCrm } from '../../../demo/sites/crm/data.ts';
import type { Playbook } from '../../../lambdas/lib/playbooks/contract.ts';
import { definePlaybook } from '../../../lambdas/lib/playbooks/define.ts';
import { formSignIn } from '../../../lambdas/lib/playbooks/form-sign-in.ts';
import { signInStep } from '../../../lambdas/lib/playbooks/sign-in-step.ts';
import { catalogOf, type PlaybookCatalog } from '../../../tools/chaos/catalog.ts';
import { FAULT_KINDS, type FaultKind, faultsPerKind } from '../../../tools/chaos/faults.ts';
import { DEMO_PLAYBOOKS, type JobSpec, planRun } from '../../../tools/chaos/plan.ts';
import { createPrng } from '../../../tools/chaos/prng.ts';
import { FULL_CONTRACT } from '../../../tools/chaos/sites.ts';
import { registryOf, repoPlaybooks } from '../../support/playbooks.ts';

let catalog: PlaybookCatalog;
beforeAll(async () => {
  catalog = catalogOf(await repoPlaybooks());
});

/** The fields a plan had before it could run any playbook (the fixtures hold those; one resource each then). */
const asBefore = (jobs: JobSpec[]): unknown[] =>
  jobs.map(({ index, jobId, playbook, body, resources, sites, writes, faults }) => ({
    index,
    jobId,
    playbook,
    body,
    resource: resources.join(' '),
    sites,
    writes: writes.map(({ site, step, key }) => ({ site, step, key })),
    faults,
  }));

const kindsOf = (jobs: JobSpec[]): FaultKind[] => jobs.flatMap((j) => j.faults.map((f) => f.kind));
/** An agent playbook and a declarative one, both on the demo CRM. */
const CRM_PAIR = ['crm-contact-agent@1', 'crm-address@1'];

/** A TypeScript playbook of an application the demo tenant has no account for. */
function notesPlaybook(): Playbook {
  const app = formSignIn({
    name: 'notes',
    signInPath: '/login',
    username: '#u',
    password: '#p',
    submit: '#go',
    signedIn: '#me',
  });
  const save = {
    id: 'save-note',
    title: 'Save a note',
    kind: 'write' as const,
    app: 'notes',
    precondition: async () => ({ ok: true as const }),
    restore: async () => undefined,
    run: async () => undefined,
    verify: async () => ({ saved: true }),
    probe: async () => ({ status: 'absent' as const }),
  };
  return definePlaybook({
    name: 'notes',
    version: 1,
    description: 'Saves a note.',
    inputSchema: z.object({ text: z.string().max(40) }).strict(),
    exampleInputs: { text: 'hello' },
    applications: { notes: app },
    steps: [signInStep('sign-in', 'notes', app), save],
  });
}

describe('Function: catalogOf', () => {
  it('reads off each step whether it signs in, is an agent step, and where the middle of its action is', () => {
    const facts = (id: string): unknown[] =>
      catalog.steps(id).map((s) => [s.id, s.kind, s.signIn, s.agent, s.midAction ?? null]);
    // The declarative form: `signIn: true` is the SDK's sign-in step; a step of ten actions has
    // a middle, a step of one (a goto) has none.
    expect(facts('crm-address@1')).toEqual([
      ['crm-sign-in', 'read', true, false, null],
      ['update-crm-address', 'write', false, false, { point: 'mid-action' }],
      ['verify-crm-address', 'read', false, false, null],
    ]);
    expect(facts('crm-contact-agent@1')).toEqual([
      ['crm-sign-in', 'read', true, false, null],
      ['update-contact', 'write', false, true, { point: 'action-recorded', action: 1 }],
    ]);
    expect(catalog.steps('checkout@1').find((s) => s.id === 'apply-promo')?.midAction).toEqual({
      point: 'mid-action',
      onlyWith: 'promoCode',
    });
  });
});

describe('Function: planRun, the demo playbooks', () => {
  it.each([
    [4242, 4],
    [16180, 30],
  ])('plans seed %i with %i jobs as the suite did when it ran the demo playbooks only', (seed, runs) => {
    const fixture = readFileSync(
      join(import.meta.dirname, 'fixtures', `chaos-plan-seed-${seed}-${runs}.jsonl`),
      'utf8',
    );
    const before = fixture
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as unknown);
    const plan = planRun(createPrng(seed), runs, seed, catalog, { playbooks: DEMO_PLAYBOOKS });
    expect(asBefore(plan.jobs)).toEqual(before);
    expect(plan.unplanned).toEqual({});
  });

  it('counts the demo playbooks’ writes by their idempotency key, every kind in a run of four', () => {
    const { jobs } = planRun(createPrng(1), 4, 1, catalog, { playbooks: DEMO_PLAYBOOKS });
    expect(new Set(jobs.map((j) => j.counting))).toEqual(new Set(['key']));
    expect(new Set(jobs.flatMap((j) => j.writes.map((w) => w.countedBy)))).toEqual(new Set(['site']));
    expect(new Set(kindsOf(jobs))).toEqual(new Set(FAULT_KINDS));
    expect(new Set(jobs.map((j) => j.playbook))).toEqual(new Set(DEMO_PLAYBOOKS));
    const shop = jobs.filter((j) => j.playbook === 'checkout@1').map((j) => j.body.accounts.shop);
    expect(shop).toEqual(expect.arrayContaining(['acct_demo_shop_totp', 'acct_demo_shop_sms']));
  });

  it('plans every kind six times over thirty jobs (five must land), a dropped response never with a kill after that write', () => {
    expect(faultsPerKind(30)).toBe(6);
    const plan = planRun(createPrng(7), 30, 7, catalog);
    for (const kind of FAULT_KINDS) expect(kindsOf(plan.jobs).filter((k) => k === kind)).toHaveLength(6);
    let checked = 0;
    for (const job of planRun(createPrng(30), 30, 30, catalog).jobs) {
      const drop = job.faults.find((f) => f.kind === 'drop-write-response');
      const after = job.faults.filter(
        (f) => f.kind === 'worker-kill:after-action' || f.kind === 'worker-kill:during-checkpoint',
      );
      if (drop && job.playbook === 'crm-billing-sync@1') {
        expect(after.map((f) => f.step)).not.toContain(drop.step);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(0);
  });
});

/** The demo CRM customers (by id) a job names in its inputs, by id or by the seed's email. */
function customersOf(job: JobSpec): string[] {
  const byEmail = new Map(Object.values(seedCrm().customers).map((c) => [c.email, c.id]));
  const found: string[] = [];
  const walk = (v: unknown, key = ''): void => {
    if (typeof v === 'string') {
      if (key === 'customerId') found.push(v);
      if (key === 'customerEmail') found.push(byEmail.get(v) ?? v);
    } else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  walk(job.body.inputs);
  return [...new Set(found)];
}

describe('Function: planRun, the default run', () => {
  it('mixes every playbook of the repository’s playbooks/ folder, each taking jobs in turn', () => {
    const shipped = catalog.shipped();
    // The repository's catalog is its playbooks/ folder, all of it.
    expect(shipped).toEqual(catalog.ids());
    expect(shipped.length).toBeGreaterThan(DEMO_PLAYBOOKS.length);
    const { jobs } = planRun(createPrng(77), shipped.length * 2, 77, catalog);
    for (const id of shipped) expect(jobs.filter((j) => j.playbook === id)).toHaveLength(2);
    for (const job of jobs) expect(catalog.playbook(job.playbook).inputProblems(job.body.inputs)).toEqual([]);
    // Agent steps decide with the offline local policy; no shipped playbook's writes are counted by holding a site.
    for (const job of jobs) {
      expect(job.body.model === 'local').toBe(job.steps.some((s) => s.agent));
      expect(job.counting).not.toBe('site');
    }
  });

  it('gives each playbook records of its own: no customer one playbook’s jobs work on is another’s', () => {
    const { jobs } = planRun(createPrng(4242), 70, 4242, catalog);
    const owner = new Map<string, string>();
    for (const job of jobs)
      for (const id of [...customersOf(job), ...job.resources]) {
        expect(owner.get(id) ?? job.playbook, id).toBe(job.playbook);
        owner.set(id, job.playbook);
      }
    expect(new Set(owner.values()).size).toBe(catalog.shipped().length);
  });

  it('locks exactly the jobs that share a record (a customer, a shop account) out of running at once', () => {
    const { jobs } = planRun(createPrng(31), 42, 31, catalog);
    let sharing = 0;
    for (const [i, a] of jobs.entries())
      for (const b of jobs.slice(i + 1)) {
        const share =
          customersOf(a).some((c) => customersOf(b).includes(c)) ||
          (a.body.accounts.shop !== undefined && a.body.accounts.shop === b.body.accounts.shop);
        const locked = a.resources.some((r) => b.resources.includes(r));
        expect(locked, `${a.jobId} ${a.playbook} / ${b.jobId} ${b.playbook}`).toBe(share);
        if (share) sharing++;
      }
    expect(sharing).toBeGreaterThan(0);
    // An agent job on five customers holds all five; the next job of its playbook takes the other five.
    const records = jobs.filter((j) => j.playbook === 'crm-records-agent@1');
    expect(records[0]?.resources).toHaveLength(5);
    expect(records[0]?.resources.some((r) => records[1]?.resources.includes(r))).toBe(false);
    expect(records[0]?.resources).toEqual(records[2]?.resources);
  });

  it('sets values that carry the job’s id, so no job’s write is satisfied by another job’s', () => {
    const { jobs } = planRun(createPrng(8), 28, 8, catalog);
    const seen = new Map<string, string>();
    for (const job of jobs.filter((j) => j.counting === 'records'))
      for (const [k, v] of Object.entries(job.body.inputs as Record<string, unknown>)) {
        const records = k === 'customerId' ? [job.body.inputs] : typeof v === 'object' ? [v] : [];
        for (const r of records as Record<string, string>[])
          for (const f of ['contactName', 'email', 'notes'] as const) {
            const value = r[f];
            if (value === undefined) continue;
            expect(value).toContain(job.jobId);
            expect(seen.get(value) ?? job.jobId, value).toBe(job.jobId);
            seen.set(value, job.jobId);
          }
      }
    expect(seen.size).toBeGreaterThan(10);
  });
});

describe('Function: planRun, any playbook', () => {
  it('gives the same plan for the same seed, another for another seed', () => {
    const plan = (seed: number): string =>
      JSON.stringify(planRun(createPrng(seed), 6, seed, catalog, { playbooks: CRM_PAIR }));
    expect(plan(9001)).toBe(plan(9001));
    expect(plan(9002)).not.toBe(plan(9001));
  });

  it.each([11, 12, 13, 14, 15])(
    'puts a kill in the middle of an action only where the step has one (seed %i)',
    (seed) => {
      const { jobs } = planRun(createPrng(seed), 12, seed, catalog, { playbooks: CRM_PAIR });
      for (const job of jobs) {
        for (const f of job.faults.filter((x) => x.kind === 'worker-kill:mid-action')) {
          // The agent step: after its first action is in the ledger; the declarative write:
          // before its last action (verify-crm-address has one action, so no middle).
          if (job.playbook === 'crm-contact-agent@1')
            expect(f).toMatchObject({ step: 'update-contact', point: 'action-recorded', action: 1 });
          else expect(f).toMatchObject({ step: 'update-crm-address', point: 'mid-action' });
        }
      }
      expect(kindsOf(jobs)).toContain('worker-kill:mid-action');
    },
  );

  it('never switches the layout under an agent step, nor moments before the job is signed in', () => {
    for (const seed of [21, 22, 23, 24, 25]) {
      const { jobs } = planRun(createPrng(seed), 12, seed, catalog, { playbooks: CRM_PAIR });
      for (const job of jobs) {
        for (const f of job.faults) {
          if (f.kind === 'layout-change') expect(job.playbook).toBe('crm-address@1');
          if ('moment' in f || f.kind === 'layout-change') expect(f.stepIndex).toBeGreaterThanOrEqual(1);
        }
      }
      expect(kindsOf(jobs)).toContain('layout-change');
    }
  });

  it('counts the agent’s writes on its own customers, the declarative one’s by key, each job with a change of its own', () => {
    const { jobs } = planRun(createPrng(5), 4, 5, catalog, { playbooks: CRM_PAIR });
    const agent = jobs.filter((j) => j.playbook === 'crm-contact-agent@1');
    const address = jobs.filter((j) => j.playbook === 'crm-address@1');
    expect(agent).toHaveLength(2);
    for (const job of jobs) {
      expect(job.sites).toEqual(['crm']);
      expect(job.body.accounts).toEqual({ crm: 'acct_demo_crm' });
      expect(catalog.playbook(job.playbook).inputProblems(job.body.inputs)).toEqual([]);
    }
    // The agent submits the page's own key: its writes are the CRM's on the job's customer; the
    // two jobs take the playbook's two customers in turn, so they may run at once.
    const customers = agent.map((j) => (j.body.inputs as { customerId: string }).customerId);
    expect(customers).toEqual(['C-1010', 'C-1011']);
    for (const [k, job] of agent.entries()) {
      expect(job).toMatchObject({
        counting: 'records',
        scope: { field: 'customerId', values: [customers[k]] },
      });
      expect(job.body.model).toBe('local');
      // The contact name carries the job's id: no job's write is satisfied by another's.
      expect((job.body.inputs as { contactName: string }).contactName).toMatch(new RegExp(` ${job.jobId}$`));
    }
    expect(agent.map((j) => j.resources)).toEqual([
      ['customer:aoife@juniper.example'],
      ['customer:marcus@kestrel.example'],
    ]);
    // The declarative step sends Belay's key in the CRM form: counted under it, on its customers.
    expect(address.map((j) => [j.counting, j.resources])).toEqual([
      ['key', ['customer:nia@harbourhw.example']],
      ['key', ['customer:oliver@ivylane.example']],
    ]);
    expect(address[0]?.writes.map((w) => w.step)).toEqual(['update-crm-address']);
  });

  it('plans no sign-in expiry, drop or layout change on a site that cannot take them, and says so', () => {
    const sites = { crm: { records: true, faults: false, sessions: false } };
    const { jobs, unplanned } = planRun(createPrng(3), 6, 3, catalog, { playbooks: CRM_PAIR, sites });
    const kinds = new Set(kindsOf(jobs));
    for (const k of [
      'sign-in-expiry',
      'drop-write-response',
      'drop-write-no-byte',
      'layout-change',
    ] as const) {
      expect(kinds.has(k)).toBe(false);
      expect(unplanned[k]).toBe(faultsPerKind(6));
    }
    for (const k of ['worker-kill:before-action', 'browser-kill', 'stack-kill'] as const)
      expect(kinds.has(k)).toBe(true);
    // The same run on a site with the whole contract plans them.
    const full = planRun(createPrng(3), 6, 3, catalog, {
      playbooks: CRM_PAIR,
      sites: { crm: FULL_CONTRACT },
    });
    expect(full.unplanned).toEqual({});
  });

  it('plans no kill in the middle of a TypeScript step the suite cannot know the middle of', () => {
    const own = catalogOf({ registry: registryOf(notesPlaybook()), playbooks: [] });
    const { jobs, unplanned } = planRun(createPrng(8), 3, 8, own, {
      playbooks: ['notes@1'],
      accounts: { notes: ['acct_notes'] },
    });
    expect(kindsOf(jobs)).not.toContain('worker-kill:mid-action');
    expect(unplanned['worker-kill:mid-action']).toBe(1);
    expect(jobs.map((j) => (j.body.inputs as { text: string }).text)).toEqual(
      jobs.map((j) => `hello ${j.jobId}`),
    );
    // A marked input that would not fit the schema is left as it is.
    expect(own.playbook('notes@1').marked({ text: 'x'.repeat(39) }, 'chaos-s8-01')).toEqual({
      text: 'x'.repeat(39),
    });
  });

  it('counts by site, holding it, on a site with a records endpoint; by its probe, holding its account, on one without', () => {
    const own = catalogOf({ registry: registryOf(notesPlaybook()), playbooks: [] });
    const accounts = { notes: ['acct_notes'] };
    const bySite = planRun(createPrng(2), 2, 2, own, { playbooks: ['notes@1'], accounts });
    for (const job of bySite.jobs) {
      expect(job).toMatchObject({ counting: 'site', resources: ['site:notes'] });
      expect(job.writes).toEqual([{ site: 'notes', step: 'save-note', key: '', countedBy: 'site' }]);
    }
    const sites = { notes: { records: false, faults: false, sessions: false } };
    const byProbe = planRun(createPrng(2), 2, 2, own, { playbooks: ['notes@1'], accounts, sites });
    for (const job of byProbe.jobs) {
      expect(job.resources).toEqual(['account:notes:acct_notes']);
      expect(job.writes).toEqual([{ site: 'notes', step: 'save-note', key: '', countedBy: 'probe' }]);
    }
  });

  it('takes given inputs and accounts in turn, and refuses an application without an account', () => {
    const inputs = { 'crm-address@1': [{ a: 1 }, { a: 2 }] };
    const { jobs } = planRun(createPrng(4), 4, 4, catalog, {
      playbooks: ['crm-address@1'],
      inputs,
      accounts: { crm: ['acct_x', 'acct_y'] },
    });
    expect(jobs.map((j) => j.body.inputs)).toEqual([{ a: 1 }, { a: 2 }, { a: 1 }, { a: 2 }]);
    expect(jobs.map((j) => j.body.accounts.crm)).toEqual(['acct_x', 'acct_y', 'acct_x', 'acct_y']);
    const own = catalogOf({ registry: registryOf(notesPlaybook()), playbooks: [] });
    expect(() => planRun(createPrng(1), 1, 1, own, { playbooks: ['notes@1'] })).toThrow(
      /notes, for which the demo tenant has no account: give --account notes=/,
    );
  });
});
