/**
 * The sign-in the demo sites share (`demo/sites/http/auth.ts`), as playbooks see it: how to
 * tell their sign-in page, and how to sign in. An authenticator (TOTP) account signs in by itself; an account whose one-time code
 * goes to a person (SMS) reports `mfa_required` and finishes with `submitOneTimeCode`.
 * Credentials come only from `ctx.credentials` and are never logged.
 */
import { generate } from 'otplib';
import type { Page } from 'playwright-core';
import type { Application, SignInResult, StepContext } from '../contract.ts';
import { SignInFailedError } from '../errors.ts';
import { appBase, appUrl, EVIDENCE_TIMEOUT_MS, goto, pageUrl, tid } from '../page.ts';

/** Selectors that do not change with the sites' layout: form identity and field names. */
const SIGNIN_FORM = 'form[data-form="signin"]';
const CODE_FORM = 'form[data-form="code"]';

async function siteOf(page: Page): Promise<string | undefined> {
  try {
    return await page.evaluate(
      () => document.querySelector('meta[name="belay-demo-app"]')?.getAttribute('content') ?? undefined,
    );
  } catch {
    return undefined;
  }
}

async function submit(page: Page, form: string): Promise<void> {
  await page.locator(`${form} [type="submit"]`).first().click();
  await page.waitForLoadState('load').catch(() => undefined);
}

async function errorText(page: Page): Promise<string> {
  const text = await page
    .locator('[role="alert"] li')
    .first()
    .textContent({ timeout: 1_000 })
    .catch(() => null);
  return text?.trim() || 'the site did not accept the sign-in';
}

/** The `Application` of one of the demo sites (`shop`, `crm`, `billing`). */
export function demoSiteApplication(name: string): Application {
  const onPath = (page: Page, path: string): boolean => pageUrl(page)?.pathname === path;

  const isSignedOut = async (page: Page): Promise<boolean> => {
    const url = pageUrl(page);
    if (!url?.pathname.startsWith('/signin')) return false;
    return (await siteOf(page)) === name;
  };

  const signedInNow = async (page: Page): Promise<boolean> =>
    !(await isSignedOut(page)) && (await siteOf(page)) === name && !onPath(page, '/signin');

  const enterCode = async (page: Page, code: string): Promise<void> => {
    await page.locator(`${CODE_FORM} input[name="code"]`).fill(code);
    await submit(page, CODE_FORM);
  };

  const signIn = async (page: Page, ctx: StepContext): Promise<SignInResult> => {
    const base = appBase(ctx, name);
    const signedOut = await isSignedOut(page);
    const onCodeForm = signedOut && onPath(page, '/signin/code');
    const onSignInForm =
      signedOut &&
      (await page
        .locator(SIGNIN_FORM)
        .isVisible()
        .catch(() => false));
    if (!onCodeForm && !onSignInForm) {
      const url = pageUrl(page);
      const here =
        url && url.origin === base.origin && !url.pathname.startsWith('/signin')
          ? url.pathname + url.search
          : '';
      await goto(page, appUrl(ctx, name, here ? `/signin?next=${encodeURIComponent(here)}` : '/signin'));
      if (await signedInNow(page)) return { status: 'signed_in' };
    }
    if (!onPath(page, '/signin/code')) {
      const credentials = await ctx.credentials.get(name);
      await page.locator(`${SIGNIN_FORM} input[name="username"]`).fill(credentials.username);
      await page.locator(`${SIGNIN_FORM} input[name="password"]`).fill(credentials.password);
      await ctx.faultPoint('mid-action');
      await submit(page, SIGNIN_FORM);
      if (onPath(page, '/signin')) throw new SignInFailedError(name, await errorText(page));
    }
    if (onPath(page, '/signin/code')) {
      const credentials = await ctx.credentials.get(name);
      const hint = page.locator(tid('code-hint')).or(page.locator('[data-method]')).first();
      const method = await hint
        .getAttribute('data-method', { timeout: EVIDENCE_TIMEOUT_MS })
        .catch(() => null);
      if (method === 'totp' && credentials.totpSecret) {
        await enterCode(page, await generate({ secret: credentials.totpSecret }));
        if (onPath(page, '/signin/code')) throw new SignInFailedError(name, await errorText(page));
      } else {
        const detail =
          (await hint.textContent().catch(() => null))?.trim() ||
          'a one-time code was sent to the account holder';
        ctx.log.info('sign-in needs a one-time code from a person', { application: name });
        return { status: 'mfa_required', detail };
      }
    }
    if (!(await signedInNow(page)))
      throw new SignInFailedError(name, 'the site did not show a signed-in page');
    ctx.log.info('signed in', { application: name });
    return { status: 'signed_in' };
  };

  const submitOneTimeCode = async (page: Page, ctx: StepContext, code: string): Promise<SignInResult> => {
    if (!onPath(page, '/signin/code')) await goto(page, appUrl(ctx, name, '/signin/code'));
    if (!onPath(page, '/signin/code')) {
      // The pending sign-in is gone (expired or locked): start again, which sends a new code.
      if (await signedInNow(page)) return { status: 'signed_in' };
      const again = await signIn(page, ctx);
      return again.status === 'signed_in'
        ? again
        : { status: 'mfa_required', detail: `the sign-in had expired; ${again.detail}` };
    }
    await enterCode(page, code);
    if (onPath(page, '/signin/code'))
      return { status: 'mfa_required', detail: `the code was not accepted: ${await errorText(page)}` };
    if (onPath(page, '/signin')) {
      const again = await signIn(page, ctx);
      return again.status === 'signed_in'
        ? again
        : { status: 'mfa_required', detail: `too many wrong codes; ${again.detail}` };
    }
    return (await signedInNow(page))
      ? { status: 'signed_in' }
      : { status: 'mfa_required', detail: 'the site did not confirm the sign-in' };
  };

  return { name, isSignedOut, signIn, submitOneTimeCode };
}
