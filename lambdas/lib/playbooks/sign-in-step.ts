/**
 * The sign-in step of a demo application, shared by the playbooks. Its precondition reports
 * `signed_out` while the account is signed out, so the engine signs in through its
 * re-authentication path (TOTP by itself; a person's one-time code through `mfa_required`);
 * its run does the same when driven directly.
 */
import type { Application, PreconditionResult, Step } from './contract.ts';
import { MfaRequiredError } from './errors.ts';
import {
  appBase,
  appUrl,
  goto,
  LOAD_TIMEOUT_MS,
  pageUrl,
  READY_TIMEOUT_MS,
  tid,
  visibleWithin,
} from './page.ts';

/** A read step that leaves `app` signed in, on the page it was on (or the application's home). */
export function signInStep(id: string, app: string, application: Application): Step {
  return {
    id,
    title: `Sign in to ${app}`,
    kind: 'read',
    app,
    async precondition(page, ctx): Promise<PreconditionResult> {
      await page.waitForLoadState('load', { timeout: LOAD_TIMEOUT_MS }).catch(() => undefined);
      const url = pageUrl(page);
      if (!url || url.origin !== appBase(ctx, app).origin) {
        return { ok: false, reason: 'wrong_page', detail: `the page is not in ${app}` };
      }
      if (await application.isSignedOut(page))
        return { ok: false, reason: 'signed_out', detail: `${app} asks to sign in` };
      if (
        await page
          .locator(tid('signin-link'))
          .first()
          .isVisible()
          .catch(() => false)
      ) {
        return { ok: false, reason: 'signed_out', detail: `${app} shows "Sign in"` };
      }
      if (!(await visibleWithin(page, tid('account-name'), READY_TIMEOUT_MS))) {
        return {
          ok: false,
          reason: 'layout_changed',
          detail: `${app} ${url.pathname} shows neither "Sign in" nor the account`,
        };
      }
      return { ok: true };
    },
    async restore(page, ctx): Promise<void> {
      await goto(page, appUrl(ctx, app, '/'));
    },
    async run(page, ctx): Promise<void> {
      if (await visibleWithin(page, tid('account-name'), 500)) return;
      const result = await application.signIn(page, ctx);
      if (result.status === 'mfa_required') throw new MfaRequiredError(app, result.detail);
    },
    async verify(page, ctx) {
      const url = pageUrl(page);
      if (!url || url.origin !== appBase(ctx, app).origin || (await application.isSignedOut(page)))
        return null;
      return (await visibleWithin(page, tid('account-name'), 2_000))
        ? { signedIn: true, application: app }
        : null;
    },
  };
}
