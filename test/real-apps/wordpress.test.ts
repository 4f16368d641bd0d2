/**
 * WordPress, a real application nobody here wrote, run by the harness (Debian's WordPress on a
 * private MariaDB and PHP's built-in server) and driven by real Chromium: the dashboard's Quick
 * Draft saves in the background (no page load) while the dashboard sends POSTs of its own, and
 * the database holds exactly one new draft. Needs `bash scripts/install-real-apps.sh`.
 */

import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CHROMIUM_PATH, isProcessAlive, QUIET_CHROMIUM_FLAGS } from '../../local/chromium.ts';
import { accepts } from '../../tools/real-apps/processes.ts';
import { type RunningWordPress, startWordPress } from '../../tools/real-apps/wordpress.ts';
import {
  WORDPRESS_FORM_SIGN_IN,
  wordpressApplications,
} from '../../tools/real-apps/wordpress-application.ts';

/** A POST the browser sent: when, where, and its form fields. */
interface SentPost {
  at: number;
  path: string;
  fields: URLSearchParams;
}

/** Does the element show within 10 s? (vitest's expect has no Playwright matchers.) */
const shows = (locator: Locator): Promise<boolean> =>
  locator
    .first()
    .waitFor({ state: 'visible', timeout: 10_000 })
    .then(
      () => true,
      () => false,
    );

const css = (target: unknown): string => {
  if (typeof target !== 'string') throw new TypeError('WORDPRESS_FORM_SIGN_IN targets are CSS selectors');
  return target;
};

/** GET `path` with this `Host` header (fetch will not send another host's name). */
function getWithHost(base: string, path: string, host: string): Promise<string> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, headers: { host }, timeout: 10_000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolve(body));
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer in 10 s')));
    req.on('error', reject);
    req.end();
  });
}

let wp: RunningWordPress;
let browser: Browser;
let page: Page;
const sent: SentPost[] = [];
const heartbeats = (): SentPost[] =>
  sent.filter((p) => p.path === '/wp-admin/admin-ajax.php' && p.fields.get('action') === 'heartbeat');
const quickDraftSaves = (): SentPost[] =>
  sent.filter((p) => p.path === '/wp-admin/post.php' && p.fields.get('action') === 'post-quickdraft-save');

beforeAll(async () => {
  wp = await startWordPress();
  browser = await chromium.launch({ executablePath: DEFAULT_CHROMIUM_PATH, args: [...QUIET_CHROMIUM_FLAGS] });
  page = await browser.newPage();
  page.on('request', (r) => {
    if (r.method() !== 'POST') return;
    sent.push({
      at: Date.now(),
      path: new URL(r.url()).pathname,
      fields: new URLSearchParams(r.postData() ?? ''),
    });
  });
});

afterAll(async () => {
  await browser?.close();
  await wp?.stop();
});

