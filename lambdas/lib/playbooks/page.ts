/**
 * Page helpers shared by the playbooks: where the page is, whether the step can start there,
 * visible errors, and reading small values from `data-*` attributes.
 */
import type { Locator, Page } from 'playwright-core';
import type { Evidence } from '../ledger/types.ts';
import type { Application, PreconditionResult, ProbeResult, StepContext } from './contract.ts';
import { MissingApplicationError } from './errors.ts';
import { describeTarget, type Target, visibleTarget } from './target.ts';

/** How long a precondition lets the page finish loading. */
export const LOAD_TIMEOUT_MS = 10_000;
/**
 * How long a loaded page has to show the element a step starts from before the layout counts
 * as changed. The demo sites render on the server, so a loaded page already has it.
 */
export const READY_TIMEOUT_MS = 1_000;
/** How long a verify or probe waits for the element that carries its evidence. */
export const EVIDENCE_TIMEOUT_MS = 3_000;

/** The selector of a test hook: `tid('cart')` is `[data-testid="cart"]`. */
export function tid(name: string): string {
  return `[data-testid="${name}"]`;
}

/** The base URL of `app` from the step context. */
export function appBase(ctx: StepContext<unknown>, app: string): URL {
  const entry = ctx.apps[app];
  if (!entry) throw new MissingApplicationError(app);
  return new URL(entry.baseUrl);
}

/** An absolute URL of `path` in `app`. */
export function appUrl(ctx: StepContext<unknown>, app: string, path: string): string {
  return new URL(path, appBase(ctx, app)).toString();
}

/** The page's URL, or undefined for pages without one (`about:blank` still parses). */
export function pageUrl(page: Page): URL | undefined {
  try {
    return new URL(page.url());
  } catch {
    return undefined;
  }
}

/** Is the page in `app` at a path matching `path`? */
export function isAt(page: Page, ctx: StepContext<unknown>, app: string, path: RegExp): boolean {
  const url = pageUrl(page);
  return url !== undefined && url.origin === appBase(ctx, app).origin && path.test(url.pathname);
}

/**
 * Is `selector` visible now, or does it become visible within `timeoutMs`? Never throws. The
 * first look has no deadline, so a slow browser is not mistaken for a missing element.
 */
export async function visibleWithin(page: Page, selector: string, timeoutMs: number): Promise<boolean> {
  const element = page.locator(selector).first();
  if (await element.isVisible().catch(() => false)) return true;
  try {
    await element.waitFor({ state: 'visible', timeout: timeoutMs });
    return true;
  } catch {
    return false;
  }
}

/** Is an error (`role="alert"`) shown on the page? */
export async function hasVisibleError(page: Page): Promise<boolean> {
  return page
    .locator('[role="alert"]')
    .first()
    .isVisible()
    .catch(() => false);
}

/**
 * What the page's visible error says (the first item of its alert), or null when it shows
 * none: a write step's `refusal`, for applications that put their refusals in an alert.
 */
export async function visibleErrorText(page: Page): Promise<string | null> {
  if (!(await hasVisibleError(page))) return null;
  const alert = page.locator('[role="alert"]').first();
  const item = alert.locator('li').first();
  const text = (await item.count()) ? await item.textContent() : await alert.textContent();
  return text?.trim().slice(0, 300) || 'the page shows an error';
}

/** A `data-*` attribute of the first match, or undefined when the element is not there in time. */
export async function dataAttr(
  page: Page,
  selector: string,
  name: string,
  timeoutMs = EVIDENCE_TIMEOUT_MS,
): Promise<string | undefined> {
  if (!(await visibleWithin(page, selector, timeoutMs))) return undefined;
  return (
    (await page
      .locator(selector)
      .first()
      .getAttribute(`data-${name}`)
      .catch(() => null)) ?? undefined
  );
}

/** Clicks (a submit button or link) and waits for the next document to load. A failed load is left to verify. */
export async function clickAndWait(page: Page, selector: string): Promise<void> {
  await page.locator(selector).first().click();
  await page.waitForLoadState('load').catch(() => undefined);
}

/** Navigates and waits for the load; a failed navigation (site down) is left to precondition/verify. */
export async function goto(page: Page, url: string): Promise<void> {
  await page.goto(url, { waitUntil: 'load' });
}

