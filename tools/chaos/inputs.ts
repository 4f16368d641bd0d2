/**
 * Inputs of the chaos jobs, drawn from the PRNG: baskets the demo shop can always fill
 * (plenty of stock, both items listed by the search), shipping choices, promo codes that
 * apply to any basket, new addresses for the demo CRM's customers, and new contacts, emails and
 * notes for them. Each playbook's jobs work on customers of their own (`records.ts`), and every
 * value a job sets in a record carries the job's id, so no job's write is satisfied by another's.
 */
import { DEMO_CONNECTED } from '../../local/seed.ts';
import type { Prng } from './prng.ts';
import { OWN_CUSTOMERS, seededCustomer } from './records.ts';

/** The demo tenant's shop accounts: no MFA, TOTP (the engine answers), SMS (a person reads the code). */
export const SHOP_ACCOUNTS = ['acct_demo_shop', 'acct_demo_shop_totp', 'acct_demo_shop_sms'] as const;

/** The emails of `crm-billing-sync@1`'s customers, present in both the demo CRM and the demo billing site. */
export const CUSTOMERS: readonly string[] = (OWN_CUSTOMERS['crm-billing-sync@1'] ?? []).map(
  (id) => seededCustomer(id).email,
);

/** The customers a playbook's jobs work on: the `n`th job of the playbook takes the `n`th in turn. */
function ownCustomer(playbook: string, n: number): string {
  const pool = OWN_CUSTOMERS[playbook] ?? [];
  return pool[n % pool.length] as string;
}

/** The site username behind a connected account of the demo tenant. */
export function usernameOf(accountId: string): string | undefined {
  return DEMO_CONNECTED.find((a) => a.accountId === accountId)?.username;
}

/** Baskets whose two items the search lists (the demo shop's stock is not consumed by orders). */
const BASKETS: ReadonlyArray<{ search: string; skus: [string, string]; maxQuantity: number }> = [
  { search: 'stationery', skus: ['NB-A5-DOT', 'PEN-GEL-3PK'], maxQuantity: 2 },
  { search: 'notebook', skus: ['NB-A4-LINED', 'NB-A5-DOT'], maxQuantity: 2 },
  { search: 'kitchen', skus: ['TEA-BREAKFAST', 'TOWEL-LINEN'], maxQuantity: 2 },
  { search: 'mug', skus: ['MUG-ENAMEL-BLU', 'MUG-STONE-GRY'], maxQuantity: 2 },
  { search: 'pen', skus: ['PEN-GEL-3PK', 'PEN-FOUNTAIN'], maxQuantity: 2 },
];

const STREETS = ['Temple Quay', 'Harbour Walk', 'Mill Street', 'Quay Road', 'Station Road', 'High Street'];
const CITIES: ReadonlyArray<{ city: string; postcode: string; country: string }> = [
  { city: 'Bristol', postcode: 'BS1 6DZ', country: 'GB' },
  { city: 'Leeds', postcode: 'LS1 4AP', country: 'GB' },
  { city: 'Dublin', postcode: 'D02 X285', country: 'IE' },
  { city: 'London', postcode: 'SW1Y 4JH', country: 'GB' },
  { city: 'Manchester', postcode: 'M1 4BT', country: 'GB' },
];

function address(prng: Prng): { line1: string; city: string; postcode: string; country: string } {
  const place = prng.pick(CITIES);
  return { line1: `${prng.int(1, 250)} ${prng.pick(STREETS)}`, ...place };
}

/** Inputs of one `checkout@1` job. */
export function checkoutInputs(prng: Prng): Record<string, unknown> {
  const basket = prng.pick(BASKETS);
  const promo = prng.pick(['SAVE10', 'FREESHIP', undefined]);
  return {
    search: basket.search,
    items: basket.skus.map((sku) => ({ sku, quantity: prng.int(1, basket.maxQuantity) })),
    shippingAddress: { name: prng.pick(['Ada Lovelace', 'Grace Hopper', 'Alan Turing']), ...address(prng) },
    shippingMethod: prng.pick(['standard', 'express', 'next-day']),
    ...(promo ? { promoCode: promo } : {}),
    payment: { savedCardLast4: '4242' },
  };
}

