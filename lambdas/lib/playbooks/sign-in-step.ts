/**
 * A sign-in step for any application that can tell a signed-in page (`isSignedIn`; every
 * `formSignIn` application can). Its precondition reports `signed_out` while the account is
 * signed out, so the engine signs in through its re-authentication path (TOTP by itself; a
 * person's one-time code through `mfa_required`); its run does the same when driven directly.
 */
import type { Page } from 'playwright-core';
import type { Application, PreconditionResult, Step, StepContext } from './contract.ts';
import { MfaRequiredError, PlaybookDefinitionError } from './errors.ts';
import { appBase, appUrl, goto, LOAD_TIMEOUT_MS, pageUrl, READY_TIMEOUT_MS } from './page.ts';

/**
 * Marks the steps {@link signInStep} builds: an enumerable symbol, so a step spread into another
 * object (the declarative form adds its fields so) keeps it, and no JSON or `Object.keys` sees it.
 */
const SIGN_IN_STEP = Symbol.for('belay.signInStep');

/** An application that can tell a signed-in page. */
export type SignInApplication = Application & Required<Pick<Application, 'isSignedIn'>>;

async function signedInWithin(
  application: SignInApplication,
  page: Page,
  ctx: StepContext,
  timeoutMs: number,
): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await application.isSignedIn(page, ctx).catch(() => false)) return true;
    if (Date.now() >= until) return false;
    await page.waitForTimeout(100).catch(() => undefined);
  }
}

/**
 * A read step that leaves `app` signed in, on the page it was on (or the application's home).
 * Safe to run twice: signed in already, it does nothing.
 *
 * @example
 * const shop = formSignIn({ name: 'shop', ... });
 * steps: [signInStep('sign-in', 'shop', shop), ...]
 */
export function signInStep<I = Record<string, unknown>>(
  id: string,
  app: string,
  application: SignInApplication,
  options: { title?: string; home?: string } = {},
): Step<I> {
  if (typeof application.isSignedIn !== 'function')
    throw new PlaybookDefinitionError(`step ${id}`, [
      `application ${application.name} cannot tell a signed-in page (isSignedIn); formSignIn gives it`,
    ]);
  const asCtx = (ctx: StepContext<I>): StepContext => ctx as unknown as StepContext;
  const step: Step<I> = {
    id,
    title: options.title ?? `Sign in to ${app}`,
    kind: 'read',
    app,
    async precondition(page, ctx): Promise<PreconditionResult> {
      await page.waitForLoadState('load', { timeout: LOAD_TIMEOUT_MS }).catch(() => undefined);
      const url = pageUrl(page);
      if (!url || url.origin !== appBase(ctx, app).origin) {
        return { ok: false, reason: 'wrong_page', detail: `the page is not in ${app}` };
      }
      if (await application.isSignedOut(page, asCtx(ctx)).catch(() => false))
        return { ok: false, reason: 'signed_out', detail: `${app} asks to sign in` };
      if ((await application.showsSignedOut?.(page, asCtx(ctx)).catch(() => false)) === true) {
        return { ok: false, reason: 'signed_out', detail: `${app} shows "Sign in"` };
      }
      if (!(await signedInWithin(application, page, asCtx(ctx), READY_TIMEOUT_MS))) {
        return {
          ok: false,
          reason: 'layout_changed',
          detail: `${app} ${url.pathname} shows neither "Sign in" nor the signed-in account`,
        };
      }
      return { ok: true };
    },
    async restore(page, ctx): Promise<void> {
      await goto(page, appUrl(ctx, app, options.home ?? '/'));
    },
    async run(page, ctx): Promise<void> {
      if (await signedInWithin(application, page, asCtx(ctx), 500)) return;
      const result = await application.signIn(page, asCtx(ctx));
      if (result.status === 'mfa_required') throw new MfaRequiredError(app, result.detail);
    },
    async verify(page, ctx) {
      const url = pageUrl(page);
      if (
        !url ||
        url.origin !== appBase(ctx, app).origin ||
        (await application.isSignedOut(page, asCtx(ctx)).catch(() => false))
      )
        return null;
      return (await signedInWithin(application, page, asCtx(ctx), 2_000))
        ? { signedIn: true, application: app }
        : null;
    },
  };
  (step as unknown as Record<symbol, boolean>)[SIGN_IN_STEP] = true;
  return step;
}

/**
 * Was `step` built by {@link signInStep} (also through the declarative form's `signIn: true`)?
 * Tools ask, to know from which step on a job is signed in.
 */
export function isSignInStep(step: object): boolean {
  return (step as Record<symbol, unknown>)[SIGN_IN_STEP] === true;
}