export interface StartSpec {
  /** The application's name (key of `ctx.apps`). */
  app: string;
  application: Application;
  /** Where the step starts (path only). */
  path: RegExp;
  /** The element the step acts on first (a CSS selector or a target); missing on the right page = the layout changed. */
  ready: Target;
  /** The step needs a signed-in account (default true). */
  signedIn?: boolean;
}

/**
 * The precondition of every step: signed out (the sign-in form, or a public page showing
 * "Sign in": the application's `isSignedOut` and `showsSignedOut`), the wrong page (another
 * origin or path: restore can fix it), or the right page without the element the step starts
 * from (the layout changed: do not guess; a person looks at the page).
 *
 * @example
 * precondition: (page, ctx) =>
 *   checkStart(page, ctx, { app: 'shop', application: shop, path: /^\/cart$/, ready: tid('checkout-button') }),
 */
export async function checkStart(
  page: Page,
  ctx: StepContext<unknown>,
  spec: StartSpec,
): Promise<PreconditionResult> {
  await page.waitForLoadState('load', { timeout: LOAD_TIMEOUT_MS }).catch(() => undefined);
  const url = pageUrl(page);
  const base = appBase(ctx, spec.app);
  if (!url || url.origin !== base.origin) {
    return {
      ok: false,
      reason: 'wrong_page',
      detail: `the page is not in ${spec.app} (${url?.protocol ?? 'no url'})`,
    };
  }
  // The application's own signs, never a site's markup guessed at here.
  const appCtx = ctx as StepContext;
  if (await spec.application.isSignedOut(page, appCtx).catch(() => false)) {
    return { ok: false, reason: 'signed_out', detail: `${spec.app} shows its sign-in page` };
  }
  if (!spec.path.test(url.pathname)) {
    return {
      ok: false,
      reason: 'wrong_page',
      detail: `${spec.app} is at ${url.pathname}, the step starts at ${spec.path}`,
    };
  }
  if (
    spec.signedIn !== false &&
    (await spec.application.showsSignedOut?.(page, appCtx).catch(() => false)) === true
  ) {
    return {
      ok: false,
      reason: 'signed_out',
      detail: `${spec.app} shows "Sign in": the account is signed out`,
    };
  }
  if (!(await visibleTarget(page, spec.ready, READY_TIMEOUT_MS))) {
    return {
      ok: false,
      reason: 'layout_changed',
      detail: `${spec.app} ${url.pathname} has no ${describeTarget(spec.ready)}`,
    };
  }
  return { ok: true };
}

/** Same text, ignoring case and spaces (postcodes, codes). */
export function sameText(a: string | undefined, b: string | undefined): boolean {
  const norm = (s: string | undefined): string => (s ?? '').replace(/\s+/g, '').toUpperCase();
  return norm(a) === norm(b);
}

/**
 * What each row matching `rowSelector` whose `data-key` is `key` shows (rows `read` gives
 * nothing for are left out). Keys are compared in code, not in a selector: a key may hold any
 * printable character.
 */
export async function rowsWithKey(
  page: Page,
  rowSelector: string,
  key: string,
  read: (row: Locator) => Promise<Evidence | null>,
): Promise<Evidence[]> {
  const rows = page.locator(rowSelector);
  const found: Evidence[] = [];
  const count = await rows.count();
  for (let i = 0; i < count; i++) {
    const row = rows.nth(i);
    if ((await row.getAttribute('data-key')) !== key) continue;
    const evidence = await read(row);
    if (evidence) found.push(evidence);
  }
  return found;
}

/**
 * A probe's answer from the records found for one write: one is `done`, more than one a
 * `duplicate` (the application holds the write `count` times), none `undefined` (the caller
 * tells absent from unknown).
 *
 * @example
 * const found = countedProbe(await rowsWithKey(page, '[data-testid="order-row"]', key, readOrder), 'orders');
 * if (found) return found;
 */
export function countedProbe(records: readonly Evidence[], what: string): ProbeResult | undefined {
  const [first, ...rest] = records;
  if (!first) return undefined;
  if (rest.length === 0) return { status: 'done', evidence: first };
  return {
    status: 'duplicate',
    count: records.length,
    evidence: { ...first, recordsFound: records.length },
    detail: `the application holds ${records.length} ${what} for this one write: ${JSON.stringify(records).slice(0, 400)}`,
  };
}
