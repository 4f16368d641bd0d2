/**
 * `npm run stress:write-guard`: saves a record on the demo CRM again and again with its answer
 * dropped without a byte, on a site that de-duplicates nothing, and counts the saves that
 * reached the CRM more than once. The browser is reached as a session is: its own Chromium with
 * a profile on disk, attached over CDP, the write guard started as RunStep starts it.
 *
 *   npm run stress:write-guard -- [--saves 30] [--drop close|reset] [--busy] [--no-prevent]
 *
 * `--busy` turns on the CRM's busy pages (requests of the page's own as the form is submitted).
 * `--no-prevent` runs the guard with detection only: the control, where the browser's resends
 * reach the CRM. Prints one line per save and a summary; exits 1 when a save was duplicated.
 * Everything it starts (the sites, Chromium) it stops, by process id.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { demoCredentials } from '../../demo/accounts.ts';
import { siteAdmin } from '../../demo/sites/admin-client.ts';
import { startSites } from '../../demo/sites/index.ts';
import { type AllowlistState, applyAllowlist } from '../../lambdas/lib/browser/allowlist.ts';
import { closeChromiumGracefully, launchChromium } from '../../local/chromium.ts';
import { guardedDroppedSave } from './crm-save.ts';

const USAGE =
  'usage: npm run stress:write-guard -- [--saves N (1-500)] [--drop close|reset] [--busy] [--no-prevent] [--help]';

/** `--help`: the usage goes to standard output and nothing runs. */
class HelpRequested extends Error {}

function options(argv: string[]): {
  saves: number;
  drop: 'close' | 'reset';
  busy: boolean;
  prevent: boolean;
} {
  const { values } = parseArgs({
    args: argv,
    options: {
      saves: { type: 'string', default: '30' },
      drop: { type: 'string', default: 'close' },
      busy: { type: 'boolean', default: false },
      'no-prevent': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) throw new HelpRequested();
  const saves = Number(values.saves);
  if (!Number.isInteger(saves) || saves < 1 || saves > 500)
    throw new Error(`--saves must be an integer from 1 to 500\n${USAGE}`);
  if (values.drop !== 'close' && values.drop !== 'reset')
    throw new Error(`--drop must be close or reset\n${USAGE}`);
  return { saves, drop: values.drop, busy: values.busy, prevent: !values['no-prevent'] };
}

async function main(): Promise<number> {
  let opts: ReturnType<typeof options>;
  try {
    opts = options(process.argv.slice(2));
  } catch (err) {
    if (err instanceof HelpRequested) {
      console.log(USAGE);
      return 0;
    }
    // parseArgs's own errors (an unknown option, a missing value) do not name the usage.
    const fromParser = String((err as { code?: unknown }).code ?? '').startsWith('ERR_PARSE_ARGS');
    console.error(`${(err as Error).message}${fromParser ? `\n${USAGE}` : ''}`);
    return 2;
  }
  const sites = await startSites({ dedupe: false });
  const profile = await mkdtemp(join(tmpdir(), 'belay-guard-stress-'));
  const launched = await launchChromium({ userDataDir: profile }).catch(async (err: unknown) => {
    await sites.stop();
    throw err;
  });
  let duplicated = 0;
  let seen = 0;
  try {
    const crm = siteAdmin(sites.crm.baseUrl, sites.adminToken);
    await crm.setFaults({ busyPages: opts.busy });
    const browser = await chromium.connectOverCDP(launched.wsEndpoint);
    const context = browser.contexts()[0];
    if (!context) throw new Error('the browser has no default context');
    const page = context.pages()[0] ?? (await context.newPage());
    const ada = demoCredentials('crm', 'ada@example.com');
    await page.goto(`${sites.crm.baseUrl}/signin`);
    await page.locator('input[name="username"]').fill(ada.username);
    await page.locator('input[name="password"]').fill(ada.password);
    await page.locator('[data-testid="signin-submit"]').click();
    await page.waitForLoadState('load');
    const state: AllowlistState = { allowed: [], blocked: [], installed: false };
    await applyAllowlist(context, state, [new URL(sites.crm.baseUrl).host]);
    console.log(
      `${opts.saves} saves, answer dropped (${opts.drop}), busy pages ${opts.busy ? 'on' : 'off'}, guard ${opts.prevent ? 'prevents and detects' : 'detects only'}`,
    );
    for (let i = 0; i < opts.saves; i++) {
      const { report, committed } = await guardedDroppedSave(
        { browser, context, page, state, crm, crmBaseUrl: sites.crm.baseUrl },
        {
          key: `stress-${Date.now()}-${i}`,
          line1: `${i} Stress Street`,
          drop: opts.drop,
          prevent: opts.prevent,
        },
      );
      if (committed > 1) duplicated++;
      if (report.resent.length > 0) seen++;
      console.log(
        `save ${i + 1}: ${committed} committed; guard prevented ${report.prevented}, resend seen ${report.resent.length > 0}`,
      );
    }
    await browser.close();
  } finally {
    await closeChromiumGracefully(launched);
    await rm(profile, { recursive: true, force: true });
    await sites.stop();
  }
  console.log(
    `${duplicated} of ${opts.saves} saves reached the CRM more than once; the guard saw a resend in ${seen}`,
  );
  return duplicated > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
