/**
 * Inputs of the chaos jobs, drawn from the PRNG: baskets the demo shop can always fill
 * (plenty of stock, both items listed by the search), shipping choices, promo codes that
 * apply to any basket, and new addresses for the demo CRM's customers.
 */
import { DEMO_CONNECTED } from '../../local/seed.ts';
import type { Prng } from './prng.ts';

/** The demo tenant's shop accounts: no MFA, TOTP (the engine answers), SMS (a person reads the code). */
export const SHOP_ACCOUNTS = ['acct_demo_shop', 'acct_demo_shop_totp', 'acct_demo_shop_sms'] as const;

/** Customers present in both the demo CRM and the demo billing site. */
export const CUSTOMERS = [
  'jane.doe@acme.example',
  'omar@bluebell.example',
  'mei.chen@cobalt.example',
  'siobhan@dunmore.example',
  'tom@elmoak.example',
] as const;

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
