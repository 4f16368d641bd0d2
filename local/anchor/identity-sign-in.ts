/**
 * A session created with identities arrives signed in: before `POST /v1/sessions` answers, the
 * local service runs each identity's login in the session's browser, as Anchor runs the
 * application's auth flow before it hands a session over. Anchor discovers a site's login form;
 * this stand-in does the same for a form of the usual shape: the application's URL, or the
 * "Sign in" link it shows; a username (or e-mail) field and a password field; then, when the
 * site asks for a one-time code and the identity holds an authenticator secret, its TOTP code.
 */
import { generate } from 'otplib';
import type { Page } from 'playwright-core';
import type { ApplicationRecord, Credential, IdentityRecord } from './identities.ts';

const USERNAME =
  'input[name="username"], input[name="email"], input[type="email"], input[autocomplete="username"]';
const PASSWORD = 'input[type="password"]';
const CODE = 'input[name="code"], input[name="otp"], input[autocomplete="one-time-code"]';
const SIGN_IN_LINK = 'a[href*="signin"], a[href*="sign-in"], a[href*="login"], a[href*="log-in"]';
const STEP_TIMEOUT_MS = 10_000;

/** The outcome of one identity's login: Anchor's identity status after it. */
export type SignInOutcome = 'validated' | 'failed';

function credential<T extends Credential['type']>(
  identity: IdentityRecord,
  type: T,
): Extract<Credential, { type: T }> | undefined {
  return identity.credentials.find((c): c is Extract<Credential, { type: T }> => c.type === type);
}

async function visible(page: Page, selector: string): Promise<boolean> {
  return page
    .locator(selector)
    .first()
    .isVisible()
    .catch(() => false);
}

async function submit(page: Page, field: string): Promise<void> {
  const form = page
    .locator('form')
    .filter({ has: page.locator(field) })
    .first();
  const button = form.locator('[type="submit"], button:not([type])').first();
  await Promise.all([
    page.waitForLoadState('load', { timeout: STEP_TIMEOUT_MS }).catch(() => undefined),
    (await button.count()) > 0
      ? button.click({ timeout: STEP_TIMEOUT_MS })
      : page.locator(field).first().press('Enter'),
  ]);
  await page.waitForLoadState('load', { timeout: STEP_TIMEOUT_MS }).catch(() => undefined);
}

/**
 * Signs `identity` in to `application` on `page`. Never throws for a refused login: the
 * outcome says so (Anchor marks the identity `failed` and hands the session over signed out).
 * Credentials go to the page's fields only, never to a log.
 */
export async function signInIdentity(
  page: Page,
  application: ApplicationRecord,
  identity: IdentityRecord,
): Promise<SignInOutcome> {
  const login = credential(identity, 'username_password');
  if (!login?.username || !login.password) return 'failed';
  try {
    await page.goto(application.url, { waitUntil: 'load', timeout: STEP_TIMEOUT_MS });
    if (!(await visible(page, PASSWORD)) && (await visible(page, SIGN_IN_LINK))) {
      await page.locator(SIGN_IN_LINK).first().click({ timeout: STEP_TIMEOUT_MS });
      await page.waitForLoadState('load', { timeout: STEP_TIMEOUT_MS });
    }
    if (!(await visible(page, PASSWORD))) return 'failed';
    await page.locator(USERNAME).first().fill(login.username, { timeout: STEP_TIMEOUT_MS });
    await page.locator(PASSWORD).first().fill(login.password, { timeout: STEP_TIMEOUT_MS });
    await submit(page, PASSWORD);
    if (await visible(page, CODE)) {
      const secret = credential(identity, 'authenticator')?.secret;
      if (!secret) return 'failed';
      await page
        .locator(CODE)
        .first()
        .fill(await generate({ secret }), { timeout: STEP_TIMEOUT_MS });
      await submit(page, CODE);
    }
    // Signed in: the site shows neither its password form nor its code form any more.
    return (await visible(page, PASSWORD)) || (await visible(page, CODE)) ? 'failed' : 'validated';
  } catch {
    return 'failed';
  }
}
