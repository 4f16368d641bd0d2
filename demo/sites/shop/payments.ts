/**
 * Card checks of the demo shop, with the well-known public test numbers: 4242 4242 4242 4242
 * is accepted, 4000 0000 0000 0002 is declined, 4000 0000 0000 9995 has insufficient funds.
 * Only the brand and last four digits are ever kept.
 */
import { randomId } from '../http/runtime.ts';

/** A card saved on the account (seeded per demo account). */
export interface SavedCard {
  id: string;
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
  /** The decline the card's issuer answers with, if any. */
  decline?: string;
}

/** The payment chosen for the basket: an authorisation, never the card number. */
export interface PaymentChoice {
  methodId: string;
  brand: string;
  last4: string;
  authorization: string;
}

const DECLINES: Record<string, string> = {
  '4000000000000002': 'Your card was declined.',
  '4000000000009995': 'Your card has insufficient funds.',
  '4000000000000069': 'Your card has expired.',
};

/** The cards every demo shop account has saved. */
export function seedSavedCards(): SavedCard[] {
  return [
    { id: 'pm_visa_4242', brand: 'Visa', last4: '4242', expMonth: 12, expYear: 2034 },
    {
      id: 'pm_visa_0002',
      brand: 'Visa',
      last4: '0002',
      expMonth: 11,
      expYear: 2033,
      decline: 'Your card was declined.',
    },
  ];
}

/** The Luhn checksum of a card number. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return digits.length > 0 && sum % 10 === 0;
}

export function cardBrand(digits: string): string {
  if (digits.startsWith('4')) return 'Visa';
  if (/^5[1-5]/.test(digits) || /^2[2-7]/.test(digits)) return 'Mastercard';
  if (/^3[47]/.test(digits)) return 'American Express';
  return 'Card';
}

export type CardFieldErrors = Partial<Record<'cardNumber' | 'expiry' | 'cvc' | 'cardName', string>>;

/**
 * Checks a new card from the payment form and "authorises" it with the test issuer.
 * Field errors come first; a valid card can still be declined.
 */
export function authorizeNewCard(
  form: URLSearchParams,
  now: Date = new Date(),
): { ok: true; payment: PaymentChoice } | { ok: false; errors: CardFieldErrors; decline?: string } {
  const digits = (form.get('cardNumber') ?? '').replace(/[\s-]/g, '');
  const expiry = (form.get('expiry') ?? '').trim();
  const cvc = (form.get('cvc') ?? '').trim();
  const name = (form.get('cardName') ?? '').trim();
  const errors: CardFieldErrors = {};
  if (!digits) errors.cardNumber = 'Enter the card number';
  else if (!/^\d{12,19}$/.test(digits) || !luhnValid(digits))
    errors.cardNumber = 'Your card number is invalid.';
  const m = /^(\d{2})\s*\/\s*(\d{2}|\d{4})$/.exec(expiry);
  if (!expiry) errors.expiry = 'Enter the expiry date';
  else if (!m || Number(m[1]) < 1 || Number(m[1]) > 12) errors.expiry = 'Enter the expiry date as MM/YY';
  else {
    const year = Number(m[2]) < 100 ? 2000 + Number(m[2]) : Number(m[2]);
    const endOfMonth = new Date(Date.UTC(year, Number(m[1]), 1));
    if (endOfMonth <= now) errors.expiry = 'Your card has expired.';
  }
  if (!/^\d{3,4}$/.test(cvc)) errors.cvc = "Your card's security code is incomplete.";
  if (!name) errors.cardName = 'Enter the name on the card';
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  const decline = DECLINES[digits];
  if (decline) return { ok: false, errors: {}, decline };
  return {
    ok: true,
    payment: {
      methodId: 'new',
      brand: cardBrand(digits),
      last4: digits.slice(-4),
      authorization: `auth_${randomId(8)}`,
    },
  };
}

/** "Authorises" a saved card. */
export function authorizeSavedCard(
  card: SavedCard,
): { ok: true; payment: PaymentChoice } | { ok: false; decline: string } {
  if (card.decline) return { ok: false, decline: card.decline };
  return {
    ok: true,
    payment: {
      methodId: card.id,
      brand: card.brand,
      last4: card.last4,
      authorization: `auth_${randomId(8)}`,
    },
  };
}
