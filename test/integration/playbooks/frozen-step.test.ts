/**
 * A frozen agent step in real Chromium against the demo CRM, run as the engine runs a step
 * (harness): crm-contact-decl@1's update-contact frozen from the path the local policy records,
 * compiled by the declarative loader, then run for another customer with no model, and its
 * checks probe (the step's expect checks read off the record page) answering absent before the
 * save, done after it, and unknown where it cannot see (an HTTP 404, a page without the record).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type SiteAdmin, siteAdmin } from '../../../demo/sites/admin-client.ts';
import { type StartedSites, startSites } from '../../../demo/sites/index.ts';
import type { AgentAction } from '../../../lambdas/lib/agent/actions.ts';
import { valuesOf } from '../../../lambdas/lib/agent/cache/placeholders.ts';
import type { Playbook, Step } from '../../../lambdas/lib/playbooks/contract.ts';
import { compileDeclarative } from '../../../lambdas/lib/playbooks/declarative/compile.ts';
import { parseDeclarative } from '../../../lambdas/lib/playbooks/declarative/read.ts';
import type { ScriptedStep } from '../../../lambdas/lib/playbooks/declarative/schema.ts';
import { freezePlaybook } from '../../../tools/playbook/freeze.ts';
import { contextFor, launchChromium, newJob, ready, signedInContext, stepOf } from './harness.ts';

type Inputs = Record<string, unknown>;

const FILE = join(import.meta.dirname, '..', '..', '..', 'playbooks', 'crm-contact-decl.playbook.yaml');
/** The job the path was recorded in, and the one the frozen step runs for. */
const RECORDED_INPUTS = { customerId: 'C-1003', contactName: 'Mei Chen-Ward', phone: '+44 117 496 0999' };
const OTHER = { customerId: 'C-1002', contactName: 'Omar Haddad-Reyes', phone: '+44 161 496 0777' };
/** What the local policy chose on the edit form (as `declarative-agent.test.ts` records it). */
const RECORDED: AgentAction[] = [
  { name: 'fill', target: { role: 'textbox', name: 'Contact name' }, value: RECORDED_INPUTS.contactName },
  { name: 'fill', target: { role: 'textbox', name: 'Phone' }, value: RECORDED_INPUTS.phone },
  { name: 'click', target: { role: 'button', name: 'Save record' } },
  { name: 'done', summary: 'the form was filled and submitted' },
];

let browser: Browser;
let sites: StartedSites;
let crm: SiteAdmin;
let context: BrowserContext;
let page: Page;
let playbook: Playbook<Inputs>;
let step: Step<Inputs>;
let frozenText: string;

beforeAll(async () => {
  const parsed = parseDeclarative(await readFile(FILE, 'utf8'));
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  const frozen = freezePlaybook(
    parsed.spec,
    new Map([
      [
        'update-contact',
        {
          step: 'update-contact',
          from: 'job job_rec',
          actions: RECORDED,
          values: valuesOf(RECORDED_INPUTS, {}),
          askedPerson: false,
          healed: false,
        },
      ],
    ]),
    { from: 'job job_rec', source: 'playbooks/crm-contact-decl.playbook.yaml' },
  );
  frozenText = frozen.text;
  const reread = parseDeclarative(frozen.text);
  if (!reread.ok) throw new Error(reread.problems.join('\n'));
  playbook = compileDeclarative(reread.spec, 'crm-contact-decl-frozen.playbook.yaml') as Playbook<Inputs>;
  step = stepOf(playbook, 'update-contact');
  sites = await startSites();
  crm = siteAdmin(sites.crm.baseUrl, sites.adminToken);
  browser = await launchChromium();
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
});

afterEach(async () => {
  await context.close();
});

describe('A frozen agent step: crm-contact-decl-frozen@1 update-contact', () => {
  it('is a scripted step that saves another customer with no model, and its probe finds the write', async () => {
    expect(playbook.id).toBe('crm-contact-decl-frozen@1');
    expect('agent' in step).toBe(false);
    const job = newJob(sites, OTHER as Inputs, { crm: 'ada@example.com' });
    const ctx = contextFor(job, step);

    expect(await step.probe?.(page, ctx)).toEqual({
      status: 'absent',
      detail: 'crm /^\\/customers\\/C-1002$/ does not show the write: testId "record-contact"',
    });
    expect(await ready(step, page, ctx)).toEqual({ ok: true });
    expect(new URL(page.url()).pathname).toBe('/customers/C-1002/edit');
    await step.run(page, ctx);
    const evidence = { customerId: 'C-1002', contact: OTHER.contactName, phone: OTHER.phone };
    expect(await step.verify(page, ctx)).toEqual(evidence);
    expect((await crm.writes()).count).toBe(1);
    // No model was asked anything: the step's record holds no decision and no probe answer.
    expect(ctx.actions.recorded()).toEqual([]);

    expect(await step.probe?.(page, ctx)).toEqual({ status: 'done', evidence });
    expect((await crm.writes()).count).toBe(1);
    expect((ctx.actions as unknown as { probeAnswers: unknown[] }).probeAnswers).toEqual([]);
  });

  it('is unknown, never absent, where it cannot see: an HTTP 404, a page without the record', async () => {
    const missing = newJob(sites, { ...OTHER, customerId: 'C-9999' } as Inputs, { crm: 'ada@example.com' });
    expect(await step.probe?.(page, contextFor(missing, step))).toEqual({
      status: 'unknown',
      detail: 'crm answered /customers/C-9999 with HTTP 404',
    });
    // The same probe pointed at the customer list, where no record's fields are shown.
    const spec = parseDeclarative(frozenText);
    if (!spec.ok) throw new Error(spec.problems.join('\n'));
    const write = spec.spec.steps[1] as ScriptedStep;
    write.probe = {
      ...(write.probe as object),
      goto: '/customers',
      at: '^/customers$',
    } as ScriptedStep['probe'];
    const listed = stepOf(
      compileDeclarative(spec.spec, 'x.playbook.yaml') as Playbook<Inputs>,
      'update-contact',
    );
    const job = newJob(sites, OTHER as Inputs, { crm: 'ada@example.com' });
    expect(await listed.probe?.(page, contextFor(job, listed))).toEqual({
      status: 'unknown',
      detail: 'crm /^\\/customers$/ does not show testId "record-contact" (layout changed?)',
    });
    expect((await crm.writes()).count).toBe(0);
  });
});
