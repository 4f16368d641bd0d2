import type { Locator, Page } from 'playwright-core';
import type { AgentAction, Target } from './actions.ts';
import { substituteSecrets } from './observe.ts';

/** Longest one executed action may take (a click that navigates included). */
export const ACTION_TIMEOUT_MS = 10_000;

type AriaRole = Parameters<Page['getByRole']>[0];

/** The locator of a target: its role and exact accessible name. */
export function locate(page: Page, target: Target): Locator {
  return page.getByRole(target.role as AriaRole, { name: target.name, exact: true });
}

/** Whether a recorded target still names exactly one element on the page (else it is healed). */
export async function resolvesToOne(page: Page, target: Target): Promise<boolean> {
  return (await locate(page, target).count()) === 1;
}

/**
 * Executes one page action (not `done`, `ask_person` or a refused `goto`: the step handles
 * those). Placeholders are replaced by their secret values here and nowhere else. What the
 * action sets off (a form's POST, the navigation it causes) is waited for by the caller
 * (`settleAfter`): a click returns before its navigation commits.
 */
export async function executeAction(
  page: Page,
  action: AgentAction,
  secrets: Readonly<Record<string, string>>,
): Promise<void> {
  const options = { timeout: ACTION_TIMEOUT_MS };
  switch (action.name) {
    case 'fill':
      await locate(page, action.target).fill(substituteSecrets(action.value, secrets), options);
      return;
    case 'select':
      await locate(page, action.target).selectOption(substituteSecrets(action.option, secrets), options);
      return;
    case 'check':
      await locate(page, action.target).setChecked(action.checked, options);
      return;
    case 'click':
      await locate(page, action.target).click(options);
      return;
    case 'press':
      await page.keyboard.press(action.key);
      return;
    case 'goto':
      await page.goto(action.url, { ...options, waitUntil: 'load' });
      return;
    default:
      return;
  }
}

/** Whether `url` is on one of the domains (a domain or any of its subdomains). */
export function onAllowedDomain(url: string, domains: readonly string[]): boolean {
  let host: string;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return false;
    host = parsed.hostname.toLowerCase();
  } catch {
    return false;
  }
  return domains.some((d) => {
    const domain = d.toLowerCase().replace(/^\*\./, '');
    return host === domain || host.endsWith(`.${domain}`);
  });
}
