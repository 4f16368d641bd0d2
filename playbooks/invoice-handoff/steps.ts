/**
 * The steps of `invoice-handoff@1` after each sign-in: download the invoice in billing (a read
 * whose evidence is the file: name, size, SHA-256, path), attach it to the CRM record (a write,
 * probed by the attachment's key and hash on the record page), and check the record holds it.
 */
import {
  appUrl,
  clickAndWait,
  countedProbe,
  type Evidence,
  goto,
  hasVisibleError,
  isAt,
  type ProbeResult,
  READY_TIMEOUT_MS,
  rowsWithKey,
  type Step,
  StepActionError,
  type StepContext,
  tid,
  visibleErrorText,
  visibleWithin,
} from 'belay/sdk';
import type { Locator, Page } from 'playwright-core';
import {
  BILLING_ACCOUNTS,
  CRM_CUSTOMERS,
  crm as crmApplication,
  type DemoRecordList,
  openRecordByEmail,
  startsAtList,
} from '../demo-sites.ts';
import type { InvoiceHandoffInputs } from './inputs.ts';

type S = Step<InvoiceHandoffInputs>;
type Ctx = StepContext<InvoiceHandoffInputs>;

const DOWNLOAD_STEP = 'download-invoice';
const ATTACH_STEP = 'attach-invoice';
const RECORD_PATH = /^\/customers\/[^/]+$/;

/** The invoice's file name, as billing names its download. */
export function invoiceFile(ctx: Ctx): string {
  return `invoice-${ctx.inputs.invoiceId}.pdf`;
}

/** Searches a list for the customer's email and opens the matching record. */
function openRecord(page: Page, ctx: Ctx, list: DemoRecordList, stepId: string): Promise<void> {
  return openRecordByEmail(page, ctx.inputs.customerEmail, list, stepId);
}

/** The downloaded file's evidence, as the download step's checkpoint recorded it. */
function downloaded(ctx: Ctx, stepId: string): { name: string; path: string; sha256: string; size: number } {
  const e = ctx.evidence(DOWNLOAD_STEP);
  if (!e || typeof e.path !== 'string' || typeof e.sha256 !== 'string' || typeof e.name !== 'string') {
    throw new StepActionError(stepId, `the ${DOWNLOAD_STEP} step has recorded no file`);
  }
  return { name: e.name, path: e.path, sha256: e.sha256, size: Number(e.size) };
}

export const downloadInvoice: S = {
  id: DOWNLOAD_STEP,
  title: 'Download the invoice PDF from billing',
  kind: 'read',
  app: 'billing',
  ...startsAtList<InvoiceHandoffInputs>(BILLING_ACCOUNTS),
  async run(page, ctx) {
    const name = invoiceFile(ctx);
    // An attempt that died before its checkpoint saved it already: the file is the job's.
    if (await ctx.files.find(name)) return;
    await openRecord(page, ctx, BILLING_ACCOUNTS, DOWNLOAD_STEP);
    const link = page.locator(`${tid('invoice-download')}[data-invoice="${ctx.inputs.invoiceId}"]`);
    if ((await link.count()) === 0) {
      throw new StepActionError(
        DOWNLOAD_STEP,
        `billing shows no invoice ${ctx.inputs.invoiceId} for the account`,
      );
    }
    await ctx.files.download(name, () => link.first().click());
  },
  async verify(_page, ctx) {
    const file = await ctx.files.find(invoiceFile(ctx));
    if (!file) return null;
    const head = Buffer.from(await ctx.files.read(file))
      .subarray(0, 5)
      .toString('latin1');
    if (head !== '%PDF-') return null;
    return { ...file, invoiceId: ctx.inputs.invoiceId };
  },
};

/** An attachment row's evidence: id, key, name, size, SHA-256. */
async function readAttachment(row: Locator): Promise<Evidence> {
  return {
    attachmentId: await row.getAttribute('data-id'),
    name: await row.getAttribute('data-name'),
    size: Number(await row.getAttribute('data-size')),
    sha256: await row.getAttribute('data-sha256'),
  };
}

/** On the record page: the attachments made with this step's key. */
async function attachmentsWithKey(page: Page, ctx: Ctx): Promise<Evidence[]> {
  return rowsWithKey(page, tid('attachment-row'), ctx.idempotencyKey, readAttachment);
}

