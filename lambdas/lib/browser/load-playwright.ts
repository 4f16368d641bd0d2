import { createRequire } from 'node:module';

type PlaywrightCore = typeof import('playwright-core');

let loaded: PlaywrightCore | undefined;

/**
 * playwright-core, loaded once per process on first use, through `require`. It is CommonJS:
 * an ESM `import()` of it (what a function bundle would emit) makes Node lex its files for
 * named exports before loading them (on an idle machine about 400 ms of wall time against
 * 335 ms for `require`; the gap grows with the load). A function that never drives a browser never
 * calls this, so neither ships nor loads playwright-core.
 */
export function loadPlaywright(): PlaywrightCore {
  loaded ??= createRequire(import.meta.url)('playwright-core') as PlaywrightCore;
  return loaded;
}
