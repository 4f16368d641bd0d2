/**
 * The declarative agent step (crm-contact-decl@1, YAML) in real Chromium against the demo CRM,
 * run as the engine runs a step (harness): the local policy fills and saves the form from the
 * file's goal, the compiled `expect` verifies it, and its agent probe answers from the record
 * page, `absent` before the save and `done` after it, each answer recorded with what it cost.
 */
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { demoCredentials } from '../../../demo/accounts.ts';
import type { SiteAdmin } from '../../../demo/sites/admin-client.ts';
import { siteAdmin } from '../../../demo/sites/admin-client.ts';
import type { StartedSites } from '../../../demo/sites/index.ts';
import { startSites } from '../../../demo/sites/index.ts';
import { configureAgentModels } from '../../../lambdas/lib/agent/registry.ts';
import type { Playbook, Step, StepContext } from '../../../lambdas/lib/playbooks/contract.ts';
import { readDeclarativePlaybook } from '../../../lambdas/lib/playbooks/declarative/read.ts';
import { memoryStepActions } from '../../../lambdas/lib/playbooks/memory-actions.ts';
import { CountingPolicy } from '../../support/agent.ts';
import {
  contextFor,
  type Job,
  launchChromium,
  newJob,
  ready,
  signedInContext,
  stepOf,
} from '../playbooks/harness.ts';

type Inputs = Record<string, unknown>;

const FILE = join(import.meta.dirname, '..', '..', '..', 'playbooks', 'crm-contact-decl.playbook.yaml');
const INPUTS = { customerId: 'C-1003', contactName: 'Mei Chen-Ward', phone: '+44 117 496 0999' };
const EVIDENCE = { customerId: 'C-1003', contact: 'Mei Chen-Ward', phone: '+44 117 496 0999' };

class Crash extends Error {}

let browser: Browser;
let sites: StartedSites;
let crm: SiteAdmin;
let context: BrowserContext;
let page: Page;
let policy: CountingPolicy;
let playbook: Playbook;
let step: Step<Inputs>;

beforeAll(async () => {
  sites = await startSites();
  crm = siteAdmin(sites.crm.baseUrl, sites.adminToken);
  browser = await launchChromium();
  playbook = (await readDeclarativePlaybook(FILE, 'playbooks/crm-contact-decl.playbook.yaml')).playbook;
  step = stepOf(playbook, 'update-contact');
});

afterAll(async () => {
  await browser?.close();
  await sites?.stop();
});

beforeEach(async () => {
  await crm.reset();
  context = await browser.newContext();
  page = await context.newPage();
  await signedInContext(context, sites.crm.baseUrl, 'crm', 'ada@example.com');
  policy = new CountingPolicy();
  configureAgentModels(() => policy);
});

afterEach(async () => {
  await context.close();
});

type Actions = ReturnType<typeof memoryStepActions>;

function jobAndRecord(inputs: Inputs = INPUTS): { job: Job<Inputs>; actions: Actions } {
  return { job: newJob(sites, inputs, { crm: 'ada@example.com' }), actions: memoryStepActions() };
}

/** The step's context as RunStep gives it, with its record kept across attempts; `crashAt` throws at a fault point. */
function contextOf(
  job: Job<Inputs>,
  actions: Actions,
  crashAt?: { point: string; action: number },
): StepContext<Inputs> {
  return {
    ...contextFor(job, step),
    actions,
    faultPoint: async (point, at) => {
      if (crashAt && point === crashAt.point && at?.action === crashAt.action) throw new Crash(point);
    },
  };
}

const chosen = (actions: Actions) =>
  actions.entries.filter((e) => e.type === 'action-chosen').map((e) => e.detail.describe);

