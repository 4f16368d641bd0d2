import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DemoSiteName } from '../../../demo/accounts.ts';
import { siteAdmin } from '../../../demo/sites/admin-client.ts';
import type { StartedSites } from '../../../demo/sites/index.ts';
import { startSites } from '../../../demo/sites/index.ts';
import type { StepContext } from '../../../lambdas/lib/playbooks/contract.ts';
import { MfaRequiredError, SignInFailedError } from '../../../lambdas/lib/playbooks/errors.ts';
import type { FormSignInApplication } from '../../../lambdas/lib/playbooks/form-sign-in.ts';
import { signInStep } from '../../../lambdas/lib/playbooks/sign-in-step.ts';
import {
  billing as billingApplication,
  crm as crmApplication,
  shop as shopApplication,
} from '../../../playbooks/demo-sites.ts';
import { contextFor, launchChromium, newJob } from './harness.ts';

let browser: Browser;
let sites: StartedSites;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  sites = await startSites();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await sites?.stop();
});

beforeEach(async () => {
  context = await browser.newContext();
  page = await context.newPage();
});

afterEach(async () => {
  await context.close();
});

const APPS: Array<[DemoSiteName, FormSignInApplication]> = [
  ['shop', shopApplication],
  ['crm', crmApplication],
  ['billing', billingApplication],
];

function ctxFor(app: DemoSiteName, username: string): StepContext {
  const job = newJob<Record<string, unknown>>(sites, {}, { [app]: username });
  return contextFor(job, signInStep(`${app}-sign-in`, app, shopApplication));
}

describe('Applications: demo sites', () => {
  it.each(APPS)('%s: the TOTP account signs in by itself', async (app, application) => {
    const ctx = ctxFor(app, 'grace@example.com');
    expect(await application.signIn(page, ctx)).toEqual({ status: 'signed_in' });
    expect(await application.isSignedOut(page)).toBe(false);
  });

  it.each(APPS)(
    '%s: the outbox account needs a person, whose code completes the sign-in',
    async (app, application) => {
      const ctx = ctxFor(app, 'alan@example.com');
      const first = await application.signIn(page, ctx);
      expect(first).toEqual({ status: 'mfa_required', detail: expect.stringContaining('•••• 0123') });
      expect(await application.isSignedOut(page)).toBe(true);
      expect(await application.submitOneTimeCode(page, ctx, '000000')).toMatchObject({
        status: 'mfa_required',
      });
      const code = await siteAdmin(ctx.apps[app]?.baseUrl ?? '', sites.adminToken).latestCode(
        'alan@example.com',
      );
      expect(await application.submitOneTimeCode(page, ctx, code ?? '')).toEqual({ status: 'signed_in' });
      expect(await application.isSignedOut(page)).toBe(false);
    },
  );

  it('the sign-in step reports signed out, and its run stops with MfaRequiredError for the outbox account', async () => {
    const step = signInStep('sign-in', 'shop', shopApplication);
    const ctx = ctxFor('shop', 'alan@example.com');
    await step.restore(page, ctx);
    expect(await step.precondition(page, ctx)).toMatchObject({ ok: false, reason: 'signed_out' });
    await expect(step.run(page, ctx)).rejects.toBeInstanceOf(MfaRequiredError);
    expect(await step.verify(page, ctx)).toBeNull();
  });

  it('a wrong password fails with SignInFailedError, which carries no credentials', async () => {
    const ctx = ctxFor('crm', 'ada@example.com');
    const wrong: StepContext = {
      ...ctx,
      credentials: { get: async () => ({ username: 'ada@example.com', password: 'not-it' }) },
    };
    const error = await crmApplication.signIn(page, wrong).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SignInFailedError);
    expect(String((error as Error).message)).toContain('Incorrect email address or password');
    expect(String((error as Error).message)).not.toContain('not-it');
  });
});
