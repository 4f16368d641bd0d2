/**
 * Checks of one job against the truth that is not Belay's: the demo sites' own records (the
 * admin endpoint's committed writes per idempotency key, and the sites' persisted data), and
 * the workers' fault-point events (a completed step whose action began again).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Address } from '../../demo/sites/http/address.ts';
import type { EntryView } from './clients.ts';
import type { SeenEvent } from './events.ts';
import { usernameOf } from './inputs.ts';
import type { JobSpec } from './plan.ts';
import type { SiteName } from './sites.ts';

/** A completed step whose action began again after its completion was recorded. */
export interface ReExecution {
  step: string;
  completedAt: string;
  startedAgainAt: string;
  pid: number;
}

/**
 * Completed steps executed again: for each `step-completed` entry, the `before-action` points
 * of that step reached later (in any boot). Each counts once per completion.
 */
export function reExecutions(entries: readonly EntryView[], events: readonly SeenEvent[]): ReExecution[] {
  const found: ReExecution[] = [];
  for (const done of entries.filter((e) => e.type === 'step-completed' && e.step)) {
    const at = Date.parse(done.at);
    const again = events.find(
      (e) =>
        e.type === 'fault-point' && e.point === 'before-action' && e.info.step === done.step && e.at > at,
    );
    if (again) {
      found.push({
        step: done.step as string,
        completedAt: done.at,
        startedAgainAt: new Date(again.at).toISOString(),
        pid: again.pid,
      });
    }
  }
  return found;
}

interface SiteFile<D> {
  data: D;
}

function readSite<D>(dataDir: string, site: SiteName): D {
  return (JSON.parse(readFileSync(join(dataDir, 'sites', `${site}.json`), 'utf8')) as SiteFile<D>).data;
}

interface ShopOrder {
  key: string;
  username: string;
  lines: { sku: string; quantity: number }[];
  address: Address;
  shippingMethod: string;
  promoCode?: string;
  payment: { last4: string };
}

interface CheckoutIn {
  items: { sku: string; quantity: number }[];
  shippingAddress: Address;
  shippingMethod: string;
  promoCode?: string;
  payment: { savedCardLast4: string };
}

interface SyncIn {
  customerEmail: string;
  address: Address;
  phone?: string;
}

const same = (a: string | undefined, b: string | undefined): boolean =>
  (a ?? '').replace(/\s+/g, ' ').trim().toUpperCase() === (b ?? '').replace(/\s+/g, ' ').trim().toUpperCase();

function addressProblems(what: string, got: Address | undefined, want: Address): string[] {
  if (!got) return [`${what}: no address`];
  const fields = ['line1', 'city', 'postcode', 'country'] as const;
  return fields
    .filter((f) => !same(got[f], want[f]))
    .map((f) => `${what}: ${f} is "${got[f]}", the job asked for "${want[f]}"`);
}

/** The idempotency key of a write step of the job (filled in when it was submitted). */
function keyOf(spec: JobSpec, step: string): string {
  return spec.writes.find((w) => w.step === step)?.key || `(${spec.jobId} was never submitted)`;
}

/**
 * What the sites' persisted data says about the writes of a demo playbook's job, compared with
 * its inputs: the order's lines, address, shipping, promo and card; the CRM record's and the
 * billing account's address (and phone); the CRM records an agent or declarative CRM playbook
 * changed (contact, phone, email, notes, address). An empty list means the records are what the
 * job asked for. Other playbooks' records are not read in content (the suite knows no meaning of
 * them): their committed writes are counted.
 */
