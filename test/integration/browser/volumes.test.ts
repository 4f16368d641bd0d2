/**
 * Volumes on the local Anchor service through the real `anchorbrowser` SDK (its client's own
 * calls at Anchor's Volumes paths) and the browser adapter, with real Chromium: a volume is
 * created and mounted, the page's download lands in its `downloads/` (even though Playwright
 * asks the browser to save downloads elsewhere when it connects), a read-only mount saves
 * none, and the team's 11th volume is refused. Two browsers, one at a time.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anchorbrowser from 'anchorbrowser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedSessionIds, createBrowserAdapter } from '../../../lambdas/lib/browser/adapter.ts';
import { BrowserRequestError } from '../../../lambdas/lib/browser/errors.ts';
import type { BrowserAdapter } from '../../../lambdas/lib/browser/types.ts';
import { sha256Hex } from '../../../lambdas/lib/files/evidence.ts';
import { type AnchorService, startAnchorService } from '../../../local/anchor/service.ts';
import { isProcessAlive } from '../../../local/chromium.ts';

const FILE = Buffer.from('%PDF-1.4\n% a small file the page offers as a download\n%%EOF\n', 'latin1');

async function startFileSite(): Promise<{ origin: string; stop: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    if (req.url === '/report.pdf') {
      res.writeHead(200, {
        'content-type': 'application/pdf',
        'content-disposition': 'attachment; filename="report.pdf"',
        'content-length': FILE.length,
      });
      res.end(FILE);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>Files</title><a id="get" href="/report.pdf">Download</a>');
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    stop: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}

async function waitForFile(list: () => Promise<string[]>, path: string, ms = 10_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if ((await list()).includes(path)) return true;
    await new Promise((ok) => setTimeout(ok, 100));
  }
  return false;
}

describe('Local Anchor service: volumes through the SDK, mounted in real Chromium', () => {
  let dataDir: string;
  let anchor: AnchorService;
  let sdk: Anchorbrowser;
  let adapter: BrowserAdapter;
  let site: { origin: string; stop: () => Promise<void> };
  const pids = new Set<number>();

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'belay-volumes-'));
    anchor = await startAnchorService({ dataDir, minuteMs: 1_000 });
    sdk = new Anchorbrowser({ apiKey: anchor.apiKey, baseURL: anchor.baseUrl, maxRetries: 0 });
    adapter = createBrowserAdapter({ apiKey: anchor.apiKey, baseUrl: anchor.baseUrl, callTimeoutMs: 20_000 });
    site = await startFileSite();
  });

  afterAll(async () => {
    for (const id of cachedSessionIds()) await adapter.detach(id);
    if (anchor) for (const pid of anchor.browserPids()) pids.add(pid);
    await anchor?.stop({ endSessions: true });
    await site?.stop();
    for (const pid of pids) expect(isProcessAlive(pid)).toBe(false);
    await rm(dataDir, { recursive: true, force: true });
  });

  it('creates, lists and reads files of a volume in the API shape the SDK decodes', async () => {
    const created = await sdk.post<{ data: { id: string; name: string; status: string } }>('/v1/volumes', {
      body: { name: 'reports' },
    });
    expect(created.data).toMatchObject({ name: 'reports', status: 'ready' });
    const form = new FormData();
    form.set('path', 'inputs/a.txt');
    form.set('file', new Blob([Buffer.from('hello')]), 'a.txt');
    await sdk.post(`/v1/volumes/${created.data.id}/files`, { body: form });
    const listed = await sdk.get<{ data: { items: { path: string; size: number; type: string }[] } }>(
      `/v1/volumes/${created.data.id}/files`,
      { query: { recursive: 'true' } },
    );
    expect(listed.data.items).toContainEqual(
      expect.objectContaining({ path: 'inputs/a.txt', size: 5, type: 'file' }),
    );
    const bytes = await adapter.volumes.readFile(created.data.id, 'inputs/a.txt');
    expect(bytes.toString()).toBe('hello');
    // A name in use, and a path out of the volume, are refused with what to fix.
    await expect(sdk.post('/v1/volumes', { body: { name: 'reports' } })).rejects.toMatchObject({
      status: 409,
    });
    const bad = new FormData();
    bad.set('path', '../escape.txt');
    bad.set('file', new Blob([Buffer.from('x')]), 'x');
    await expect(sdk.post(`/v1/volumes/${created.data.id}/files`, { body: bad })).rejects.toMatchObject({
      status: 400,
    });
    expect(existsSync(join(dataDir, 'volumes', created.data.id, 'escape.txt'))).toBe(false);
  });

  it('a read-write mount saves the page download into the volume downloads/', async () => {
    const volumeId = await adapter.volumes.ensure('downloads-rw');
    expect(await adapter.volumes.ensure('downloads-rw')).toBe(volumeId);
    const { sessionId } = await adapter.openSession({
      idleTimeoutMinutes: 600,
      maxDurationMinutes: 600,
      volumes: [{ volumeId, readOnly: false }],
    });
    const { page } = await adapter.attach(sessionId, { allowedDomains: [] });
    await page.goto(`${site.origin}/`);
    await page.click('#get');
    const list = async (): Promise<string[]> =>
      (await adapter.volumes.listFiles(volumeId, 'downloads')).map((f) => f.path);
    expect(await waitForFile(list, 'downloads/report.pdf')).toBe(true);
    const saved = await adapter.volumes.readFile(volumeId, 'downloads/report.pdf');
    expect(sha256Hex(saved)).toBe(sha256Hex(FILE));
    expect(await readFile(join(dataDir, 'volumes', volumeId, 'files', 'downloads', 'report.pdf'))).toEqual(
      FILE,
    );
    // Mounted by a running session: the volume cannot be deleted under it.
    await expect(sdk.delete(`/v1/volumes/${volumeId}`)).rejects.toMatchObject({ status: 409 });
    await adapter.endSession(sessionId);
  });

  it('a read-only mount refuses the download: nothing is written to the volume', async () => {
    const volumeId = await adapter.volumes.ensure('downloads-ro');
    const { sessionId } = await adapter.openSession({
      idleTimeoutMinutes: 600,
      maxDurationMinutes: 600,
      volumes: [{ volumeId, readOnly: true }],
    });
    const { page } = await adapter.attach(sessionId, { allowedDomains: [] });
    await page.goto(`${site.origin}/`);
    await page.click('#get');
    const list = async (): Promise<string[]> =>
      (await adapter.volumes.listFiles(volumeId, 'downloads')).map((f) => f.path);
    expect(await waitForFile(list, 'downloads/report.pdf', 3_000)).toBe(false);
    expect(await list()).toEqual([]);
    await adapter.endSession(sessionId);
  });

  it("refuses the team's 11th volume, and a session that mounts a volume the team lacks", async () => {
    const have = (await sdk.get<{ data: { count: number } }>('/v1/volumes')).data.count;
    for (let i = have; i < 10; i++) await sdk.post('/v1/volumes', { body: { name: `v${i}` } });
    expect((await sdk.get<{ data: { count: number } }>('/v1/volumes')).data.count).toBe(10);
    await expect(sdk.post('/v1/volumes', { body: { name: 'eleventh' } })).rejects.toMatchObject({
      status: 403,
      message: expect.stringContaining('at most 10 volumes'),
    });
    await expect(adapter.volumes.ensure('eleventh')).rejects.toBeInstanceOf(BrowserRequestError);
    await expect(
      adapter.openSession({
        idleTimeoutMinutes: 5,
        maxDurationMinutes: 5,
        volumes: [{ volumeId: '00000000-0000-0000-0000-000000000000', readOnly: false }],
      }),
    ).rejects.toThrow(/volume not found/);
  });
});
