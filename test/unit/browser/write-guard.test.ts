/**
 * The write guard's start and report when a part of it is off (`BELAY_WRITE_GUARD`), against
 * a scripted browser: a part that is off costs the write step no round trip to the browser.
 */
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it, vi } from 'vitest';
import { startWriteGuard } from '../../../lambdas/lib/browser/write-guard.ts';

function scripted() {
  const context = { newPage: vi.fn(async () => Promise.reject(new Error('no tab'))) };
  const page = { context: () => context, bringToFront: vi.fn(async () => undefined) };
  const browser = { newBrowserCDPSession: vi.fn(async () => Promise.reject(new Error('no CDP'))) };
  return { context, page, browser };
}

describe('Function: startWriteGuard', () => {
  it('touches neither the page nor the browser when both parts are off, and reports neither ran', async () => {
    const { context, page, browser } = scripted();
    const installHook = vi.fn(async () => undefined);
    const hook = {};
    const guard = await startWriteGuard(
      browser as unknown as Browser,
      page as unknown as Page,
      hook,
      installHook,
      { prevent: false, detect: false },
    );
    expect(await guard.finish()).toEqual({
      prevented: false,
      observed: false,
      unsafeRequests: 0,
      resent: [],
    });
    expect(context.newPage).not.toHaveBeenCalled();
    expect(browser.newBrowserCDPSession).not.toHaveBeenCalled();
    expect(installHook).not.toHaveBeenCalled();
    expect(page.bringToFront).not.toHaveBeenCalled();
  });

  it('brings the step’s page back to the front after trying to open the helper tab', async () => {
    const { context, page, browser } = scripted();
    const guard = await startWriteGuard(
      browser as unknown as Browser,
      page as unknown as Page,
      {},
      async () => undefined,
      { prevent: true, detect: false },
    );
    expect(context.newPage).toHaveBeenCalledTimes(1);
    expect(page.bringToFront).toHaveBeenCalledTimes(1);
    // The helper tab could not be opened: nothing was prevented, and the report says so.
    expect(await guard.finish()).toMatchObject({ prevented: false, observed: false });
  });
});