describe('Declarative agent step: crm-contact-decl@1 update-contact', () => {
  it('fills and saves the form from its goal; the compiled expect verifies it with the record as evidence', async () => {
    expect(playbook.steps.map((s) => [s.id, s.kind])).toEqual([
      ['crm-sign-in', 'read'],
      ['update-contact', 'write'],
    ]);
    const { job, actions } = jobAndRecord();
    const ctx = contextOf(job, actions);
    expect(await ready(step, page, ctx)).toEqual({ ok: true });
    expect(new URL(page.url()).pathname).toBe('/customers/C-1003/edit');
    await step.run(page, ctx);
    expect(chosen(actions)).toEqual([
      'fill textbox "Contact name" = "Mei Chen-Ward"',
      'fill textbox "Phone" = "+44 117 496 0999"',
      'click button "Save record"',
      'done: the form was filled and submitted',
    ]);
    expect(policy.calls).toBe(4);
    expect(await step.verify(page, ctx)).toEqual(EVIDENCE);
    expect((await crm.writes()).count).toBe(1);
  });

  it('does not verify when the record does not show the new values (nothing was saved)', async () => {
    const { job, actions } = jobAndRecord();
    const ctx = contextOf(job, actions);
    await page.goto(`${sites.crm.baseUrl}/customers/C-1003`);
    expect(await step.verify(page, ctx)).toBeNull();
  });
});

describe('Declarative agent probe: crm-contact-decl@1 update-contact', () => {
  it('answers absent before the save and done after it, from the record page, recording each answer', async () => {
    const { job, actions } = jobAndRecord();
    const ctx = contextOf(job, actions);
    // The model's absent stands because the record's own fields, read by its checks, agree.
    const absent = await step.probe?.(page, ctx);
    expect(absent?.status).toBe('absent');
    expect(absent && 'detail' in absent ? absent.detail : '').toMatch(
      /^local: the page does not show "Mei Chen-Ward", "\+44 117 496 0999"; the page's data agrees \(.*differs\)$/,
    );
    expect(new URL(page.url()).pathname).toBe('/customers/C-1003');

    expect(await ready(step, page, ctx)).toEqual({ ok: true });
    await step.run(page, ctx);
    const writes = (await crm.writes()).count;
    expect(writes).toBe(1);
    expect(await step.probe?.(page, ctx)).toEqual({ status: 'done', evidence: EVIDENCE });
    // The probe only looked: no write, no action of the step.
    expect((await crm.writes()).count).toBe(writes);
    expect(chosen(actions)).toHaveLength(4);

    expect(policy.probeCalls).toBe(2);
    expect(actions.probeAnswers.map((a) => (a.detail.answer as { status: string }).status)).toEqual([
      'absent',
      'done',
    ]);
    expect(actions.probeAnswers[1]).toMatchObject({
      detail: {
        facts: 'matches',
        checked: 'done',
        question:
          'Does this customer record show the contact "Mei Chen-Ward" and the phone "+44 117 496 0999"?',
        model: 'local',
        usage: { input: 0, output: 0 },
        seen: { url: `${sites.crm.baseUrl}/customers/C-1003` },
      },
      cost: { modelTokens: 0, modelUsd: 0 },
    });
    expect(JSON.stringify(actions.probeAnswers[1]?.detail.seen)).toContain('definition: Mei Chen-Ward');
    // The model was shown the question and the page, never the account's password.
    const password = demoCredentials('crm', 'ada@example.com').password;
    expect(JSON.stringify([policy.probeSeen, actions.probeAnswers])).not.toContain(password);
  });

  it('finds the write done when the worker died after the saving click ran: nothing is replayed', async () => {
    const { job, actions } = jobAndRecord();
    const ctx = contextOf(job, actions, { point: 'action-executed', action: 3 });
    expect(await ready(step, page, ctx)).toEqual({ ok: true });
    await expect(step.run(page, ctx)).rejects.toBeInstanceOf(Crash);
    expect(await step.probe?.(page, ctx)).toMatchObject({ status: 'done', evidence: EVIDENCE });
    expect(policy.calls).toBe(3);
    expect((await crm.writes()).count).toBe(1);
  });

  it('is unknown, asking no model, on a page that is not there (HTTP 404)', async () => {
    const { job, actions } = jobAndRecord({ ...INPUTS, customerId: 'C-9999' });
    expect(await step.probe?.(page, contextOf(job, actions))).toEqual({
      status: 'unknown',
      detail: 'crm answered /customers/C-9999 with HTTP 404',
    });
    expect(policy.probeCalls).toBe(0);
    expect(actions.probeAnswers).toHaveLength(0);
  });
});
