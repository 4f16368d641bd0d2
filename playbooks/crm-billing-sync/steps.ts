/**
 * The steps of `crm-billing-sync@1` after sign-in: update the CRM record (write), update the
 * billing address (write), then read both back. Each step works in one application, because
 * each application has its own browser session and domain allowlist in the engine.
 */
import {
  appUrl,
  clickAndWait,
  countedProbe,
  dataAttr,
  EVIDENCE_TIMEOUT_MS,
  type Evidence,
  goto,
  hasVisibleError,
  isAt,
  type ProbeResult,
  pageUrl,
  READY_TIMEOUT_MS,
  rowsWithKey,
  type Step,
  type StepContext,
  sameText,
  tid,
  visibleErrorText,
  visibleWithin,
} from 'belay/sdk';
import type { Page } from 'playwright-core';
import {
  BILLING_ACCOUNTS,
  CRM_CUSTOMERS,
  type DemoRecordList,
  openRecordByEmail,
  startsAtList,
} from '../demo-sites.ts';
import type { CrmBillingSyncInputs } from './inputs.ts';

type S = Step<CrmBillingSyncInputs>;
type Ctx = StepContext<CrmBillingSyncInputs>;

interface Site extends DemoRecordList {
  recordPath: RegExp;
  /** The element whose `data-*` hold the address shown. */
  address: string;
}

const CRM: Site = {
  ...CRM_CUSTOMERS,
  recordPath: /^\/customers\/[^/]+$/,
  address: 'record-address',
};

const BILLING: Site = {
  ...BILLING_ACCOUNTS,
  recordPath: /^\/accounts\/[^/]+$/,
  address: 'billing-address',
};

/** Searches the list for the customer's email and opens the matching record. */
function openRecord(page: Page, ctx: Ctx, site: Site, stepId: string): Promise<void> {
  return openRecordByEmail(page, ctx.inputs.customerEmail, site, stepId);
}

async function fillAddress(page: Page, ctx: Ctx): Promise<void> {
  const a = ctx.inputs.address;
  await page.locator(tid('line1')).fill(a.line1);
  await page.locator(tid('line2')).fill(a.line2 ?? '');
  await page.locator(tid('city')).fill(a.city);
  await page.locator(tid('postcode')).fill(a.postcode);
  await page.locator(tid('country')).selectOption(a.country);
}

async function setKey(page: Page, form: string, key: string): Promise<void> {
  await page.locator(`${tid(form)} input[name="idempotencyKey"]`).evaluate((el, value) => {
    (el as HTMLInputElement).value = value;
  }, key);
}

/** The record page shows the input address (the id of the record, or null). */
async function recordWithAddress(page: Page, ctx: Ctx, site: Site): Promise<string | null> {
  if (!isAt(page, ctx, site.app, site.recordPath) || (await hasVisibleError(page))) return null;
  const a = ctx.inputs.address;
  const el = tid(site.address);
  if (!(await visibleWithin(page, el, EVIDENCE_TIMEOUT_MS))) return null;
  const read = (name: string): Promise<string | undefined> => dataAttr(page, el, name, 1_000);
  const same = (x: string | undefined, y: string): boolean =>
    (x ?? '').replace(/\s+/g, ' ').trim() === y.replace(/\s+/g, ' ').trim();
  if (!same(await read('line1'), a.line1) || !same(await read('city'), a.city)) return null;
  if (!sameText(await read('postcode'), a.postcode) || (await read('country')) !== a.country) return null;
  return pageUrl(page)?.pathname.split('/').pop() ?? null;
}

