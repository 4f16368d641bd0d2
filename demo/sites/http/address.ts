/** Postal addresses: the fields, their server-side validation, and the form that edits them. */
import type { PageContext } from './html.ts';
import { esc, field, selectField } from './html.ts';

export interface Address {
  /** Recipient (shop) or empty (a company record already has its name). */
  name?: string;
  line1: string;
  line2?: string;
  city: string;
  postcode: string;
  /** ISO 3166 alpha-2. */
  country: string;
}

export const COUNTRIES: ReadonlyArray<{ value: string; label: string }> = [
  { value: 'GB', label: 'United Kingdom' },
  { value: 'IE', label: 'Ireland' },
  { value: 'FR', label: 'France' },
  { value: 'DE', label: 'Germany' },
  { value: 'NL', label: 'Netherlands' },
  { value: 'US', label: 'United States' },
];

const POSTCODE: Record<string, RegExp> = {
  GB: /^[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}$/i,
  US: /^\d{5}(-\d{4})?$/,
  DE: /^\d{5}$/,
  FR: /^\d{5}$/,
  NL: /^\d{4} ?[A-Z]{2}$/i,
  IE: /^[A-Z\d]{3} ?[A-Z\d]{4}$/i,
};

export type AddressErrors = Partial<Record<keyof Address, string>>;

/** Reads and checks an address from a form; `requireName` for a recipient's name. */
export function parseAddress(
  form: URLSearchParams,
  requireName: boolean,
): { address: Address; errors: AddressErrors } {
  const get = (k: string): string => (form.get(k) ?? '').trim().replace(/\s+/g, ' ');
  const country = get('country').toUpperCase();
  const address: Address = {
    line1: get('line1'),
    city: get('city'),
    postcode: get('postcode').toUpperCase(),
    country,
  };
  if (requireName) address.name = get('name');
  if (get('line2')) address.line2 = get('line2');
  const errors: AddressErrors = {};
  if (requireName && !address.name) errors.name = 'Enter the full name';
  if (!address.line1) errors.line1 = 'Enter address line 1, typically the building and street';
  if (!address.city) errors.city = 'Enter a town or city';
  if (!COUNTRIES.some((c) => c.value === country)) errors.country = 'Select a country';
  if (!address.postcode) errors.postcode = 'Enter a postcode';
  else if (POSTCODE[country] && !POSTCODE[country].test(address.postcode))
    errors.postcode = 'Enter a real postcode';
  for (const [k, v] of Object.entries(address)) {
    if (typeof v === 'string' && v.length > 100)
      errors[k as keyof Address] = 'Must be 100 characters or fewer';
  }
  return { address, errors };
}

/** The address fields of a form (values and per-field errors). */
export function addressFields(
  pc: PageContext,
  value: Partial<Address>,
  errors: AddressErrors,
  withName: boolean,
): string {
  const f = (name: keyof Address, label: string, autocomplete: string, width?: 'short'): string =>
    field(pc, {
      name,
      label,
      value: value[name] ?? '',
      autocomplete,
      ...(errors[name] ? { error: errors[name] } : {}),
      ...(width ? { width } : {}),
    });
  return [
    withName ? f('name', 'Full name', 'name') : '',
    f('line1', 'Address line 1', 'address-line1'),
    f('line2', 'Address line 2 (optional)', 'address-line2'),
    f('city', 'Town or city', 'address-level2'),
    f('postcode', 'Postcode', 'postal-code', 'short'),
    selectField(pc, {
      name: 'country',
      label: 'Country',
      options: COUNTRIES,
      value: value.country ?? 'GB',
      ...(errors.country ? { error: errors.country } : {}),
    }),
  ].join('');
}

/** An address on one line per part, for display. */
export function formatAddress(a: Address): string {
  const country = COUNTRIES.find((c) => c.value === a.country)?.label ?? a.country;
  return [a.name, a.line1, a.line2, a.city, a.postcode, country]
    .filter(Boolean)
    .map((p) => esc(p))
    .join('<br>');
}

/** The error messages of an address, in field order. */
export function addressErrorList(errors: AddressErrors): string[] {
  return (['name', 'line1', 'line2', 'city', 'postcode', 'country'] as const)
    .map((k) => errors[k])
    .filter((e): e is string => Boolean(e));
}
