/** The shop's persisted data: baskets (per account, so they survive a new sign-in), orders, saved cards. */
import { DEMO_ACCOUNTS } from '../../accounts.ts';
import type { Address } from '../http/address.ts';
import type { Totals } from './catalogue.ts';
import type { PaymentChoice, SavedCard } from './payments.ts';
import { seedSavedCards } from './payments.ts';

export interface CartLine {
  sku: string;
  quantity: number;
}

/** What checkout has collected so far. */
export interface CheckoutState {
  address?: Address;
  shippingMethod?: string;
  promoCode?: string;
  payment?: PaymentChoice;
}

export interface Cart {
  lines: CartLine[];
  checkout: CheckoutState;
  /**
   * The order form last submitted from this basket (a shop that de-duplicates nothing): the
   * form carries the whole order, so the same form sent again places it again.
   */
  submitted?: { form: string; lines: CartLine[]; checkout: CheckoutState };
}

export interface OrderLine {
  sku: string;
  name: string;
  quantity: number;
  unitPence: number;
}

export interface Order {
  id: string;
  /** The idempotency key the order was placed with. */
  key: string;
  username: string;
  placedAt: string;
  lines: OrderLine[];
  address: Address;
  shippingMethod: string;
  promoCode?: string;
  payment: { brand: string; last4: string };
  totals: Totals;
}

export interface ShopData {
  carts: Record<string, Cart>;
  orders: Order[];
  savedCards: Record<string, SavedCard[]>;
  nextOrderNumber: number;
}

export function seedShop(): ShopData {
  const savedCards: Record<string, SavedCard[]> = {};
  for (const a of DEMO_ACCOUNTS.shop) savedCards[a.username] = seedSavedCards();
  return { carts: {}, orders: [], savedCards, nextOrderNumber: 100001 };
}

/** The account's basket, created empty on first use. */
export function cartOf(data: ShopData, username: string): Cart {
  let cart = data.carts[username];
  if (!cart) {
    cart = { lines: [], checkout: {} };
    data.carts[username] = cart;
  }
  return cart;
}
