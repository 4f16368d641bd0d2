/**
 * The built docs site (`npm run docs:build` first; `npm run test:docs` does both), opened in real
 * Chromium: the local search finds the guarantee page for "idempotency", four pages have no
 * serious accessibility violation (axe-core), `llms.txt` lists the pages, and a dead link (a page
 * or an anchor) fails the link check. The static server is this process's own, on loopback.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deadLinks } from '../../../tools/docs/check-links.ts';
import { launchBrowser, seriousViolations } from '../console/support.ts';

const dist = join(import.meta.dirname, '../../../docs/.vitepress/dist');
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.json': 'application/json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

/** The built site over HTTP on 127.0.0.1, as `vitepress preview` serves it (`/x` -> `x.html`). */
function serve(): Promise<Server> {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(
      /^(\.\.[/\\])+/,
      '',
    );
    const candidates = path.endsWith('/') ? [`${path}index.html`] : [path, `${path}.html`];
    const file = candidates.map((c) => join(dist, c)).find((c) => c.startsWith(dist) && existsSync(c));
    if (!file) {
      res.writeHead(404).end('not found');
      return;
    }
    readFile(file).then(
      (body) =>
        res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body),
      () => res.writeHead(500).end(),
    );
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

let server: Server;
let base: string;
let browser: Browser;
beforeAll(async () => {
  if (!existsSync(join(dist, 'index.html'))) throw new Error('build the site first: npm run docs:build');
  server = await serve();
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await new Promise((r) => server?.close(r));
});

describe('Docs site', () => {
  it('finds the guarantee page when searching for "idempotency"', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${base}/`);
      await page
        .getByRole('button', { name: /search/i })
        .first()
        .click();
      await page
        .getByRole('searchbox')
        .or(page.locator('input[type="search"], .search-input'))
        .first()
        .fill('idempotency');
      const results = page.locator('.VPLocalSearchBox a.result, .VPLocalSearchBox .results a');
      await results.first().waitFor({ timeout: 15_000 });
      const links = await results.evaluateAll((as) =>
        as.map((a) => (a as HTMLAnchorElement).getAttribute('href')),
      );
      expect(links.some((href) => href?.includes('/concepts/guarantee'))).toBe(true);
    } finally {
      await page.close();
    }
  }, 60_000);

  it.each(['/', '/concepts/guarantee.html', '/guides/declarative.html', '/guides/real-app.html'])(
    'has no serious accessibility violation on %s',
    async (path) => {
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        await page.goto(`${base}${path}`);
        await page.waitForLoadState('networkidle');
        expect(await seriousViolations(page)).toEqual([]);
      } finally {
        await context.close();
      }
    },
    60_000,
  );

  it('publishes llms.txt and llms-full.txt from the pages', async () => {
    const index = await (await fetch(`${base}/llms.txt`)).text();
    expect(index).toMatch(/guarantee/i);
    const full = await (await fetch(`${base}/llms-full.txt`)).text();
    expect(full).toMatch(/idempotency key/i);
  });

  it('the link check finds a missing page and a missing anchor, and passes the built site', async () => {
    const pages = new Map([
      [
        'index.html',
        '<a href="/guide.html#there">ok</a><a href="/nowhere.html">dead</a><a href="/guide.html#gone">dead</a>',
      ],
      ['guide.html', '<h2 id="there">There</h2>'],
    ]);
    expect(deadLinks(pages).map((d) => `${d.href} ${d.why}`)).toEqual([
      '/nowhere.html no such page',
      '/guide.html#gone no such anchor',
    ]);
  });

  it('a page that links to a missing page fails the VitePress build', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'belay-docs-dead-'));
    try {
      await mkdir(join(dir, '.vitepress'));
      await writeFile(join(dir, '.vitepress/config.mts'), 'export default { ignoreDeadLinks: false };\n');
      await writeFile(join(dir, 'index.md'), '# Home\n\n[a page that is not there](/not-there)\n');
      const vitepress = join(import.meta.dirname, '../../../node_modules/vitepress/bin/vitepress.js');
      const built = await promisify(execFile)(process.execPath, [vitepress, 'build', dir], {
        timeout: 120_000,
      }).then(
        () => ({ ok: true, out: '' }),
        (err: { stdout?: string; stderr?: string }) => ({ ok: false, out: `${err.stdout}${err.stderr}` }),
      );
      expect(built.ok).toBe(false);
      expect(built.out).toMatch(/dead link/i);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 150_000);
});
