/**
 * The write guard in real Chromium against a site that de-duplicates nothing: it commits each
 * POST it receives, then closes (or resets) the connection without a byte of response, on a
 * keep-alive connection, as a real site behind a failing proxy does. Chromium then sends the
 * POST again by itself when it went out on a reused connection. The site counts the POSTs it
 * committed, so a resend is seen however the browser reports it.
 *
 * The page's own requests around the write are the hard case: one in flight hands its
 * connection back to the pool a moment later (closing only the idle connections left the write
 * to take one of them), and one the page sends as the form is submitted can open a connection
 * after the guard's flush. The demo CRM's busy pages send those.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { siteAdmin } from '../../../demo/sites/admin-client.ts';
import { startSites } from '../../../demo/sites/index.ts';
import {
  type AllowlistState,
  applyAllowlist,
  installRequestPolicy,
} from '../../../lambdas/lib/browser/allowlist.ts';
import { startWriteGuard, type WriteGuardReport } from '../../../lambdas/lib/browser/write-guard.ts';
import { closeChromiumGracefully, type LaunchedChromium, launchChromium } from '../../../local/chromium.ts';
import { guardedDroppedSave } from '../../../tools/write-guard/crm-save.ts';
import { signedInContext } from '../playbooks/harness.ts';

const FORM_PAGE = `<!doctype html><title>Order</title>
<form method="post" action="/save"><input name="item" value="book"><button id="save">Save</button></form>`;

interface Site {
  origin: string;
  host: string;
  /** POSTs committed per `item` value. */
  committed: Map<string, number>;
  drop: 'close' | 'reset';
  stop(): Promise<void>;
}

async function startSite(): Promise<Site> {
  const committed = new Map<string, number>();
  const site = { committed, drop: 'close' } as Site;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && path === '/save') {
        const item = new URLSearchParams(Buffer.concat(chunks).toString('utf8')).get('item') ?? '';
        committed.set(item, (committed.get(item) ?? 0) + 1);
        if (site.drop === 'reset') req.socket.resetAndDestroy();
        else req.socket.destroy();
        return;
      }
      // The page's own traffic: answered `ms` later, on a connection kept alive.
      const delay =
        path === '/poll' ? Number(new URL(req.url ?? '/', 'http://127.0.0.1').searchParams.get('ms')) : 0;
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'no-store' });
        res.end(path === '/form' ? FORM_PAGE : 'ok');
      }, delay);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  const port = (server.address() as AddressInfo).port;
  site.origin = `http://127.0.0.1:${port}`;
  site.host = `127.0.0.1:${port}`;
  site.stop = () =>
    new Promise<void>((ok) => {
      server.closeAllConnections();
      server.close(() => ok());
    });
  return site;
}

let launched: LaunchedChromium;
let browser: Browser;
let site: Site;
let context: BrowserContext;
let page: Page;
let state: AllowlistState;

beforeAll(async () => {
  site = await startSite();
  // As a session is reached: its own Chromium with a profile on disk, attached over CDP.
  launched = await launchChromium({ userDataDir: await mkdtemp(join(tmpdir(), 'belay-guard-')) });
  browser = await chromium.connectOverCDP(launched.wsEndpoint);
  context = browser.contexts()[0] as BrowserContext;
  state = { allowed: [], blocked: [], installed: false };
  await applyAllowlist(context, state, [site.host]);
  page = context.pages()[0] ?? (await context.newPage());
});

afterAll(async () => {
  await browser?.close();
  if (launched) {
    await closeChromiumGracefully(launched);
    await rm(launched.userDataDir, { recursive: true, force: true });
  }
  await site?.stop();
});

/**
 * Saves `item` once through the form, with `polls` of the page's own requests in flight as the
 * button is pressed; returns the guard's report and the POSTs the site committed.
 */
async function save(
  item: string,
  options: { prevent: boolean; polls: number },
): Promise<{ report: WriteGuardReport; committed: number }> {
  await page.goto(`${site.origin}/form`);
  // A first save warms a kept-alive connection, as a page's earlier requests do.
  await page.evaluate(() => fetch('/warm').then((r) => r.text()));
  await page.locator('input[name="item"]').evaluate((el, v) => {
    (el as HTMLInputElement).value = v;
  }, item);
  const guard = await startWriteGuard(browser, page, state, () => installRequestPolicy(context, state), {
    prevent: options.prevent,
    detect: true,
  });
  await page.evaluate((n) => {
    // Spread over the time the write is held, and more than the 6 connections a host gets.
    for (let i = 0; i < n; i++) void fetch(`/poll?ms=${10 * (i + 1)}`).catch(() => undefined);
  }, options.polls);
  await page.locator('#save').click();
  await page.waitForLoadState('load').catch(() => undefined);
  // The resend, when there is one, follows the drop at once.
  await new Promise((r) => setTimeout(r, 150));
  const report = await guard.finish();
  return { report, committed: site.committed.get(item) ?? 0 };
}

