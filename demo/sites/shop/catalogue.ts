/** The shop's catalogue, shipping methods, promo codes and the arithmetic of a basket. */

export interface Product {
  sku: string;
  name: string;
  description: string;
  pricePence: number;
  stock: number;
  tags: readonly string[];
}

export const PRODUCTS: readonly Product[] = [
  {
    sku: 'MUG-ENAMEL-BLU',
    name: 'Enamel camping mug, blue',
    description: 'Light, tough, 350 ml. Goes on a stove.',
    pricePence: 1200,
    stock: 40,
    tags: ['mug', 'camping', 'kitchen'],
  },
  {
    sku: 'MUG-STONE-GRY',
    name: 'Stoneware mug, grey',
    description: 'Hand-glazed stoneware, 400 ml. Dishwasher safe.',
    pricePence: 1450,
    stock: 25,
    tags: ['mug', 'kitchen', 'gift'],
  },
  {
    sku: 'MUG-TRAVEL-STL',
    name: 'Insulated travel mug',
    description: 'Steel, keeps tea hot for 6 hours. Leak-proof lid.',
    pricePence: 2400,
    stock: 12,
    tags: ['mug', 'travel'],
  },
  {
    sku: 'NB-A5-DOT',
    name: 'A5 dot-grid notebook',
    description: '192 pages of 100 gsm paper, lay-flat binding.',
    pricePence: 950,
    stock: 80,
    tags: ['notebook', 'stationery'],
  },
  {
    sku: 'NB-A4-LINED',
    name: 'A4 lined notebook',
    description: '160 pages, 7 mm ruling, recycled cover.',
    pricePence: 1100,
    stock: 60,
    tags: ['notebook', 'stationery'],
  },
  {
    sku: 'PEN-FOUNTAIN',
    name: 'Fountain pen, medium nib',
    description: 'Brass body, converter and two cartridges included.',
    pricePence: 3200,
    stock: 15,
    tags: ['pen', 'stationery', 'gift'],
  },
  {
    sku: 'PEN-GEL-3PK',
    name: 'Gel pens, pack of 3',
    description: 'Black, blue and red, 0.5 mm.',
    pricePence: 450,
    stock: 200,
    tags: ['pen', 'stationery'],
  },
  {
    sku: 'TEA-BREAKFAST',
    name: 'Breakfast tea, 80 bags',
    description: 'Strong Assam blend.',
    pricePence: 600,
    stock: 90,
    tags: ['tea', 'kitchen'],
  },
  {
    sku: 'COFFEE-BEANS',
    name: 'Coffee beans, 1 kg',
    description: 'Medium roast, whole beans.',
    pricePence: 2300,
    stock: 30,
    tags: ['coffee', 'kitchen'],
  },
  {
    sku: 'KETTLE-STOVE',
    name: 'Stovetop kettle',
    description: 'Whistling, 2 litres, all hobs.',
    pricePence: 3900,
    stock: 0,
    tags: ['kettle', 'kitchen'],
  },
  {
    sku: 'TOWEL-LINEN',
    name: 'Linen tea towel',
    description: 'Stonewashed linen, 50 × 70 cm.',
    pricePence: 800,
    stock: 50,
    tags: ['towel', 'kitchen', 'gift'],
  },
  {
    sku: 'LAMP-DESK',
    name: 'Desk lamp',
    description: 'Adjustable arm, warm LED, USB-C.',
    pricePence: 4500,
    stock: 8,
    tags: ['lamp', 'office'],
  },
];

/** Most of one product a basket may hold. */
export const MAX_QUANTITY = 10;

export function findProduct(sku: string): Product | undefined {
  return PRODUCTS.find((p) => p.sku === sku);
}

/** Products matching every word of the query (name, description, tags, SKU). */
export function searchProducts(query: string): Product[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return [];
  return PRODUCTS.filter((p) => {
    const text = `${p.sku} ${p.name} ${p.description} ${p.tags.join(' ')}`.toLowerCase();
    return words.every((w) => text.includes(w));
  });
}

export interface ShippingMethod {
  id: string;
  label: string;
  pricePence: number;
}

export const SHIPPING_METHODS: readonly ShippingMethod[] = [
  { id: 'standard', label: 'Standard delivery, 3 to 5 working days', pricePence: 395 },
  { id: 'express', label: 'Express delivery, 1 to 2 working days', pricePence: 695 },
  { id: 'next-day', label: 'Next working day (order by 5pm)', pricePence: 995 },
];

type Promo =
  | { kind: 'percent'; percent: number; label: string }
  | { kind: 'amount'; pence: number; minSpendPence: number; label: string }
  | { kind: 'free-shipping'; label: string }
  | { kind: 'expired'; endedOn: string };

const PROMOS: Record<string, Promo> = {
  SAVE10: { kind: 'percent', percent: 10, label: '10% off your order' },
  WELCOME5: { kind: 'amount', pence: 500, minSpendPence: 2000, label: '£5 off orders over £20' },
  FREESHIP: { kind: 'free-shipping', label: 'Free delivery' },
  SUMMER2019: { kind: 'expired', endedOn: '31 August 2019' },
};

/** Checks a promo code against a subtotal; the error is the one the shop shows. */
export function checkPromo(
  rawCode: string,
  subtotalPence: number,
): { ok: true; code: string } | { ok: false; error: string } {
  const code = rawCode.trim().toUpperCase();
  if (!code) return { ok: false, error: 'Enter a promo code' };
  const promo = PROMOS[code];
  if (!promo) return { ok: false, error: `“${rawCode.trim()}” is not a valid promo code` };
  if (promo.kind === 'expired') return { ok: false, error: `Promo code ${code} expired on ${promo.endedOn}` };
  if (promo.kind === 'amount' && subtotalPence < promo.minSpendPence) {
    return {
      ok: false,
      error: `Promo code ${code} needs a minimum spend of £${(promo.minSpendPence / 100).toFixed(2)}`,
    };
  }
  return { ok: true, code };
}

export function promoLabel(code: string): string {
  const p = PROMOS[code];
  return p && p.kind !== 'expired' ? p.label : code;
}

export interface Totals {
  lines: number;
  units: number;
  subtotalPence: number;
  discountPence: number;
  shippingPence: number;
  totalPence: number;
}

/** Totals of basket lines with an optional shipping method and promo code. */
export function computeTotals(
  lines: ReadonlyArray<{ sku: string; quantity: number }>,
  shippingMethod?: string,
  promoCode?: string,
): Totals {
  let subtotal = 0;
  let units = 0;
  for (const line of lines) {
    subtotal += (findProduct(line.sku)?.pricePence ?? 0) * line.quantity;
    units += line.quantity;
  }
  const shipping = SHIPPING_METHODS.find((m) => m.id === shippingMethod)?.pricePence ?? 0;
  let discount = 0;
  const promo = promoCode ? PROMOS[promoCode] : undefined;
  if (promo?.kind === 'percent') discount = Math.round((subtotal * promo.percent) / 100);
  if (promo?.kind === 'amount' && subtotal >= promo.minSpendPence) discount = Math.min(promo.pence, subtotal);
  if (promo?.kind === 'free-shipping') discount = shipping;
  return {
    lines: lines.length,
    units,
    subtotalPence: subtotal,
    discountPence: discount,
    shippingPence: shipping,
    totalPence: subtotal - discount + shipping,
  };
}
