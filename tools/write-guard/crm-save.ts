/**
 * One save of a demo CRM record with its answer dropped without a byte, under the write guard
 * as RunStep starts it: what `npm run stress:write-guard` repeats and the browser test checks.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { SiteAdmin } from '../../demo/sites/admin-client.ts';
import { type AllowlistState, installRequestPolicy } from '../../lambdas/lib/browser/allowlist.ts';
import { startWriteGuard, type WriteGuardReport } from '../../lambdas/lib/browser/write-guard.ts';

export interface GuardedSave {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** The connection's request policy, with the CRM allowed. */
  state: AllowlistState;
  crm: SiteAdmin;
  crmBaseUrl: string;
}

const tid = (id: string): string => `[data-testid="${id}"]`;

/**
 * Opens C-1001's edit form, sets `line1` and the idempotency key, makes the CRM drop the next
 * write's answer (`drop`), saves under the guard and returns its report and the saves the CRM
 * committed under `key`.
 */
export async function guardedDroppedSave(
  s: GuardedSave,
  options: { key: string; line1: string; drop: 'close' | 'reset'; prevent: boolean },
): Promise<{ report: WriteGuardReport; committed: number }> {
  const { page } = s;
  await page.goto(`${s.crmBaseUrl}/customers/C-1001`);
  await page.locator(tid('edit-record')).click();
  await page.waitForLoadState('load');
  await page.locator(tid('line1')).fill(options.line1);
  await page.locator(`${tid('record-form')} input[name="idempotencyKey"]`).evaluate((el, v) => {
    (el as HTMLInputElement).value = v;
  }, options.key);
  await s.crm.setFaults({ dropNextWriteResponse: true, dropMode: options.drop });
  const guard = await startWriteGuard(
    s.browser,
    page,
    s.state,
    () => installRequestPolicy(s.context, s.state),
    {
      prevent: options.prevent,
      detect: true,
    },
  );
  await page.locator(tid('save-record')).click();
  await page.waitForLoadState('load').catch(() => undefined);
  // The resend, when there is one, follows the drop at once.
  await new Promise((r) => setTimeout(r, 150));
  const report = await guard.finish();
  return { report, committed: (await s.crm.writes()).countsByKey[options.key] ?? 0 };
}
