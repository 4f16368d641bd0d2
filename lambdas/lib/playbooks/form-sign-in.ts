/**
 * `formSignIn`: the generic application for the sign-in most sites have, described instead of
 * coded. A form with a username and a password (and optionally an authenticator code), perhaps a
 * second page asking for a one-time code: answered with the account's TOTP secret when it has
 * one, otherwise handed to a person (`mfa_required`, then `submitOneTimeCode` with their code).
 * Credentials come only from `ctx.credentials` and are never logged.
 */
import { generate } from 'otplib';
import type { Page } from 'playwright-core';
import { z } from 'zod';
import type { Application, SignInResult, StepContext } from './contract.ts';
import { NAME_PATTERN } from './define.ts';
import { PlaybookDefinitionError, SignInFailedError } from './errors.ts';
import { EVIDENCE_TIMEOUT_MS, goto, LOAD_TIMEOUT_MS, pageUrl } from './page.ts';
import { locate, type Target, TargetSchema, targetVisible, visibleTarget } from './target.ts';

/** The second page of a sign-in, asking for a one-time code. */
export interface OneTimeCodePage {
  /** Path of the code page (a prefix: `/signin/code`). Without it, the page is told by its `field`. */
  path?: string;
  /** The code's field. */
  field: Target;
  submit: Target;
  /**
   * Who has the code: `totp` (an authenticator: the engine answers with the account's TOTP
   * secret), `person` (sent by text or email: the job waits for a person to type it) or
   * `either` (default: TOTP when the account has a secret, else a person).
   */
  from?: 'totp' | 'person' | 'either';
  /** The text saying where the code went ("We sent a code to •••• 0123"), shown to the person. */
  message?: Target;
}

/** How to sign in to an application with a form. */
export interface FormSignInConfig {
  /** The application's name (the key playbooks and `BELAY_APPLICATIONS` use). */
  name: string;
  /** Path of the sign-in page (`/signin`); also a prefix that marks the site's sign-in pages. */
  signInPath: string;
  /** The query parameter the site reads to go back to a page after signing in (`next`, `returnTo`). */
  returnParam?: string;
  username: Target;
  password: Target;
  /** An authenticator code field on the same form, filled with the account's TOTP. */
  totp?: Target;
  submit: Target;
  /** Shown on every signed-in page (the account's name, a "Sign out" button). */
  signedIn: Target;
  /** Shown on public pages while signed out (a "Sign in" link). */
  signedOut?: Target;
  /** Where the site says why it refused a sign-in (default `[role="alert"]`). */
  error?: Target;
  oneTimeCode?: OneTimeCodePage;
}

