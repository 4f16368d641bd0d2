/**
 * The chaos plan without a stack: the default run is the one the suite planned before it could
 * run any playbook (fixtures written by that planner), the same seed gives the same plan, and a
 * playbook other than the demo ones gets only the faults that can land in it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
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

/** The fields a plan had before it could run any playbook (the fixtures hold those). */
const asBefore = (jobs: JobSpec[]): unknown[] =>
  jobs.map(({ index, jobId, playbook, body, resource, sites, writes, faults }) => ({
    index,
    jobId,
    playbook,
    body,
    resource,
    sites,
    writes,
    faults,
  }));

const kindsOf = (jobs: JobSpec[]): FaultKind[] => jobs.flatMap((j) => j.faults.map((f) => f.kind));
const GENERIC = ['crm-contact-agent@1', 'crm-address@1'];

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

describe('Function: planRun, the default run', () => {
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
    const plan = planRun(createPrng(seed), runs, seed, catalog);
    expect(asBefore(plan.jobs)).toEqual(before);
    expect(plan.unplanned).toEqual({});
    // Told the demo playbooks by name, it plans the same.
    expect(planRun(createPrng(seed), runs, seed, catalog, { playbooks: DEMO_PLAYBOOKS }).jobs).toEqual(
      plan.jobs,
    );
  });

  it('counts the demo playbooks’ writes by their idempotency key, every kind in a run of four', () => {
    const { jobs } = planRun(createPrng(1), 4, 1, catalog);
    expect(new Set(jobs.map((j) => j.counting))).toEqual(new Set(['key']));
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

describe('Function: planRun, any playbook', () => {
  it('gives the same plan for the same seed, another for another seed', () => {
    const plan = (seed: number): string =>
      JSON.stringify(planRun(createPrng(seed), 6, seed, catalog, { playbooks: GENERIC }));
    expect(plan(9001)).toBe(plan(9001));
    expect(plan(9002)).not.toBe(plan(9001));
  });

  it.each([11, 12, 13, 14, 15])(
    'puts a kill in the middle of an action only where the step has one (seed %i)',
    (seed) => {
      const { jobs } = planRun(createPrng(seed), 12, seed, catalog, { playbooks: GENERIC });
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
      const { jobs } = planRun(createPrng(seed), 12, seed, catalog, { playbooks: GENERIC });
      for (const job of jobs) {
        for (const f of job.faults) {
          if (f.kind === 'layout-change') expect(job.playbook).toBe('crm-address@1');
          if ('moment' in f || f.kind === 'layout-change') expect(f.stepIndex).toBeGreaterThanOrEqual(1);
        }
      }
      expect(kindsOf(jobs)).toContain('layout-change');
    }
  });

  it('counts its writes by site, holds that site, and asks each job for a change of its own', () => {
    const { jobs } = planRun(createPrng(5), 4, 5, catalog, { playbooks: GENERIC });
    const agent = jobs.filter((j) => j.playbook === 'crm-contact-agent@1');
    expect(agent).toHaveLength(2);
    for (const job of jobs) {
      expect(job).toMatchObject({ counting: 'site', resource: 'site:crm', sites: ['crm'] });
      expect(job.body.accounts).toEqual({ crm: 'acct_demo_crm' });
      expect(catalog.playbook(job.playbook).inputProblems(job.body.inputs)).toEqual([]);
    }
    // The agent step decides with the offline local policy; the first free-text input carries the job's id.
    expect(agent.map((j) => j.body.model)).toEqual(['local', 'local']);
    expect(agent.map((j) => (j.body.inputs as { contactName: string }).contactName)).toEqual(
      agent.map((j) => `Mei Chen-Ward ${j.jobId}`),
    );
    expect(jobs.find((j) => j.playbook === 'crm-address@1')?.writes.map((w) => w.step)).toEqual([
      'update-crm-address',
    ]);
  });

  it('plans no sign-in expiry, drop or layout change on a site that cannot take them, and says so', () => {
    const sites = { crm: { records: true, faults: false, sessions: false } };
    const { jobs, unplanned } = planRun(createPrng(3), 6, 3, catalog, { playbooks: GENERIC, sites });
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
    const full = planRun(createPrng(3), 6, 3, catalog, { playbooks: GENERIC, sites: { crm: FULL_CONTRACT } });
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
