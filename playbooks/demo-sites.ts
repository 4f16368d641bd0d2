/**
 * The demo sites (`demo/sites/`: shop, crm, billing) as the SDK's generic form sign-in
 * describes them: a password form, then per account nothing, an authenticator code (the engine
 * answers it) or a code texted to a person (the job waits for it). Not a playbook (discovery
 * looks only at `<name>/index.ts` and `<name>.playbook.yaml|json`): the demo playbooks share it.
 *
 * The selectors are the ones that survive the sites' changed layout (form identity and field
 * names); the signed-in and signed-out signs are the classic layout's test hooks, so a changed
 * layout shows up as one.
 */
import {
  clickAndWait,
  type FormSignInApplication,
  formSignIn,
  type Step,
  StepActionError,
  startsAt,
  tid,
} from 'belay/sdk';
import type { Page } from 'playwright-core';

/** The application of demo site `name` (`shop`, `crm` or `billing`). */
export function demoSite(name: 'shop' | 'crm' | 'billing'): FormSignInApplication {
  return formSignIn({
    name,
    signInPath: '/signin',
    returnParam: 'next',
    username: 'form[data-form="signin"] input[name="username"]',
    password: 'form[data-form="signin"] input[name="password"]',
    submit: 'form[data-form="signin"] [type="submit"]',
    signedIn: tid('account-name'),
    signedOut: tid('signin-link'),
    error: '[role="alert"]',
    oneTimeCode: {
      path: '/signin/code',
      field: 'form[data-form="code"] input[name="code"]',
      submit: 'form[data-form="code"] [type="submit"]',
      message: `${tid('code-hint')}, [data-method]`,
    },
  });
}

/** The demo shop: its accounts sign in with a password, an authenticator (TOTP) or a code texted to a person. */
export const shop: FormSignInApplication = demoSite('shop');
/** The demo CRM: customer records and their change log. */
export const crm: FormSignInApplication = demoSite('crm');
/** The demo billing portal: billing accounts and their activity. */
export const billing: FormSignInApplication = demoSite('billing');

/**
 * A demo site's list of records: where it is (the application, the list's path) and its search
 * field and submit, a result row and the row's link (test ids).
 */
export interface DemoRecordList {
  app: 'crm' | 'billing';
  application: FormSignInApplication;
  listPath: string;
  query: string;
  searchSubmit: string;
  row: string;
  link: string;
}

export const CRM_CUSTOMERS: DemoRecordList = {
  app: 'crm',
  application: crm,
  listPath: '/customers',
  query: 'customer-query',
  searchSubmit: 'customer-search-submit',
  row: 'customer-row',
  link: 'customer-link',
};

export const BILLING_ACCOUNTS: DemoRecordList = {
  app: 'billing',
  application: billing,
  listPath: '/accounts',
  query: 'account-query',
  searchSubmit: 'account-search-submit',
  row: 'account-row',
  link: 'account-link',
};

/** A step that starts on the list, its search field ready (restored there when elsewhere). */
export function startsAtList<I>(list: DemoRecordList): Pick<Step<I>, 'precondition' | 'restore'> {
  return startsAt<I>({
    app: list.app,
    application: list.application,
    path: list.listPath,
    ready: tid(list.query),
  });
}

/** Searches a demo site's list for an email and opens the matching record (a step's action). */
export async function openRecordByEmail(
  page: Page,
  email: string,
  list: DemoRecordList,
  stepId: string,
): Promise<void> {
  const wanted = email.toLowerCase();
  await page.locator(tid(list.query)).fill(wanted);
  await clickAndWait(page, tid(list.searchSubmit));
  const rows = page.locator(tid(list.row));
  const count = await rows.count();
  for (let i = 0; i < count; i++) {
    if ((await rows.nth(i).getAttribute('data-email'))?.toLowerCase() !== wanted) continue;
    await rows.nth(i).locator(tid(list.link)).click();
    await page.waitForLoadState('load').catch(() => undefined);
    return;
  }
  throw new StepActionError(stepId, `${list.app} has no record for the customer's email`);
}