/** The zod schema of a {@link FormSignInConfig} (the declarative form's `applications` use it). */
export const FormSignInSchema = z
  .object({
    name: z.string().regex(NAME_PATTERN, 'lower-case letters, digits and dashes, starting with a letter'),
    signInPath: z.string().regex(/^\//, 'a path of the application, starting with /'),
    returnParam: z
      .string()
      .regex(/^[A-Za-z0-9_.-]+$/)
      .optional(),
    username: TargetSchema,
    password: TargetSchema,
    totp: TargetSchema.optional(),
    submit: TargetSchema,
    signedIn: TargetSchema,
    signedOut: TargetSchema.optional(),
    error: TargetSchema.optional(),
    oneTimeCode: z
      .object({
        path: z.string().regex(/^\//, 'a path of the application, starting with /').optional(),
        field: TargetSchema,
        submit: TargetSchema,
        from: z.enum(['totp', 'person', 'either']).optional(),
        message: TargetSchema.optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

/** An application built by {@link formSignIn}: it can also tell a signed-in page. */
export type FormSignInApplication = Application &
  Required<Pick<Application, 'isSignedIn' | 'showsSignedOut'>>;

/**
 * The application of a site with a form sign-in.
 *
 * @throws PlaybookDefinitionError when the description is not valid
 * @example
 * export const expenses = formSignIn({
 *   name: 'expenses',
 *   signInPath: '/login',
 *   username: { label: 'Email' },
 *   password: { label: 'Password' },
 *   submit: { role: 'button', name: 'Log in' },
 *   signedIn: { role: 'button', name: 'Log out' },
 *   oneTimeCode: { path: '/login/code', field: { label: 'Code' }, submit: { role: 'button', name: 'Verify' } },
 * });
 */
export function formSignIn(config: FormSignInConfig): FormSignInApplication {
  const checked = FormSignInSchema.safeParse(config);
  if (!checked.success)
    throw new PlaybookDefinitionError(
      `application ${String(config?.name)}`,
      checked.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`),
    );
  const c = config;
  const name = c.name;
  const errorTarget: Target = c.error ?? '[role="alert"]';
  const code = c.oneTimeCode;

  const sameOrigin = (page: Page, ctx?: StepContext): boolean => {
    if (!ctx) return true;
    const base = ctx.apps[name]?.baseUrl;
    return base === undefined || pageUrl(page)?.origin === new URL(base).origin;
  };
  const onPath = (page: Page, path: string | undefined): boolean =>
    path !== undefined && (pageUrl(page)?.pathname ?? '').startsWith(path);
  const baseOf = (ctx: StepContext): URL => {
    const base = ctx.apps[name]?.baseUrl;
    if (!base) throw new SignInFailedError(name, 'the step context has no base URL for it');
    return new URL(base);
  };

  const onCodePage = async (page: Page): Promise<boolean> => {
    if (!code) return false;
    if (code.path !== undefined) return onPath(page, code.path);
    return targetVisible(page, code.field);
  };
  const onSignInForm = async (page: Page): Promise<boolean> =>
    (await targetVisible(page, c.password)) || (await targetVisible(page, c.username));

  const isSignedOut = async (page: Page, ctx?: StepContext): Promise<boolean> => {
    if (!sameOrigin(page, ctx)) return false;
    if (onPath(page, c.signInPath) || (await onCodePage(page))) return true;
    return targetVisible(page, c.password);
  };
  const isSignedIn = async (page: Page, ctx?: StepContext): Promise<boolean> =>
    sameOrigin(page, ctx) && !(await isSignedOut(page, ctx)) && (await targetVisible(page, c.signedIn));
  const showsSignedOut = async (page: Page, ctx?: StepContext): Promise<boolean> =>
    c.signedOut !== undefined && sameOrigin(page, ctx) && (await targetVisible(page, c.signedOut));

  // After a submit: the site left its sign-in pages. The signed-in sign is waited for but not
  // required, so a changed layout is reported by the next step's precondition, not as a refused sign-in.
  const signedInNow = async (page: Page, ctx: StepContext): Promise<boolean> => {
    if (!sameOrigin(page, ctx) || (await isSignedOut(page, ctx))) return false;
    await visibleTarget(page, c.signedIn, 1_000);
    return true;
  };

  const errorText = async (page: Page, fallback: string): Promise<string> => {
    const el = await visibleTarget(page, errorTarget, 1_000);
    const item = el ? el.locator('li').first() : undefined;
    const text =
      (item && (await item.count()) ? await item.textContent().catch(() => null) : null) ??
      (el ? await el.textContent().catch(() => null) : null);
    return text?.replace(/\s+/g, ' ').trim().slice(0, 300) || fallback;
  };

  const fill = async (page: Page, target: Target, value: string, what: string): Promise<void> => {
    const el = await visibleTarget(page, target, EVIDENCE_TIMEOUT_MS);
    if (!el) throw new SignInFailedError(name, `the sign-in page has no ${what} field`);
    await el.fill(value);
  };
  const press = async (page: Page, target: Target, what: string): Promise<void> => {
    const el = await locate(page, target);
    if (!el) throw new SignInFailedError(name, `the sign-in page has no ${what}`);
    await el.click();
    await page.waitForLoadState('load', { timeout: LOAD_TIMEOUT_MS }).catch(() => undefined);
  };

  const enterCode = async (page: Page, value: string): Promise<void> => {
    if (!code) return;
    await fill(page, code.field, value, 'code');
    await press(page, code.submit, 'button to send the code');
  };

  const signIn = async (page: Page, ctx: StepContext): Promise<SignInResult> => {
    const base = baseOf(ctx);
    const signedOut = await isSignedOut(page, ctx);
    const atCode = signedOut && (await onCodePage(page));
    if (!atCode && !(signedOut && (await onSignInForm(page)))) {
      const url = pageUrl(page);
      const here =
        url && url.origin === base.origin && !onPath(page, c.signInPath) ? url.pathname + url.search : '';
      const target = new URL(c.signInPath, base);
      if (c.returnParam && here) target.searchParams.set(c.returnParam, here);
      await goto(page, target.toString());
      if (await isSignedIn(page, ctx)) return { status: 'signed_in' };
    }
    if (!(await onCodePage(page))) {
      const credentials = await ctx.credentials.get(name);
      await fill(page, c.username, credentials.username, 'username');
      await fill(page, c.password, credentials.password, 'password');
      if (c.totp && credentials.totpSecret)
        await fill(page, c.totp, await generate({ secret: credentials.totpSecret }), 'authenticator code');
      await ctx.faultPoint('mid-action');
      await press(page, c.submit, 'button to sign in');
      if ((await onSignInForm(page)) && !(await onCodePage(page)))
        throw new SignInFailedError(name, await errorText(page, 'the site did not accept the sign-in'));
    }
    if (await onCodePage(page)) {
      const credentials = await ctx.credentials.get(name);
      const from = code?.from ?? 'either';
      if (from !== 'person' && credentials.totpSecret) {
        await enterCode(page, await generate({ secret: credentials.totpSecret }));
        if (await onCodePage(page))
          throw new SignInFailedError(name, await errorText(page, 'the site did not accept the code'));
      } else if (from === 'totp') {
        throw new SignInFailedError(
          name,
          'the site asks for an authenticator code and the account has no TOTP secret',
        );
      } else {
        const hint = code?.message ? await visibleTarget(page, code.message, EVIDENCE_TIMEOUT_MS) : undefined;
        const detail =
          (await hint?.textContent().catch(() => null))?.replace(/\s+/g, ' ').trim() ||
          'a one-time code was sent to the account holder';
        ctx.log.info('sign-in needs a one-time code from a person', { application: name });
        return { status: 'mfa_required', detail };
      }
    }
    if (!(await signedInNow(page, ctx)))
      throw new SignInFailedError(name, 'the site did not show a signed-in page');
    ctx.log.info('signed in', { application: name });
    return { status: 'signed_in' };
  };

  const submitOneTimeCode = async (page: Page, ctx: StepContext, value: string): Promise<SignInResult> => {
    if (!code) return (await signedInNow(page, ctx)) ? { status: 'signed_in' } : signIn(page, ctx);
    if (!(await onCodePage(page)) && code.path !== undefined)
      await goto(page, new URL(code.path, baseOf(ctx)).toString());
    if (!(await onCodePage(page))) {
      // The pending sign-in is gone (expired or locked): start again, which sends a new code.
      if (await isSignedIn(page, ctx)) return { status: 'signed_in' };
      const again = await signIn(page, ctx);
      return again.status === 'signed_in'
        ? again
        : { status: 'mfa_required', detail: `the sign-in had expired; ${again.detail}` };
    }
    await enterCode(page, value);
    if (await onCodePage(page))
      return {
        status: 'mfa_required',
        detail: `the code was not accepted: ${await errorText(page, 'the site did not accept the code')}`,
      };
    if (await isSignedOut(page, ctx)) {
      const again = await signIn(page, ctx);
      return again.status === 'signed_in'
        ? again
        : { status: 'mfa_required', detail: `too many wrong codes; ${again.detail}` };
    }
    return (await signedInNow(page, ctx))
      ? { status: 'signed_in' }
      : { status: 'mfa_required', detail: 'the site did not confirm the sign-in' };
  };

  return { name, isSignedOut, isSignedIn, showsSignedOut, signIn, submitOneTimeCode };
}
