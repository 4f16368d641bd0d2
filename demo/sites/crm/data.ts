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

/**
 * The customers after the first five, one line each: id, company, contact, email, phone, line 1,
 * city, postcode (all in GB). Each playbook the chaos suite mixes works on customers of its own
 * (`tools/chaos/records.ts` says which), so that no playbook's job changes a record another's
 * jobs look up or check: C-1001..C-1005 are crm-billing-sync's (they are in billing too), and
 * C-1006 and C-1007 invoice-handoff's (billing has their accounts and invoices).
 */
// biome-ignore format: one customer per line reads as the table it is
const MORE_CUSTOMERS: ReadonlyArray<readonly [string, string, string, string, string, string, string, string]> = [
  ['C-1006', 'Fenwick Fabrics', 'Priya Nair', 'priya@fenwick.example', '+44 191 496 0006', '3 Quayside', 'Newcastle', 'NE1 3DX'],
  ['C-1007', 'Glenmore Glass', 'Callum Fraser', 'callum@glenmore.example', '+44 131 496 0007', '40 Leith Walk', 'Edinburgh', 'EH6 5AA'],
  ['C-1008', 'Harbour Hardware', 'Nia Evans', 'nia@harbourhw.example', '+44 29 2018 0008', '12 Bute Street', 'Cardiff', 'CF10 5AA'],
  ['C-1009', 'Ivy Lane Interiors', 'Oliver Grant', 'oliver@ivylane.example', '+44 1865 496009', '7 Cornmarket', 'Oxford', 'OX1 3HA'],
  ['C-1010', 'Juniper Joinery', 'Aoife Walsh', 'aoife@juniper.example', '+44 28 9018 0010', '18 Botanic Avenue', 'Belfast', 'BT7 1JG'],
  ['C-1011', 'Kestrel Kites', 'Marcus Reid', 'marcus@kestrel.example', '+44 1224 496011', '2 Union Street', 'Aberdeen', 'AB11 5BP'],
  ['C-1012', 'Linden Lighting', 'Hannah Cole', 'hannah@linden.example', '+44 1223 496012', '25 Mill Road', 'Cambridge', 'CB1 2AD'],
  ['C-1013', 'Marlow Mills', 'Samir Khan', 'samir@marlowmills.example', '+44 1628 496013', '9 High Street', 'Marlow', 'SL7 1AB'],
  ['C-1014', 'Northgate Nurseries', 'Grace Lim', 'grace@northgate.example', '+44 1904 496014', '60 Gillygate', 'York', 'YO31 7EQ'],
  ['C-1015', 'Orchard Optics', 'Daniel Okafor', 'daniel@orchardoptics.example', '+44 1752 496015', '4 The Barbican', 'Plymouth', 'PL1 2LS'],
  ['C-1016', 'Pennant Press', 'Rhian Morgan', 'rhian@pennant.example', '+44 1792 496016', '31 Wind Street', 'Swansea', 'SA1 1DZ'],
  ['C-1017', 'Quarry Quilts', 'Ewan Doyle', 'ewan@quarryquilts.example', '+44 1228 496017', '8 English Street', 'Carlisle', 'CA3 8HX'],
  ['C-1018', 'Rowan Rugs', 'Leah Porter', 'leah@rowanrugs.example', '+44 1463 496018', '15 Church Street', 'Inverness', 'IV1 1EA'],
  ['C-1019', 'Saltmarsh Soaps', 'Tariq Aziz', 'tariq@saltmarsh.example', '+44 1603 496019', '22 Elm Hill', 'Norwich', 'NR3 1HN'],
  ['C-1020', 'Thistle Tiles', 'Morag Bell', 'morag@thistletiles.example', '+44 1382 496020', '5 Perth Road', 'Dundee', 'DD1 4LN'],
  ['C-1021', 'Upland Umbrellas', 'Felix Hart', 'felix@upland.example', '+44 1539 496021', '11 Stricklandgate', 'Kendal', 'LA9 4LT'],
  ['C-1022', 'Vale Vinyl', 'Imogen Shaw', 'imogen@valevinyl.example', '+44 1905 496022', '3 Friar Street', 'Worcester', 'WR1 2LZ'],
  ['C-1023', 'Wren Woodworks', 'Kwame Mensah', 'kwame@wrenwood.example', '+44 1482 496023', '27 Whitefriargate', 'Hull', 'HU1 2HA'],
];

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
    ...MORE_CUSTOMERS.map(([id, company, contact, email, phone, line1, city, postcode]) =>
      customer(id, company, contact, email, phone, { line1, city, postcode, country: 'GB' }),
    ),
  ];
  return { customers: Object.fromEntries(list.map((c) => [c.id, c])), changes: [], attachments: [] };
}
