/**
 * The demo accounts of the local demo sites (shop, crm, billing).
 *
 * DEMO-ONLY CREDENTIALS: these usernames, passwords and TOTP secrets exist only in the local
 * demo sites under `demo/sites/`, which listen on 127.0.0.1. They protect nothing and must
 * never be used for a real system. They live in the repository so that tests and people can
 * sign in to the demo sites.
 */
import type { Credentials } from '../lambdas/lib/playbooks/contract.ts';
import { UnknownDemoAccountError } from './sites/errors.ts';

/** The three demo applications. */
export type DemoSiteName = 'shop' | 'crm' | 'billing';

/** The demo site names, in start order. */
export const DEMO_SITE_NAMES: readonly DemoSiteName[] = ['shop', 'crm', 'billing'];

/** How an account proves a second factor. */
export type DemoMfa =
  | { kind: 'none' }
  /** An authenticator app: 6 digits, 30 s period, SHA-1 (otplib defaults). */
  | { kind: 'totp'; secret: string }
  /** A code sent to a phone: the site writes it to its outbox, which a person reads. */
  | { kind: 'outbox'; phone: string };

export interface DemoAccount {
  username: string;
  password: string;
  displayName: string;
  mfa: DemoMfa;
}

const person = (displayName: string, username: string, password: string, mfa: DemoMfa): DemoAccount => ({
  username,
  password,
  displayName,
  mfa,
});

/** How many load-test shoppers the shop has (`shopper01@example.com` ...). */
export const LOAD_TEST_SHOPPER_COUNT = 20;

/** Two-digit number of load-test shopper `n` (1-based): `01` ... `20`. */
export function shopperNumber(n: number): string {
  return String(n).padStart(2, '0');
}

/**
 * Load-test accounts of the shop (no MFA), so that concurrent checkouts each have a cart of
 * their own (the shop keeps one cart per account). Used by `npm run bench`.
 */
export const LOAD_TEST_SHOPPERS: readonly DemoAccount[] = Array.from(
  { length: LOAD_TEST_SHOPPER_COUNT },
  (_, i) => {
    const nn = shopperNumber(i + 1);
    return person(`Shopper ${nn}`, `shopper${nn}@example.com`, `demo-shop-shopper${nn}`, { kind: 'none' });
  },
);

/**
 * Per site: an account without MFA, one with TOTP, one whose code goes to the outbox; the
 * shop also has the load-test shoppers.
 */
export const DEMO_ACCOUNTS: Readonly<Record<DemoSiteName, readonly DemoAccount[]>> = {
  shop: [
    person('Ada Lovelace', 'ada@example.com', 'demo-shop-ada', { kind: 'none' }),
    person('Grace Hopper', 'grace@example.com', 'demo-shop-grace', {
      kind: 'totp',
      secret: 'FBLGX3W2W5AJIJFTBMPUBINA7Z7GRFDX',
    }),
    person('Alan Turing', 'alan@example.com', 'demo-shop-alan', { kind: 'outbox', phone: '+44 7700 900123' }),
    ...LOAD_TEST_SHOPPERS,
  ],
  crm: [
    person('Ada Lovelace', 'ada@example.com', 'demo-crm-ada', { kind: 'none' }),
    person('Grace Hopper', 'grace@example.com', 'demo-crm-grace', {
      kind: 'totp',
      secret: '7BQP6QYJNGPAKMG7CEMUSN3EF5ZHYZAK',
    }),
    person('Alan Turing', 'alan@example.com', 'demo-crm-alan', { kind: 'outbox', phone: '+44 7700 900123' }),
  ],
  billing: [
    person('Ada Lovelace', 'ada@example.com', 'demo-billing-ada', { kind: 'none' }),
    person('Grace Hopper', 'grace@example.com', 'demo-billing-grace', {
      kind: 'totp',
      secret: 'PGFU76BG6H3KGYFLJX76HTF6XKSEYVOR',
    }),
    person('Alan Turing', 'alan@example.com', 'demo-billing-alan', {
      kind: 'outbox',
      phone: '+44 7700 900123',
    }),
  ],
};

/** The demo account of `site` named `username`, or undefined. */
export function findDemoAccount(site: DemoSiteName, username: string): DemoAccount | undefined {
  return DEMO_ACCOUNTS[site].find((a) => a.username === username);
}

/**
 * The contract's `Credentials` for a demo account (TOTP secret included for authenticator
 * accounts; an outbox account has none, so its sign-in needs a person).
 */
export function demoCredentials(site: DemoSiteName, username: string): Credentials {
  const account = findDemoAccount(site, username);
  if (!account) throw new UnknownDemoAccountError(site, username);
  return {
    username: account.username,
    password: account.password,
    ...(account.mfa.kind === 'totp' ? { totpSecret: account.mfa.secret } : {}),
  };
}
