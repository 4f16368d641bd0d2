/**
 * The records each playbook's chaos jobs work on, without a stack: the customers are seeded in
 * the demo CRM (and in billing where the playbook works there too), no two playbooks share one,
 * every seeded record can be saved from its edit form as it is, and a record has one resource
 * name whether a job names it by id or by email.
 */
import { describe, expect, it } from 'vitest';
import { seedBilling } from '../../../demo/sites/billing/data.ts';
import { invoiceIdOf } from '../../../demo/sites/billing/invoices.ts';
import { seedCrm } from '../../../demo/sites/crm/data.ts';
import { parseAddress } from '../../../demo/sites/http/address.ts';
import { handoffInputs } from '../../../tools/chaos/inputs.ts';
import { customerResource, OWN_CUSTOMERS, recordsOf, seededCustomer } from '../../../tools/chaos/records.ts';

const crm = seedCrm().customers;
const billing = Object.values(seedBilling().accounts);

describe('the customers of each playbook', () => {
  it('are seeded in the demo CRM, and no two playbooks share one', () => {
    const all = Object.values(OWN_CUSTOMERS).flat();
    expect(new Set(all).size).toBe(all.length);
    for (const id of all) expect(crm[id], id).toBeDefined();
    // The records agent takes five per job: two groups, so two of its jobs can run at once.
    expect(OWN_CUSTOMERS['crm-records-agent@1']).toHaveLength(10);
  });

  it.each(['crm-billing-sync@1', 'invoice-handoff@1'])(
    '%s: each has a billing account with its email',
    (playbook) => {
      for (const id of OWN_CUSTOMERS[playbook] ?? []) {
        const email = crm[id]?.email;
        expect(
          billing.filter((a) => a.email === email),
          id,
        ).toHaveLength(1);
      }
    },
  );

  it('gives an invoice-handoff job an invoice of its customer’s account', () => {
    for (const n of [0, 1, 2]) {
      const { customerEmail, invoiceId } = handoffInputs(n);
      const account = billing.find((a) => a.email === customerEmail);
      expect(account && invoiceIdOf(account)).toBe(invoiceId);
    }
    expect(handoffInputs(0)).not.toEqual(handoffInputs(1));
  });
});

describe('the demo CRM’s seed', () => {
  it('has records whose edit form saves as it is (a valid address), each email once', () => {
    const customers = Object.values(crm);
    for (const c of customers) {
      const form = new URLSearchParams({ ...c.address });
      expect(parseAddress(form, false).errors, c.id).toEqual({});
    }
    expect(new Set(customers.map((c) => c.email)).size).toBe(customers.length);
  });
});

describe('Function: customerResource', () => {
  it('names a customer the same by id and by email', () => {
    const c = seededCustomer('C-1012');
    expect(customerResource({ id: 'C-1012' })).toBe(`customer:${c.email}`);
    expect(customerResource({ email: c.email.toUpperCase() })).toBe(`customer:${c.email}`);
    expect(customerResource({ id: 'C-9999' })).toBe('customer:C-9999');
    expect(() => seededCustomer('C-9999')).toThrow(RangeError);
  });

  it('locks the records a job names, for every playbook it knows, and nothing for another', () => {
    expect(recordsOf('checkout@1', {}, { shop: 'acct_demo_shop' })).toEqual(['shop:acct_demo_shop']);
    expect(recordsOf('crm-address@1', { customerEmail: 'NIA@harbourhw.example' }, {})).toEqual([
      'customer:nia@harbourhw.example',
    ]);
    expect(recordsOf('crm-contact-decl@1', { customerId: 'C-1008' }, {})).toEqual([
      'customer:nia@harbourhw.example',
    ]);
    expect(recordsOf('notes@1', {}, {})).toBeUndefined();
  });
});