export function recordProblems(spec: JobSpec, dataDir: string, entries: readonly EntryView[] = []): string[] {
  if (spec.playbook === 'invoice-handoff@1') return handoffProblems(spec, dataDir, entries);
  if (CRM_FIELDS_OF[spec.playbook]) return crmRecordProblems(spec, dataDir);
  if (spec.playbook === 'checkout@1') {
    const want = spec.body.inputs as CheckoutIn;
    const key = keyOf(spec, 'place-order');
    const orders = readSite<{ orders: ShopOrder[] }>(dataDir, 'shop').orders.filter((o) => o.key === key);
    if (orders.length !== 1) return [`shop: ${orders.length} orders with key ${key}`];
    const o = orders[0] as ShopOrder;
    const problems: string[] = [];
    const username = usernameOf(spec.body.accounts.shop ?? '');
    if (o.username !== username) problems.push(`order placed by ${o.username}, not ${username}`);
    for (const item of want.items) {
      const q = o.lines.find((l) => l.sku === item.sku)?.quantity ?? 0;
      if (q !== item.quantity)
        problems.push(`order has ${q} x ${item.sku}, the job asked for ${item.quantity}`);
    }
    if (o.lines.length !== want.items.length) problems.push(`order has ${o.lines.length} lines, not 2`);
    problems.push(...addressProblems('order', o.address, want.shippingAddress));
    if (o.shippingMethod !== want.shippingMethod) problems.push(`order ships ${o.shippingMethod}`);
    if ((o.promoCode ?? undefined) !== want.promoCode) problems.push(`order promo ${o.promoCode ?? 'none'}`);
    if (o.payment.last4 !== want.payment.savedCardLast4) problems.push(`order paid with ${o.payment.last4}`);
    return problems;
  }
  if (spec.playbook !== 'crm-billing-sync@1') return [];
  const want = spec.body.inputs as SyncIn;
  const problems: string[] = [];
  const crm = readSite<{
    customers: Record<string, { email: string; phone: string; address: Address }>;
    changes: { key: string; customerId: string }[];
  }>(dataDir, 'crm');
  const crmChanges = crm.changes.filter((c) => c.key === keyOf(spec, 'update-crm-customer'));
  if (crmChanges.length !== 1) problems.push(`crm: ${crmChanges.length} saves with the job's key`);
  const customer = crm.customers[crmChanges[0]?.customerId ?? ''];
  if (customer && customer.email !== want.customerEmail)
    problems.push(`crm: the save changed ${customer.email}, not ${want.customerEmail}`);
  problems.push(...addressProblems('crm record', customer?.address, want.address));
  if (want.phone && customer && customer.phone.replace(/\D/g, '') !== want.phone.replace(/\D/g, ''))
    problems.push(`crm record: phone is ${customer.phone}, the job asked for ${want.phone}`);
  const billing = readSite<{
    accounts: Record<string, { email: string; address: Address }>;
    changes: { key: string; accountId: string }[];
  }>(dataDir, 'billing');
  const billingChanges = billing.changes.filter((c) => c.key === keyOf(spec, 'update-billing-address'));
  if (billingChanges.length !== 1)
    problems.push(`billing: ${billingChanges.length} changes with the job's key`);
  const account = billing.accounts[billingChanges[0]?.accountId ?? ''];
  if (account && account.email !== want.customerEmail)
    problems.push(`billing: the change hit ${account.email}, not ${want.customerEmail}`);
  problems.push(...addressProblems('billing account', account?.address, want.address));
  return problems;
}

/**
 * `invoice-handoff@1`: the invoice was downloaded once while the job ran (its sites are held by
 * the job alone, so every download billing served meanwhile is the job's), attached once under
 * the upload step's key, and the bytes the CRM holds hash to the download's recorded SHA-256.
 */
