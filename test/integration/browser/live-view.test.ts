/**
 * The local service's interactive live view in real Chromium: a person's browser opens the
 * link Belay signs, sees the session's page streamed as screencast frames, clicks and types
 * into it, and the text arrives in the session's own page (read back through the engine's CDP
 * connection). A token of another tenant, another session, an expired one, a forged one or none
 * is refused on the page and on the WebSocket upgrade.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { cachedSessionIds, createBrowserAdapter } from '../../../lambdas/lib/browser/adapter.ts';
import { signLiveViewToken } from '../../../lambdas/lib/browser/live-view-token.ts';
import type { BrowserAdapter } from '../../../lambdas/lib/browser/types.ts';
import { type AnchorService, startAnchorService } from '../../../local/anchor/service.ts';
import { waitForExit } from '../../../local/chromium.ts';
import { eventually, launchBrowser } from '../console/support.ts';

const FORM = '<!doctype html><title>form</title><label>Note <input id="note"></label>';

/** What the upgrade of the live view's WebSocket answers: 101 (open) or the refusal's status. */
function upgradeStatus(url: string): Promise<number> {
  return new Promise((ok) => {
    const ws = new WebSocket(url);
    ws.once('open', () => {
      ws.close();
      ok(101);
    });
    ws.once('unexpected-response', (_req, res) => {
      ok(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once('error', () => ok(0));
  });
}

describe('Local Anchor service: the interactive live view', () => {
  let dataDir: string;
  let anchor: AnchorService;
  let adapter: BrowserAdapter;
  let person: Browser;
  const sessions: string[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'belay-live-view-'));
    anchor = await startAnchorService({ dataDir });
    adapter = createBrowserAdapter({ apiKey: anchor.apiKey, baseUrl: anchor.baseUrl, callTimeoutMs: 20_000 });
    person = await launchBrowser();
  }, 60_000);

  afterAll(async () => {
    await person?.close();
    for (const id of cachedSessionIds()) await adapter.detach(id);
    const pids = anchor ? anchor.browserPids() : [];
    await anchor?.stop({ endSessions: true });
    for (const pid of pids) expect(await waitForExit(pid, 5_000), `chromium ${pid} still alive`).toBe(true);
    await rm(dataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  }, 60_000);

  it('streams the page and types the person’s keys into it; refuses foreign, expired and forged tokens', async () => {
    const opened = await adapter.openSession({
      idleTimeoutMinutes: 10,
      maxDurationMinutes: 20,
      tags: { tenantId: 'acme', jobId: 'live-1' },
    });
    const other = await adapter.openSession({
      idleTimeoutMinutes: 10,
      maxDurationMinutes: 20,
      tags: { tenantId: 'globex', jobId: 'live-2' },
    });
    sessions.push(opened.sessionId, other.sessionId);
    const { page } = await adapter.attach(opened.sessionId, { allowedDomains: [] });
    await page.setContent(FORM);

    const link = adapter.liveViewLink(opened, 'acme', { interactive: true }) as string;
    expect(link).toMatch(new RegExp(`^${anchor.baseUrl}/_local/sessions/${opened.sessionId}/live\\?token=`));

    const view = await (await person.newContext()).newPage();
    const answer = await view.goto(link);
    expect(answer?.status()).toBe(200);
    expect(answer?.headers()['content-security-policy']).toContain("script-src 'self'");
    // Frames arrive: the image shows the session's page at its size.
    await eventually(
      () => view.evaluate(() => Number(document.body.dataset.frames ?? 0) > 0),
      20_000,
      'a frame',
    );
    const screen = view.locator('#screen');
    const box = await page.locator('#note').boundingBox();
    if (!box) throw new Error('the form has no input box');
    const shown = await screen.boundingBox();
    const size = await page.evaluate(() => ({ w: window.innerWidth, h: window.innerHeight }));
    if (!shown) throw new Error('no live view image');
    // Click where the input is in the streamed picture, then type.
    await view.mouse.click(
      shown.x + ((box.x + box.width / 2) * shown.width) / size.w,
      shown.y + ((box.y + box.height / 2) * shown.height) / size.h,
    );
    await view.keyboard.type('hello from a person');
    await eventually(
      async () => (await page.locator('#note').inputValue()) === 'hello from a person',
      10_000,
      'the typed text in the session page',
    );
    await view.keyboard.press('Backspace');
    await eventually(
      async () => (await page.locator('#note').inputValue()) === 'hello from a perso',
      10_000,
      'Backspace in the session page',
    );

    // A watch-only link shows the frames; nothing typed there reaches the browser.
    const watchLink = adapter.liveViewLink(opened, 'acme', { interactive: false }) as string;
    const watcher = await (await person.newContext()).newPage();
    expect((await watcher.goto(watchLink))?.status()).toBe(200);
    await eventually(
      () => watcher.evaluate(() => Number(document.body.dataset.frames ?? 0) > 0),
      20_000,
      'a frame in the watch-only view',
    );
    const watched = await watcher.locator('#screen').boundingBox();
    if (!watched) throw new Error('no watch-only image');
    await watcher.mouse.click(
      watched.x + ((box.x + box.width / 2) * watched.width) / size.w,
      watched.y + ((box.y + box.height / 2) * watched.height) / size.h,
    );
    await watcher.keyboard.type(' and a watcher');
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await page.locator('#note').inputValue()).toBe('hello from a perso');

    // The takeover ends: every link given out so far stops working; one signed after it works.
    await adapter.revokeLiveViews(opened);
    expect((await fetch(link)).status).toBe(403);
    expect((await fetch(watchLink)).status).toBe(403);
    const fresh = adapter.liveViewLink(opened, 'acme', { interactive: true }) as string;
    expect((await fetch(fresh)).status).toBe(200);

    // Refused: no token, another tenant's, another session's, an expired one, a forged one.
    const base = `${anchor.baseUrl}/_local/sessions/${opened.sessionId}/live`;
    const ws = `${base.replace('http://', 'ws://')}/ws`;
    const future = Math.floor(Date.now() / 1000) + 600;
    const tokens = {
      none: '',
      otherTenant: signLiveViewToken(anchor.apiKey, {
        sessionId: opened.sessionId,
        tenantId: 'globex',
        expiresAt: future,
        interactive: true,
        issuedAt: Date.now(),
      }),
      otherSession:
        new URL(adapter.liveViewLink(other, 'globex', { interactive: true }) as string).searchParams.get(
          'token',
        ) ?? '',
      expired: signLiveViewToken(anchor.apiKey, {
        sessionId: opened.sessionId,
        tenantId: 'acme',
        expiresAt: Math.floor(Date.now() / 1000) - 1,
        interactive: true,
        issuedAt: Date.now(),
      }),
      forged: signLiveViewToken('not-the-key', {
        sessionId: opened.sessionId,
        tenantId: 'acme',
        expiresAt: future,
        interactive: true,
        issuedAt: Date.now(),
      }),
    };
    for (const [what, token] of Object.entries(tokens)) {
      const res = await fetch(`${base}?token=${encodeURIComponent(token)}`);
      expect(res.status, `page with ${what}`).toBe(403);
      expect(await res.text()).not.toContain('<img');
      expect(await upgradeStatus(`${ws}?token=${encodeURIComponent(token)}`), `socket with ${what}`).toBe(
        403,
      );
    }
    // The good token opens the socket as well (the refusals above are not a socket that never opens).
    const good = new URL(fresh).searchParams.get('token') ?? '';
    expect(await upgradeStatus(`${ws}?token=${encodeURIComponent(good)}`)).toBe(101);
  }, 120_000);
});
