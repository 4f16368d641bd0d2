/** Billing's persisted data: customer accounts with a billing address, and the change log. */
import type { Address } from '../http/address.ts';

export interface BillingAccount {
  id: string;
  customerName: string;
  email: string;
  plan: string;
  balancePence: number;
  address: Address;
  /** Bumped by every address change. */
  addressVersion: number;
  updatedAt: string;
}

/** One billing-address change, by idempotency key. */
export interface BillingChange {
  key: string;
  accountId: string;
  addressVersion: number;
  at: string;
  by: string;
}

/** One invoice PDF served (a read, counted so a test can tell how often a file was downloaded). */
export interface InvoiceDownload {
  invoiceId: string;
  accountId: string;
  at: string;
  by: string;
}

export interface BillingData {
  accounts: Record<string, BillingAccount>;
  changes: BillingChange[];
  downloads: InvoiceDownload[];
}

const SEED_AT = '2024-02-01T09:00:00.000Z';

function account(
  id: string,
  customerName: string,
  email: string,
  plan: string,
  balancePence: number,
  address: Address,
): BillingAccount {
  return { id, customerName, email, plan, balancePence, address, addressVersion: 1, updatedAt: SEED_AT };
}

export function seedBilling(): BillingData {
  const list = [
    account('BA-5001', 'Acme Anvils Ltd', 'jane.doe@acme.example', 'Business, monthly', 12900, {
      line1: 'PO Box 12',
      city: 'Sheffield',
      postcode: 'S1 1AA',
      country: 'GB',
    }),
    account('BA-5002', 'Bluebell Bakery', 'omar@bluebell.example', 'Starter, monthly', 2900, {
      line1: '22 Mill Street',
      city: 'Manchester',
      postcode: 'M1 4BT',
      country: 'GB',
    }),
    account('BA-5003', 'Cobalt Cycles', 'mei.chen@cobalt.example', 'Business, yearly', 0, {
      line1: '5 Harbour Walk',
      line2: 'Unit 3',
      city: 'Bristol',
      postcode: 'BS1 5TY',
      country: 'GB',
    }),
    account('BA-5004', 'Dunmore Dairy', 'siobhan@dunmore.example', 'Starter, yearly', 4500, {
      line1: '9 Quay Road',
      city: 'Dublin',
      postcode: 'D02 X285',
      country: 'IE',
    }),
    account('BA-5005', 'Elm & Oak Joinery', 'tom@elmoak.example', 'Business, monthly', 12900, {
      line1: '14 Timber Yard',
      city: 'Leeds',
      postcode: 'LS1 6AA',
      country: 'GB',
    }),
    // The CRM's C-1006 and C-1007: the customers invoice-handoff's chaos jobs work on.
    account('BA-5006', 'Fenwick Fabrics', 'priya@fenwick.example', 'Business, monthly', 8400, {
      line1: '3 Quayside',
      city: 'Newcastle',
      postcode: 'NE1 3DX',
      country: 'GB',
    }),
    account('BA-5007', 'Glenmore Glass', 'callum@glenmore.example', 'Starter, yearly', 3600, {
      line1: '40 Leith Walk',
      city: 'Edinburgh',
      postcode: 'EH6 5AA',
      country: 'GB',
    }),
  ];
  return { accounts: Object.fromEntries(list.map((a) => [a.id, a])), changes: [], downloads: [] };
}
