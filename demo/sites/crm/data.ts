/** The CRM's persisted data: customer records (with a version bumped by every save) and the audit log. */
import type { Address } from '../http/address.ts';

export interface Customer {
  id: string;
  company: string;
  contactName: string;
  email: string;
  phone: string;
  address: Address;
  notes: string;
  /** Bumped by every save. */
  version: number;
  updatedAt: string;
  updatedBy: string;
}

/** One save, by idempotency key. */
export interface CrmChange {
  key: string;
  customerId: string;
  version: number;
  at: string;
  by: string;
  fields: string[];
}

/** A file attached to a customer record: every upload commits one, its bytes kept. */
export interface CrmAttachment {
  id: string;
  key: string;
  customerId: string;
  name: string;
  size: number;
  sha256: string;
  contentBase64: string;
  at: string;
  by: string;
}

export interface CrmData {
  customers: Record<string, Customer>;
  changes: CrmChange[];
  attachments: CrmAttachment[];
}

const SEED_AT = '2024-01-15T09:00:00.000Z';

function customer(
  id: string,
  company: string,
  contactName: string,
  email: string,
  phone: string,
  address: Address,
): Customer {
  return {
    id,
    company,
    contactName,
    email,
    phone,
    address,
    notes: '',
    version: 1,
    updatedAt: SEED_AT,
    updatedBy: 'import',
  };
}

export function seedCrm(): CrmData {
  const list = [
    customer('C-1001', 'Acme Anvils Ltd', 'Jane Doe', 'jane.doe@acme.example', '+44 20 7946 0001', {
      line1: '1 Forge Lane',
      city: 'Sheffield',
      postcode: 'S1 2AB',
      country: 'GB',
    }),
    customer('C-1002', 'Bluebell Bakery', 'Omar Haddad', 'omar@bluebell.example', '+44 161 496 0002', {
      line1: '22 Mill Street',
      city: 'Manchester',
      postcode: 'M1 4BT',
      country: 'GB',
    }),
    customer('C-1003', 'Cobalt Cycles', 'Mei Chen', 'mei.chen@cobalt.example', '+44 117 496 0003', {
      line1: '5 Harbour Walk',
      line2: 'Unit 3',
      city: 'Bristol',
      postcode: 'BS1 5TY',
      country: 'GB',
    }),
    customer('C-1004', 'Dunmore Dairy', 'Siobhan Kelly', 'siobhan@dunmore.example', '+353 1 555 0004', {
      line1: '9 Quay Road',
      city: 'Dublin',
      postcode: 'D02 X285',
      country: 'IE',
    }),
    customer('C-1005', 'Elm & Oak Joinery', 'Tom Baker', 'tom@elmoak.example', '+44 113 496 0005', {
      line1: '14 Timber Yard',
      city: 'Leeds',
      postcode: 'LS1 6AA',
      country: 'GB',
    }),
  ];
  return { customers: Object.fromEntries(list.map((c) => [c.id, c])), changes: [], attachments: [] };
}