/** Looks up a change by idempotency key on the application's own log page. */
async function probeLog(
  page: Page,
  ctx: Ctx,
  site: Site,
  path: string,
  row: string,
  empty: string,
  fields: Record<string, string>,
): Promise<ProbeResult> {
  const key = ctx.idempotencyKey;
  try {
    await goto(page, appUrl(ctx, site.app, `${path}?key=${encodeURIComponent(key)}`));
  } catch (err) {
    return {
      status: 'unknown',
      detail: `${site.app} ${path} did not load: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
  if (await site.application.isSignedOut(page))
    return { status: 'unknown', detail: `signed out of ${site.app}` };
  if (!isAt(page, ctx, site.app, new RegExp(`^${path}$`)))
    return { status: 'unknown', detail: `${site.app} did not show ${path}` };
  if (await visibleWithin(page, `${tid(row)}, ${tid(empty)}`, READY_TIMEOUT_MS)) {
    // Every change made with this key: an application that de-duplicates nothing may hold two.
    const changes = await rowsWithKey(page, tid(row), key, async (r) => {
      const evidence: Evidence = {};
      for (const [name, attr] of Object.entries(fields)) {
        const v = await r.getAttribute(`data-${attr}`);
        evidence[name] = v !== null && /^\d+$/.test(v) ? Number(v) : v;
      }
      return evidence;
    });
    const found = countedProbe(changes, 'changes');
    if (found) return found;
    if (await page.locator(tid(empty)).count())
      return { status: 'absent', detail: `${site.app} has no change with this key` };
  }
  return {
    status: 'unknown',
    detail: `${site.app} ${path} showed neither changes nor "no changes" (layout changed?)`,
  };
}

export const updateCrmCustomer: S = {
  id: 'update-crm-customer',
  title: 'Update the customer in the CRM',
  kind: 'write',
  app: 'crm',
  ...startsAtList<CrmBillingSyncInputs>(CRM),
  async run(page, ctx) {
    await openRecord(page, ctx, CRM, 'update-crm-customer');
    await clickAndWait(page, tid('edit-record'));
    await fillAddress(page, ctx);
    if (ctx.inputs.phone) await page.locator(tid('phone')).fill(ctx.inputs.phone);
    await setKey(page, 'record-form', ctx.idempotencyKey);
    await ctx.faultPoint('mid-action');
    await clickAndWait(page, tid('save-record'));
  },
  async verify(page, ctx) {
    const customerId = await recordWithAddress(page, ctx, CRM);
    if (!customerId) return null;
    const version = Number(await dataAttr(page, tid('record-version'), 'version'));
    return Number.isInteger(version) ? { customerId, version } : null;
  },
  refusal: (page) => visibleErrorText(page),
  probe: (page, ctx) =>
    probeLog(page, ctx, CRM, '/audit', 'audit-row', 'audit-empty', {
      customerId: 'customer-id',
      version: 'version',
    }),
};

export const updateBillingAddress: S = {
  id: 'update-billing-address',
  title: 'Update the billing address',
  kind: 'write',
  app: 'billing',
  ...startsAtList<CrmBillingSyncInputs>(BILLING),
  async run(page, ctx) {
    await openRecord(page, ctx, BILLING, 'update-billing-address');
    await clickAndWait(page, tid('change-address'));
    await fillAddress(page, ctx);
    await setKey(page, 'address-form', ctx.idempotencyKey);
    await ctx.faultPoint('mid-action');
    await clickAndWait(page, tid('address-submit'));
  },
  async verify(page, ctx) {
    const accountId = await recordWithAddress(page, ctx, BILLING);
    if (!accountId) return null;
    const addressVersion = Number(await dataAttr(page, tid('billing-address'), 'version'));
    return Number.isInteger(addressVersion) ? { accountId, addressVersion } : null;
  },
  refusal: (page) => visibleErrorText(page),
  probe: (page, ctx) =>
    probeLog(page, ctx, BILLING, '/activity', 'activity-row', 'activity-empty', {
      accountId: 'account-id',
      addressVersion: 'address-version',
    }),
};

export const verifyCrmRecord: S = {
  id: 'verify-crm-record',
  title: 'Check the CRM record shows the new address',
  kind: 'read',
  app: 'crm',
  ...startsAtList<CrmBillingSyncInputs>(CRM),
  run: (page, ctx) => openRecord(page, ctx, CRM, 'verify-crm-record'),
  async verify(page, ctx) {
    const customerId = await recordWithAddress(page, ctx, CRM);
    if (!customerId) return null;
    if (ctx.inputs.phone) {
      const shown = await page
        .locator(tid('record-phone'))
        .textContent()
        .catch(() => null);
      if ((shown ?? '').replace(/\D/g, '') !== ctx.inputs.phone.replace(/\D/g, '')) return null;
    }
    return {
      customerId,
      version: Number(await dataAttr(page, tid('record-version'), 'version')),
      addressMatches: true,
    };
  },
};

export const verifyBillingAccount: S = {
  id: 'verify-billing-account',
  title: 'Check the billing account shows the new address',
  kind: 'read',
  app: 'billing',
  ...startsAtList<CrmBillingSyncInputs>(BILLING),
  run: (page, ctx) => openRecord(page, ctx, BILLING, 'verify-billing-account'),
  async verify(page, ctx) {
    const accountId = await recordWithAddress(page, ctx, BILLING);
    if (!accountId) return null;
    return {
      accountId,
      addressVersion: Number(await dataAttr(page, tid('billing-address'), 'version')),
      addressMatches: true,
    };
  },
};
