import type { Page, Request, Response } from 'playwright-core';
import { UNSAFE_METHODS } from '../commits.ts';
import { PageNotSettledError, RequestRefusedError } from './errors.ts';

/**
 * One action, one page: after an agent's action, the next observation is of the page the action
 * led to, never of the page it left. Playwright's `click` does not wait for the navigation it
 * starts, and `waitForLoadState('load')` then returns at once for the old page while the form's
 * POST is still on its way: a model shown that page (the form still there) may submit it again.
 * So an action is followed by a wait, bounded, until what it set off has settled:
 *
 * - every unsafe request (POST, PUT, PATCH, DELETE) the page sent has its answer (or failed);
 * - every navigation of the page's main frame has its answer, and the document it brought has
 *   committed (a redirect is followed to its end) and loaded;
 * - nothing new started for a short quiet time (a request sent a moment after the click counts).
 *
 * A request the engine refused (the write guard's second commit, a domain off the job's list)
 * ends the step (`RequestRefusedError`); no settling within the bound ends it too
 * (`PageNotSettledError`): the action's effect is unknown, and a write's probe decides.
 */

/** The longest an action's effects may take to settle: a slow save (5 s and more), the write guard's hold, a redirect, the load. */
export const SETTLE_TIMEOUT_MS = 30_000;
/** Nothing new for this long after the last request ended (or after the action) means settled. */
export const QUIET_MS = 300;
const POLL_MS = 50;

/** Statuses a navigation is redirected with: another request follows, no document commits. */
const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
/** Answers to a navigation that bring no document (the page stays). */
const NO_DOCUMENT: ReadonlySet<number> = new Set([204, 205]);

const describeRequest = (r: Request): string => {
  try {
    const u = new URL(r.url());
    return `${r.method()} ${u.origin}${u.pathname}`;
  } catch {
    return r.method();
  }
};

/**
 * Runs `act` (one executed action) and resolves once the page has settled (see the module's
 * comment), or throws. `timeoutMs` bounds the wait after `act`.
 */
export async function settleAfter(
  page: Page,
  act: () => Promise<void>,
  timeoutMs: number = SETTLE_TIMEOUT_MS,
): Promise<void> {
  const pending = new Set<Request>();
  const refused: Request[] = [];
  let lastActivity = Date.now();
  /** Main-frame navigations answered with a document, and main-frame commits seen. */
  let documents = 0;
  let commits = 0;
  const main = (r: Request): boolean => {
    try {
      return r.isNavigationRequest() && r.frame() === page.mainFrame();
    } catch {
      return false;
    }
  };
  const onRequest = (r: Request): void => {
    // A redirect's next hop ends the request it came from (whatever events that one still gets).
    const from = r.redirectedFrom();
    if (from) pending.delete(from);
    if (!UNSAFE_METHODS.has(r.method()) && !main(r)) return;
    pending.add(r);
    lastActivity = Date.now();
  };
  const onResponse = (response: Response): void => {
    const r = response.request();
    if (!pending.has(r) || !main(r)) return;
    const status = response.status();
    if (!REDIRECTS.has(status) && !NO_DOCUMENT.has(status)) documents++;
  };
  const onEnded = (r: Request): void => {
    if (!pending.delete(r)) return;
    lastActivity = Date.now();
  };
  const onFailed = (r: Request): void => {
    if (!pending.has(r)) return;
    onEnded(r);
    if (UNSAFE_METHODS.has(r.method()) && /ERR_BLOCKED_BY_CLIENT/.test(r.failure()?.errorText ?? ''))
      refused.push(r);
  };
  const onNavigated = (frame: unknown): void => {
    if (frame !== page.mainFrame()) return;
    commits++;
    lastActivity = Date.now();
  };
  page.on('request', onRequest);
  page.on('response', onResponse);
  page.on('requestfinished', onEnded);
  page.on('requestfailed', onFailed);
  page.on('framenavigated', onNavigated);
  try {
    await act();
    lastActivity = Date.now();
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (refused.length > 0) break;
      const quiet = Date.now() - lastActivity >= QUIET_MS;
      if (pending.size === 0 && commits >= documents && quiet) break;
      if (Date.now() >= deadline) {
        const waiting = [...pending].map(describeRequest);
        throw new PageNotSettledError(
          `the page did not settle within ${Math.round(timeoutMs / 1000)} s after the action${
            waiting.length > 0 ? `: still waiting for ${waiting.join(', ')}` : ': its new page did not commit'
          }`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    if (refused.length > 0) {
      throw new RequestRefusedError(
        `the engine refused ${refused.map(describeRequest).join(', ')}: the step commits once (or the address is off the job's domains)`,
      );
    }
    try {
      await page.waitForLoadState('load', { timeout: Math.max(1_000, deadline - Date.now()) });
    } catch (err) {
      throw new PageNotSettledError('the page the action led to did not finish loading', { cause: err });
    }
  } finally {
    page.off('request', onRequest);
    page.off('response', onResponse);
    page.off('requestfinished', onEnded);
    page.off('requestfailed', onFailed);
    page.off('framenavigated', onNavigated);
  }
}