function handoffProblems(spec: JobSpec, dataDir: string, entries: readonly EntryView[]): string[] {
  const problems: string[] = [];
  const downloadDone = entries.filter((e) => e.type === 'step-completed' && e.step === 'download-invoice');
  const evidence = downloadDone.at(-1)?.evidence as { sha256?: string; size?: number } | undefined;
  if (!evidence?.sha256) return ['ledger: the download step recorded no file evidence'];
  const times = entries.map((e) => Date.parse(e.at)).filter((t) => !Number.isNaN(t));
  const from = Math.min(...times);
  const to = Math.max(...times);
  const billing = readSite<{ downloads?: { invoiceId: string; at: string }[] }>(dataDir, 'billing');
  const invoiceId = (spec.body.inputs as { invoiceId?: string }).invoiceId;
  const downloads = (billing.downloads ?? []).filter(
    (d) => d.invoiceId === invoiceId && Date.parse(d.at) >= from && Date.parse(d.at) <= to,
  );
  if (downloads.length !== 1) problems.push(`billing: the invoice was downloaded ${downloads.length} times`);
  const crm = readSite<{
    attachments?: { key: string; sha256: string; size: number; contentBase64: string }[];
  }>(dataDir, 'crm');
  const mine = (crm.attachments ?? []).filter((a) => a.key === keyOf(spec, 'attach-invoice'));
  if (mine.length !== 1) problems.push(`crm: ${mine.length} attachments with the job's key`);
  for (const a of mine) {
    const held = createHash('sha256').update(Buffer.from(a.contentBase64, 'base64')).digest('hex');
    if (held !== evidence.sha256)
      problems.push(
        `crm: the attachment's bytes hash to ${held}, the download's evidence says ${evidence.sha256}`,
      );
    if (a.size !== evidence.size)
      problems.push(`crm: the attachment has ${a.size} bytes, the download ${evidence.size}`);
  }
  return problems;
}

/** The step's latest intent has no completion (and no "absent" verdict) after it. */
export function openIntent(entries: readonly EntryView[], step: string): boolean {
  let open = false;
  for (const e of entries.filter((x) => x.step === step)) {
    if (e.type === 'step-started') open = true;
    else if (e.type === 'step-completed') open = false;
    else if (e.type === 'reconciled' && e.detail?.probe === 'absent') open = false;
  }
  return open;
}

type CrmCustomer = {
  contactName: string;
  email: string;
  phone: string;
  notes: string;
  address: Address;
};

/** The CRM fields each CRM playbook sets, per customer of its inputs (`c1`... or the inputs themselves). */
const CRM_FIELDS_OF: Readonly<Record<string, readonly string[]>> = {
  'crm-contact-agent@1': ['contactName', 'phone'],
  'crm-contact-decl@1': ['contactName', 'phone'],
  'crm-records-agent@1': ['contactName', 'phone', 'email', 'notes'],
  'crm-address@1': ['address'],
};

/**
 * A CRM playbook's job: each customer it worked on shows what the job asked for (the last job
 * on a customer is the one whose values it keeps: its jobs on one customer run one at a time).
 */
function crmRecordProblems(spec: JobSpec, dataDir: string): string[] {
  const crm = readSite<{
    customers: Record<string, CrmCustomer>;
    changes: { key: string; customerId: string }[];
  }>(dataDir, 'crm');
  const fields = CRM_FIELDS_OF[spec.playbook] ?? [];
  const inputs = spec.body.inputs as Record<string, unknown>;
  if (spec.playbook === 'crm-address@1') {
    const change = crm.changes.find((c) => c.key === keyOf(spec, 'update-crm-address'));
    const want = inputs as unknown as Address;
    return addressProblems('crm record', crm.customers[change?.customerId ?? '']?.address, want);
  }
  const wanted =
    spec.playbook === 'crm-records-agent@1'
      ? Object.values(inputs).map((v) => v as Record<string, string>)
      : [inputs as Record<string, string>];
  const problems: string[] = [];
  for (const want of wanted) {
    const id = want.customerId ?? '';
    const got = crm.customers[id] as unknown as Record<string, string> | undefined;
    if (!got) {
      problems.push(`crm: no customer ${id}`);
      continue;
    }
    for (const f of fields)
      if (want[f] !== undefined && got[f] !== want[f])
        problems.push(`crm ${id}: ${f} is "${got[f]}", the job asked for "${want[f]}"`);
  }
  return problems;
}
