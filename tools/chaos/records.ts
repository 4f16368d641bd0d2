/**
 * Whose records a chaos job works on. A run that mixes playbooks means something only if no
 * playbook's jobs change the records another playbook's jobs look up or check (an agent job that
 * rewrites a customer's email makes a sync job that looks the customer up by email fail, and a
 * probe that reads a record's state cannot tell one job's value from another's). So each shipped
 * playbook that works on the demo CRM has customers of its own, seeded in
 * `demo/sites/crm/data.ts` (and, where it also works in billing, `demo/sites/billing/data.ts`),
 * and a job's resource locks name the records it works on: jobs that share a record run one
 * after the other, jobs on different records run at once.
 */
import { seedBilling } from '../../demo/sites/billing/data.ts';
import { invoiceIdOf } from '../../demo/sites/billing/invoices.ts';
import { seedCrm } from '../../demo/sites/crm/data.ts';

/** The demo CRM's customers (by id) each playbook's chaos jobs work on: no two playbooks share one. */
export const OWN_CUSTOMERS: Readonly<Record<string, readonly string[]>> = {
  // In billing too (BA-5001..BA-5005, the same emails): the sync changes both addresses.
  'crm-billing-sync@1': ['C-1001', 'C-1002', 'C-1003', 'C-1004', 'C-1005'],
  // In billing too (BA-5006, BA-5007): the handoff carries their invoice to the CRM record.
  'invoice-handoff@1': ['C-1006', 'C-1007'],
  'crm-address@1': ['C-1008', 'C-1009'],
  'crm-contact-agent@1': ['C-1010', 'C-1011'],
  'crm-contact-decl@1': ['C-1012', 'C-1013'],
  // Five per job: a job takes the first five or the last five.
  'crm-records-agent@1': [
    'C-1014',
    'C-1015',
    'C-1016',
    'C-1017',
    'C-1018',
    'C-1019',
    'C-1020',
    'C-1021',
    'C-1022',
    'C-1023',
  ],
};

/** A demo CRM customer as seeded (its email may change later: the seed's stays its name here). */
export interface SeededCustomer {
  id: string;
  email: string;
  /** Its billing account's invoice (`INV-5006-01`), when billing has an account with its email. */
  invoiceId?: string;
}

const SEEDED: ReadonlyMap<string, SeededCustomer> = (() => {
  const accounts = Object.values(seedBilling().accounts);
  return new Map(
    Object.values(seedCrm().customers).map((c) => {
      const account = accounts.find((a) => a.email === c.email);
      return [c.id, { id: c.id, email: c.email, ...(account ? { invoiceId: invoiceIdOf(account) } : {}) }];
    }),
  );
})();

/** The seeded customer with this id. @throws RangeError for an id the demo CRM does not seed */
export function seededCustomer(id: string): SeededCustomer {
  const c = SEEDED.get(id);
  if (!c) throw new RangeError(`the demo CRM seeds no customer ${id}`);
  return c;
}

/** The resource lock of a customer record, by its id or email (the seed's email names it). */
export function customerResource(by: { id: string } | { email: string }): string {
  if ('id' in by) return `customer:${SEEDED.get(by.id)?.email ?? by.id}`;
  const email = by.email.toLowerCase();
  return `customer:${[...SEEDED.values()].find((c) => c.email === email)?.email ?? email}`;
}

type Inputs = Record<string, unknown>;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The CRM customer ids a job of a known playbook names in its inputs (none for another). */
export function customerIdsOf(playbook: string, inputs: unknown): string[] {
  const i = (inputs ?? {}) as Inputs;
  if (playbook === 'crm-contact-agent@1' || playbook === 'crm-contact-decl@1') return [str(i.customerId)];
  if (playbook === 'crm-records-agent@1')
    return ['c1', 'c2', 'c3', 'c4', 'c5'].map((k) => str((i[k] as Inputs | undefined)?.customerId));
  return [];
}

/**
 * The resource locks of a job of a playbook the suite knows: the records it changes or looks up
 * (a customer, by the seed's email), or the shop account whose cart it fills; undefined for a
 * playbook it does not know.
 */
export function recordsOf(
  playbook: string,
  inputs: unknown,
  accounts: Readonly<Record<string, string>>,
): string[] | undefined {
  const i = (inputs ?? {}) as Inputs;
  switch (playbook) {
    case 'checkout@1':
      return [`shop:${accounts.shop ?? ''}`];
    case 'crm-billing-sync@1':
    case 'invoice-handoff@1':
    case 'crm-address@1':
      return [customerResource({ email: str(i.customerEmail) })];
    case 'crm-contact-agent@1':
    case 'crm-contact-decl@1':
    case 'crm-records-agent@1':
      return [...new Set(customerIdsOf(playbook, inputs).map((id) => customerResource({ id })))];
    default:
      return undefined;
  }
}
