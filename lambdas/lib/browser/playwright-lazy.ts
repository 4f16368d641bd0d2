/**
 * Stands in for the `playwright` package in function bundles (an esbuild alias, see
 * `lambdas/bundling.ts`). The `anchorbrowser` SDK imports `chromium` from `playwright` at its top
 * level for its own connect helpers, which Belay does not use (the browser adapter connects
 * with playwright-core itself). Bundled as is, that import would load playwright-core with
 * every function, browser or not; here `chromium.connectOverCDP` loads it on first call.
 */
import type { chromium as Chromium } from 'playwright-core';
import { loadPlaywright } from './load-playwright.ts';

type ConnectOverCDP = typeof Chromium.connectOverCDP;

export const chromium = {
  async connectOverCDP(...args: Parameters<ConnectOverCDP>): ReturnType<ConnectOverCDP> {
    return loadPlaywright().chromium.connectOverCDP(...args);
  },
};
