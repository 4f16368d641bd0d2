/** What the console's browser tests share: a real Chromium (playwright-core) and signing in as a person would. */
import AxeBuilder from '@axe-core/playwright';
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  chromium,
  type Page,
} from 'playwright-core';
import { DEFAULT_CHROMIUM_PATH, QUIET_CHROMIUM_FLAGS } from '../../../local/chromium.ts';

/** Debian's Chromium, quiet and offline, as the local stack launches it (local/chromium.ts). */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: DEFAULT_CHROMIUM_PATH, args: [...QUIET_CHROMIUM_FLAGS] });
}

/** A new browser context signed in to the console at `apiUrl` with `key`, through its sign-in form. */
export async function signedIn(
  browser: Browser,
  apiUrl: string,
  key: string,
  options: BrowserContextOptions = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  await page.goto(`${apiUrl}/console`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/console\/inbox$/);
  return { context, page };
}

/** Serious or critical accessibility violations on the page (axe-core's WCAG 2.1 A/AA rules). */
export async function seriousViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'])
    .analyze();
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** Polls until `check` returns something truthy (a page that refreshes by itself). */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs = 120_000,
  what = 'the condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}
