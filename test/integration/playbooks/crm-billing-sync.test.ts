import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SiteAdmin } from '../../../demo/sites/admin-client.ts';
import { siteAdmin } from '../../../demo/sites/admin-client.ts';
import type { StartedSites } from '../../../demo/sites/index.ts';
import { startSites } from '../../../demo/sites/index.ts';
import type { CrmBillingSyncInputs } from '../../../playbooks/crm-billing-sync/index.ts';
import { crmBillingSyncPlaybook as playbook } from '../../../playbooks/crm-billing-sync/index.ts';
import {
  contextFor,
  drive,
  type Job,
  keyOf,
  launchChromium,
  newJob,
  ready,
  signedInContext,
  stepOf,
} from './harness.ts';

const INPUTS: CrmBillingSyncInputs = {
  customerEmail: 'mei.chen@cobalt.example',
  address: { line1: '77 Temple Quay', city: 'Bristol', postcode: 'BS1 6DZ', country: 'GB' },
  phone: '+44 117 496 0999',
};

let browser: Browser;
let sites: StartedSites;
let crm: SiteAdmin;
let billing: SiteAdmin;
/** One browser context and page per application, as the engine has one session per application. */
let contexts: Record<'crm' | 'billing', BrowserContext>;
let pages: Record<'crm' | 'billing', Page>;

beforeAll(async () => {
  sites = await startSites();
  crm = siteAdmin(sites.crm.baseUrl, sites.adminToken);
  billing = siteAdmin(sites.billing.baseUrl, sites.adminToken);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await sites?.stop();
});

beforeEach(async () => {
  await crm.reset();
  await billing.reset();
  contexts = { crm: await browser.newContext(), billing: await browser.newContext() };
  pages = { crm: await contexts.crm.newPage(), billing: await contexts.billing.newPage() };
});

afterEach(async () => {
  await contexts.crm.close();
  await contexts.billing.close();
});

const pageFor = (app: string): Page => pages[app as 'crm' | 'billing'];

async function signedInBoth(): Promise<Job<CrmBillingSyncInputs>> {
  await signedInContext(contexts.crm, sites.crm.baseUrl, 'crm', 'ada@example.com');
  await signedInContext(contexts.billing, sites.billing.baseUrl, 'billing', 'ada@example.com');
  return newJob(sites, INPUTS, { crm: 'ada@example.com', billing: 'ada@example.com' });
}

describe('Playbook: crm-billing-sync@1', () => {
  it('updates both applications once each and reads both back', async () => {
    const job = newJob(sites, INPUTS, { crm: 'grace@example.com', billing: 'ada@example.com' });
    const evidence = [];
    for (const step of playbook.steps) {
      const { pre, evidence: e } = await drive(playbook, step, pageFor(step.app), job);
      expect(pre, step.id).toEqual({ ok: true });
      expect(e, step.id).not.toBeNull();
      evidence.push(e);
    }
    expect(evidence.slice(2)).toEqual([
      { customerId: 'C-1003', version: 2 },
      { accountId: 'BA-5003', addressVersion: 2 },
      { customerId: 'C-1003', version: 2, addressMatches: true },
      { accountId: 'BA-5003', addressVersion: 2, addressMatches: true },
    ]);
    expect((await crm.writes()).countsByKey).toEqual({ [keyOf(job, 'update-crm-customer')]: 1 });
    expect((await billing.writes()).countsByKey).toEqual({ [keyOf(job, 'update-billing-address')]: 1 });
    expect(playbook.steps.filter((s) => s.kind === 'write').map((s) => s.id)).toEqual([
      'update-crm-customer',
      'update-billing-address',
    ]);
  });

  it('with the CRM response dropped: verify is null, the probe says done, the version moves once', async () => {
    const job = await signedInBoth();
    const step = stepOf(playbook, 'update-crm-customer');
    const ctx = contextFor(job, step);
    await crm.setFaults({ dropNextWriteResponse: true });
    await pages.crm.bringToFront();
    expect(await ready(step, pages.crm, ctx)).toEqual({ ok: true });
    await step.run(pages.crm, ctx);
    expect(await step.verify(pages.crm, ctx)).toBeNull();
    expect(await step.probe?.(pages.crm, ctx)).toEqual({
      status: 'done',
      evidence: { customerId: 'C-1003', version: 2 },
    });
    expect((await crm.writes()).countsByKey).toEqual({ [ctx.idempotencyKey]: 1 });
    // Sending the same key again (an engine that acted anyway) does not bump the version twice.
    await step.restore(pages.crm, ctx);
    await step.run(pages.crm, ctx);
    expect(await step.verify(pages.crm, ctx)).toEqual({ customerId: 'C-1003', version: 2 });
    expect((await crm.writes()).attemptsByKey[ctx.idempotencyKey]).toBe(2);
  });

  it('probes the billing change absent before it is made and done after', async () => {
    const job = await signedInBoth();
    const step = stepOf(playbook, 'update-billing-address');
    const ctx = contextFor(job, step);
    expect(await step.probe?.(pages.billing, ctx)).toMatchObject({ status: 'absent' });
    const { evidence } = await drive(playbook, step, pages.billing, job);
    expect(evidence).toEqual({ accountId: 'BA-5003', addressVersion: 2 });
    expect(await step.probe?.(pages.billing, ctx)).toEqual({ status: 'done', evidence });
  });

  it('reports a changed layout and signed out without posting, and probes unknown', async () => {
    const job = await signedInBoth();
    const update = stepOf(playbook, 'update-billing-address');
    const ctx = contextFor(job, update);
    await billing.setFaults({ changedLayout: true });
    await billing.clearRequests();
    expect(await ready(update, pages.billing, ctx)).toMatchObject({ ok: false, reason: 'layout_changed' });
    expect(await update.probe?.(pages.billing, ctx)).toMatchObject({ status: 'unknown' });
    expect((await billing.requests()).postsByPath).toEqual({});

    const crmUpdate = stepOf(playbook, 'update-crm-customer');
    const crmCtx = contextFor(job, crmUpdate);
    await crm.expireSessions();
    expect(await ready(crmUpdate, pages.crm, crmCtx)).toMatchObject({ ok: false, reason: 'signed_out' });
    expect(await crmUpdate.probe?.(pages.crm, crmCtx)).toMatchObject({ status: 'unknown' });
    expect(await ready(stepOf(playbook, 'crm-sign-in'), pages.crm, crmCtx)).toMatchObject({
      ok: false,
      reason: 'signed_out',
    });
  });

  it('treats the site refusing a bad postcode as a failed verify', async () => {
    const job = await signedInBoth();
    job.inputs = { ...INPUTS, address: { ...INPUTS.address, postcode: '12345' } };
    const { pre, evidence } = await drive(
      playbook,
      stepOf(playbook, 'update-billing-address'),
      pages.billing,
      job,
    );
    expect(pre).toEqual({ ok: true });
    expect(evidence).toBeNull();
    expect(await pages.billing.locator('[role="alert"]').textContent()).toContain('Enter a real postcode');
    expect((await billing.writes()).count).toBe(0);
  });
});