describe('Real application: WordPress', () => {
  it('serves on loopback and is given to the local stack as an application', () => {
    expect(wp.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(wordpressApplications(wp)).toEqual({ wordpress: { baseUrl: wp.url } });
    expect(() => wordpressApplications(wp, 'Not A Name')).toThrow(/not a valid application name/);
  });

  it("names itself by a loopback proxy's address, and by its own for any other Host", async () => {
    const formAction = async (host: string): Promise<string | undefined> =>
      /<form name="loginform" id="loginform" action="([^"]+)"/.exec(
        await getWithHost(wp.url, '/wp-login.php', host),
      )?.[1];
    expect(await formAction('127.0.0.1:1')).toBe('http://127.0.0.1:1/wp-login.php');
    expect(await formAction('wordpress.example')).toBe(`${wp.url}/wp-login.php`);
    expect(await formAction(`localhost:${new URL(wp.url).port}`)).toBe(`${wp.url}/wp-login.php`);
  });

  it('refuses a wrong password on wp-login.php, saying so where the form sign-in looks', async () => {
    await page.goto(`${wp.url}${WORDPRESS_FORM_SIGN_IN.signInPath}`);
    await page.fill(css(WORDPRESS_FORM_SIGN_IN.username), wp.admin.username);
    await page.fill(css(WORDPRESS_FORM_SIGN_IN.password), `${wp.admin.password}-wrong`);
    await page.click(css(WORDPRESS_FORM_SIGN_IN.submit));
    expect(await shows(page.locator(css(WORDPRESS_FORM_SIGN_IN.error ?? '')))).toBe(true);
    expect(new URL(page.url()).pathname).toBe('/wp-login.php');
  });

  it('signs the generated administrator in and shows the dashboard', async () => {
    // A fresh form: after a refused sign-in WordPress empties the password field 200 ms after the
    // page loads (wp_attempt_focus), which would undo a fill made in that window.
    await page.goto(`${wp.url}${WORDPRESS_FORM_SIGN_IN.signInPath}`);
    await page.fill(css(WORDPRESS_FORM_SIGN_IN.username), wp.admin.username);
    await page.fill(css(WORDPRESS_FORM_SIGN_IN.password), wp.admin.password);
    await Promise.all([page.waitForURL(/\/wp-admin\/$/), page.click(css(WORDPRESS_FORM_SIGN_IN.submit))]);
    expect(await shows(page.locator(css(WORDPRESS_FORM_SIGN_IN.signedIn)))).toBe(true);
    expect(await shows(page.locator('#quick-press'))).toBe(true);
  });

  it('sends Heartbeat POSTs about once a second from the dashboard', async () => {
    const since = Date.now();
    const deadline = since + 8_000;
    while (heartbeats().filter((p) => p.at >= since).length < 4 && Date.now() < deadline)
      await page.waitForTimeout(100);
    const beats = heartbeats().filter((p) => p.at >= since);
    expect(beats.length).toBeGreaterThanOrEqual(4);
    // Four beats within a few seconds: three periods of about a second each.
    expect((beats[3] as SentPost).at - (beats[0] as SentPost).at).toBeLessThan(5_000);
    const handled = (await wp.handledRequests()).filter((r) => r.action === 'heartbeat');
    expect(handled.length).toBeGreaterThanOrEqual(3);
    expect(handled.every((r) => r.path === '/wp-admin/admin-ajax.php' && r.status === 200)).toBe(true);
  });

  it('saves a Quick Draft in the background and stores exactly one draft', async () => {
    const marker = randomBytes(6).toString('hex');
    const title = `Belay quick draft ${marker}`;
    const content = `Written by the real-apps test (ref ${marker}).`;
    const draftsBefore = await wp.posts.count({ status: 'draft' });
    expect(await wp.posts.count({ title })).toBe(0);
    const postLinesBefore = (await wp.serverLog()).filter(
      (l) => l.method === 'POST' && l.url === '/wp-admin/post.php',
    ).length;
    let navigations = 0;
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations++;
    });

    await page.fill('#quick-press #title', title);
    await page.fill('#quick-press #content', content);
    const saved = page.waitForResponse(
      (r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/wp-admin/post.php',
    );
    await page.click('#quick-press #save-post');
    expect((await saved).status()).toBe(200);
    const link = page.locator('#dashboard_quick_press .drafts a', { hasText: title });
    expect(await shows(link)).toBe(true);
    const id = Number(/[?&]post=(\d+)&action=edit$/.exec((await link.getAttribute('href')) ?? '')?.[1]);

    expect(navigations).toBe(0);
    expect(new URL(page.url()).pathname).toBe('/wp-admin/');
    expect(quickDraftSaves()).toHaveLength(1);
    // Straight from MariaDB: one new draft, the one the dashboard links to.
    expect(await wp.posts.count({ status: 'draft' })).toBe(draftsBefore + 1);
    expect(await wp.posts.list({ title })).toEqual([
      { id, type: 'post', status: 'draft', title, authorId: expect.any(Number) },
    ]);
    expect(await wp.posts.count({ contentContains: `ref ${marker}` })).toBe(1);
    // WordPress handled one Quick Draft save, told apart from the Heartbeats by its action field ...
    const handled = (await wp.handledRequests()).filter((r) => r.action === 'post-quickdraft-save');
    expect(handled).toEqual([
      expect.objectContaining({ method: 'POST', path: '/wp-admin/post.php', status: 200 }),
    ]);
    // ... which PHP's server log cannot do (no bodies): it shows one more POST to post.php, nothing more.
    const deadline = Date.now() + 2_000;
    let postLines = postLinesBefore;
    while (postLines === postLinesBefore && Date.now() < deadline) {
      postLines = (await wp.serverLog()).filter(
        (l) => l.method === 'POST' && l.url === '/wp-admin/post.php',
      ).length;
      if (postLines === postLinesBefore) await page.waitForTimeout(100);
    }
    expect(postLines).toBe(postLinesBefore + 1);
  });

  it('stops every process it started, by PID, and removes its folder', async () => {
    const pids = wp.pids();
    // mariadbd, PHP's server and its workers.
    expect(pids.length).toBeGreaterThanOrEqual(3);
    expect(pids.every(isProcessAlive)).toBe(true);
    const port = Number(new URL(wp.url).port);
    await browser.close();
    await wp.stop();
    expect(pids.filter(isProcessAlive)).toEqual([]);
    expect(existsSync(wp.dir)).toBe(false);
    expect(await accepts(port)).toBe(false);
  });
});