describe('Write guard: the browser never sends a write twice unseen', () => {
  it('without prevention the browser resends the POST by itself, and the guard sees it', {
    timeout: 60_000,
  }, async () => {
    site.drop = 'reset';
    const { report, committed } = await save('control', { prevent: false, polls: 8 });
    expect(committed).toBeGreaterThan(1);
    expect(report).toMatchObject({ prevented: false, observed: true });
    expect(report.resent).toHaveLength(1);
    expect(report.resent[0]).toMatchObject({ method: 'POST', url: `${site.origin}/save` });
  });

  it.each([['close'], ['reset']] as const)(
    'with the page quiet, each write reaches the site once (%s)',
    { timeout: 60_000 },
    async (drop) => {
      site.drop = drop;
      for (let i = 0; i < 1; i++) {
        const { report, committed } = await save(`quiet-${drop}-${i}`, { prevent: true, polls: 0 });
        expect(committed).toBe(1);
        expect(report).toMatchObject({ prevented: true, observed: true, resent: [] });
        // The NetLog can count a request twice (a failed navigation's own entries); never none.
        expect(report.unsafeRequests).toBeGreaterThanOrEqual(1);
      }
    },
  );

  it('opens its helper tab while the step begins, never taking a tab the page opens at that moment for it', {
    timeout: 60_000,
  }, async () => {
    site.drop = 'close';
    await page.goto(`${site.origin}/form`);
    await page.evaluate(() => fetch('/warm').then((r) => r.text()));
    await page.locator('input[name="item"]').evaluate((el) => {
      (el as HTMLInputElement).value = 'popup';
    });
    const popups: Page[] = [];
    const onPage = (p: Page): void => void popups.push(p);
    context.on('page', onPage);
    // The page opens tabs of its own as the guard starts (one a few ms apart), and saves at once.
    const opening = Array.from({ length: 4 }, (_, i) =>
      page.evaluate(
        (n) =>
          new Promise<void>((ok) =>
            setTimeout(() => ok(void window.open(`/poll?tab=${n}`, '_blank')), n * 5),
          ),
        i,
      ),
    );
    const guard = await startWriteGuard(browser, page, state, () => installRequestPolicy(context, state), {
      prevent: true,
      detect: true,
    });
    await Promise.all(opening);
    await page.locator('#save').click();
    await page.waitForLoadState('load').catch(() => undefined);
    const report = await guard.finish();
    context.off('page', onPage);
    expect(site.committed.get('popup')).toBe(1);
    expect(report).toMatchObject({ prevented: true, observed: true, resent: [] });
    // The helper is gone; the page's own tabs are all there.
    const own = popups.filter((p) => !p.url().startsWith('chrome://'));
    expect(own.length).toBeGreaterThan(0);
    expect(own.filter((p) => p.isClosed())).toEqual([]);
    expect(context.pages().filter((p) => p.url().startsWith('chrome://'))).toEqual([]);
    await Promise.all(own.map((p) => p.close()));
  });

  it('with the page’s own requests in flight as it saves, each write still reaches the site once', {
    timeout: 120_000,
  }, async () => {
    for (let i = 0; i < 3; i++) {
      site.drop = i % 2 === 0 ? 'close' : 'reset';
      const { report, committed } = await save(`busy-${site.drop}-${i}`, { prevent: true, polls: 8 });
      expect(committed, `save ${i}`).toBe(1);
      expect(report).toMatchObject({ prevented: true, resent: [] });
    }
  });

  it('on the demo CRM with busy pages (requests of their own as a form is submitted), each save reaches it once', {
    timeout: 180_000,
  }, async () => {
    const sites = await startSites({ dedupe: false });
    try {
      const crm = siteAdmin(sites.crm.baseUrl, sites.adminToken);
      await crm.setFaults({ busyPages: true });
      await signedInContext(context, sites.crm.baseUrl, 'crm', 'ada@example.com');
      state.allowed = [site.host, new URL(sites.crm.baseUrl).host];
      for (let i = 0; i < 4; i++) {
        const { report, committed } = await guardedDroppedSave(
          { browser, context, page, state, crm, crmBaseUrl: sites.crm.baseUrl },
          {
            key: `busy-crm-${i}`,
            line1: `${i} Busy Street`,
            drop: i % 2 === 0 ? 'close' : 'reset',
            prevent: true,
          },
        );
        expect(committed, `save ${i}`).toBe(1);
        expect(report).toMatchObject({ prevented: true, resent: [] });
      }
    } finally {
      state.allowed = [site.host];
      await sites.stop();
    }
  });
});