export const attachInvoice: S = {
  id: ATTACH_STEP,
  title: "Attach the invoice to the customer's CRM record",
  kind: 'write',
  app: 'crm',
  ...startsAtList<InvoiceHandoffInputs>(CRM_CUSTOMERS),
  async run(page, ctx) {
    const file = downloaded(ctx, ATTACH_STEP);
    // The bytes the download step recorded, or a FileChangedError: never another file.
    const bytes = await ctx.files.read(file);
    await openRecord(page, ctx, CRM_CUSTOMERS, ATTACH_STEP);
    await page
      .locator(tid('attachment-file'))
      .setInputFiles({ name: file.name, mimeType: 'application/pdf', buffer: Buffer.from(bytes) });
    await page.locator(`${tid('attachment-form')} input[name="idempotencyKey"]`).evaluate((el, value) => {
      (el as HTMLInputElement).value = value;
    }, ctx.idempotencyKey);
    await ctx.faultPoint('mid-action');
    await clickAndWait(page, tid('attachment-submit'));
  },
  async verify(page, ctx) {
    if (!isAt(page, ctx, 'crm', RECORD_PATH) || (await hasVisibleError(page))) return null;
    if (!(await visibleWithin(page, `${tid('attachments')}, ${tid('attachments-empty')}`, READY_TIMEOUT_MS)))
      return null;
    const { sha256 } = downloaded(ctx, ATTACH_STEP);
    const found = (await attachmentsWithKey(page, ctx)).find((a) => a.sha256 === sha256);
    return found ? { ...found, customerId: page.url().split('/').pop()?.split('?')[0] ?? null } : null;
  },
  refusal: (page) => visibleErrorText(page),
  async probe(page, ctx): Promise<ProbeResult> {
    const { sha256 } = downloaded(ctx, ATTACH_STEP);
    try {
      await goto(page, appUrl(ctx, 'crm', '/customers'));
      if (await crmApplication.isSignedOut(page)) return { status: 'unknown', detail: 'signed out of crm' };
      await openRecord(page, ctx, CRM_CUSTOMERS, ATTACH_STEP);
    } catch (err) {
      return {
        status: 'unknown',
        detail: `the CRM record did not load: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
    if (!isAt(page, ctx, 'crm', RECORD_PATH))
      return { status: 'unknown', detail: 'crm did not show the record' };
    if (
      !(await visibleWithin(page, `${tid('attachments')}, ${tid('attachments-empty')}`, READY_TIMEOUT_MS))
    ) {
      return {
        status: 'unknown',
        detail: 'the record showed neither attachments nor "no attachments" (layout changed?)',
      };
    }
    const mine = await attachmentsWithKey(page, ctx);
    if (mine.some((a) => a.sha256 !== sha256)) {
      return {
        status: 'unknown',
        detail: "an attachment under this step's key has other bytes than the download",
      };
    }
    return (
      countedProbe(mine, 'attachments') ?? {
        status: 'absent',
        detail: 'the record has no attachment with this key',
      }
    );
  },
};

export const verifyAttachment: S = {
  id: 'verify-attachment',
  title: 'Check the CRM record holds the invoice',
  kind: 'read',
  app: 'crm',
  ...startsAtList<InvoiceHandoffInputs>(CRM_CUSTOMERS),
  run: (page, ctx) => openRecord(page, ctx, CRM_CUSTOMERS, 'verify-attachment'),
  async verify(page, ctx) {
    if (!isAt(page, ctx, 'crm', RECORD_PATH)) return null;
    if (!(await visibleWithin(page, `${tid('attachments')}, ${tid('attachments-empty')}`, READY_TIMEOUT_MS)))
      return null;
    const file = downloaded(ctx, 'verify-attachment');
    const attachmentId = ctx.evidence(ATTACH_STEP)?.attachmentId;
    const rows = page.locator(tid('attachment-row'));
    for (let i = 0; i < (await rows.count()); i++) {
      const a = await readAttachment(rows.nth(i));
      if (a.attachmentId === attachmentId && a.sha256 === file.sha256 && a.size === file.size) {
        return { ...a, matchesDownload: true };
      }
    }
    return null;
  },
};