/** Inputs of one `crm-billing-sync@1` job. */
export function syncInputs(prng: Prng): {
  customerEmail: string;
  address: { line1: string; city: string; postcode: string; country: string };
  phone?: string;
} {
  return {
    customerEmail: prng.pick(CUSTOMERS),
    address: address(prng),
    ...(prng.chance(0.5) ? { phone: `+44 117 496 ${String(prng.int(0, 9999)).padStart(4, '0')}` } : {}),
  };
}

/** Inputs of one `invoice-handoff@1` job: one of its customers (in turn), and that customer's invoice. */
export function handoffInputs(n: number): { customerEmail: string; invoiceId: string } {
  const c = seededCustomer(ownCustomer('invoice-handoff@1', n));
  if (!c.invoiceId) throw new RangeError(`${c.id} has no billing account to take an invoice from`);
  return { customerEmail: c.email, invoiceId: c.invoiceId };
}

/** Inputs of one `crm-address@1` job: one of its customers (in turn), a new address. */
export function crmAddressInputs(prng: Prng, n: number): Record<string, string> {
  return { customerEmail: seededCustomer(ownCustomer('crm-address@1', n)).email, ...address(prng) };
}

const FIRST = ['Ada', 'Grace', 'Alan', 'Katherine', 'Tim', 'Margaret', 'Edsger', 'Barbara'];
const LAST = ['Lovelace', 'Hopper', 'Turing', 'Johnson', 'Berners-Lee', 'Hamilton', 'Dijkstra', 'Liskov'];
const NOTES = [
  'Prefers email before noon',
  'Deliveries to the side door',
  'Invoices quarterly',
  'Call the office, not the mobile',
  'Closed on Mondays',
];

function contactName(prng: Prng, jobId: string): string {
  return `${prng.pick(FIRST)} ${prng.pick(LAST)} ${jobId}`;
}

function phone(prng: Prng): string {
  return `+44 ${prng.pick(['20 7946', '117 496', '161 496', '113 496'])} ${String(prng.int(0, 9999)).padStart(4, '0')}`;
}

/**
 * Inputs of one `crm-contact-agent@1` or `crm-contact-decl@1` job: one of the playbook's
 * customers (in turn), a contact name that carries the job's id, a phone.
 */
export function contactInputs(
  prng: Prng,
  playbook: string,
  n: number,
  jobId: string,
): { customerId: string; contactName: string; phone: string } {
  return { customerId: ownCustomer(playbook, n), contactName: contactName(prng, jobId), phone: phone(prng) };
}

/**
 * Inputs of one `crm-records-agent@1` job: five of its customers (the first five of its ten, or
 * the last five, in turn), each with a new contact, phone and email, and notes for the first
 * three, every value carrying the job's id.
 */
export function recordsAgentInputs(prng: Prng, n: number, jobId: string): Record<string, unknown> {
  const pool = OWN_CUSTOMERS['crm-records-agent@1'] ?? [];
  const group = n % Math.max(1, Math.floor(pool.length / 5));
  const ids = pool.slice(group * 5, group * 5 + 5);
  return Object.fromEntries(
    ids.map((id, k) => {
      const name = contactName(prng, jobId);
      const domain = seededCustomer(id).email.split('@')[1] as string;
      const record = {
        customerId: id,
        contactName: name,
        phone: phone(prng),
        email: `${(name.split(' ')[0] as string).toLowerCase()}.${jobId}@${domain}`,
        ...(k < 3 ? { notes: `${prng.pick(NOTES)} (${jobId})` } : {}),
      };
      return [`c${k + 1}`, record];
    }),
  );
}
