/**
 * Volumes on the local Anchor service through the real `anchorbrowser` SDK (its client's own
 * calls at Anchor's Volumes paths) and the browser adapter, with real Chromium: a volume is
 * created and mounted, the page's download lands in the session's own folder of its
 * `downloads/` (even though Playwright asks the browser to save downloads elsewhere when it
 * connects), two tenants' jobs downloading a file of one name at once each record their own
 * bytes, a read-only mount saves none, and the team's 11th volume is refused.
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
import { pageDownloads } from '../../../lambdas/lib/browser/downloads.ts';
import { BrowserRequestError } from '../../../lambdas/lib/browser/errors.ts';
import type { BrowserAdapter } from '../../../lambdas/lib/browser/types.ts';
import { sha256Hex } from '../../../lambdas/lib/files/evidence.ts';
import { createJobFiles } from '../../../lambdas/lib/files/job-files.ts';
import { type AnchorService, startAnchorService } from '../../../local/anchor/service.ts';
import { isProcessAlive } from '../../../local/chromium.ts';

const FILE = Buffer.from('%PDF-1.4\n% a small file the page offers as a download\n%%EOF\n', 'latin1');

/** The invoice a tenant's site serves: one name for all, bytes of its own. */
const invoiceOf = (who: string): Buffer =>
  Buffer.from(`%PDF-1.4\n% the invoice of ${who}\n%%EOF\n`, 'latin1');

async function startFileSite(): Promise<{ origin: string; stop: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const who = url.searchParams.get('who');
    if (url.pathname === '/invoice' && who) {
      // The same file name for every tenant, with that tenant's own bytes.
      const bytes = invoiceOf(who);
      res.writeHead(200, {
        'content-type': 'application/pdf',
        'content-disposition': 'attachment; filename="invoice.pdf"',
        'content-length': bytes.length,
      });
      res.end(bytes);
      return;
    }
    if (who) {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        `<!doctype html><title>Invoices</title><a id="get" href="/invoice?who=${encodeURIComponent(who)}">Invoice</a>`,
      );
      return;
    }
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

/** The first file listed under `prefix`, once there is one. */
async function waitForSaved(list: () => Promise<string[]>, prefix: string, ms = 10_000): Promise<string> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const found = (await list()).find((p) => p.startsWith(prefix));
    if (found) return found;
    await new Promise((ok) => setTimeout(ok, 100));
  }
  throw new Error(`nothing was saved under ${prefix}`);
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
    // In the session's own folder, named by the browser's id for the download.
    const saved = await waitForSaved(list, `downloads/${sessionId}/`);
    expect(saved).toMatch(new RegExp(`^downloads/${sessionId}/[0-9a-f-]{36}$`));
    const bytes = await adapter.volumes.readFile(volumeId, saved);
    expect(sha256Hex(bytes)).toBe(sha256Hex(FILE));
    expect(await readFile(join(dataDir, 'volumes', volumeId, 'files', saved))).toEqual(FILE);
    // Mounted by a running session: the volume cannot be deleted under it.
    await expect(sdk.delete(`/v1/volumes/${volumeId}`)).rejects.toMatchObject({ status: 409 });
    await adapter.endSession(sessionId);
  });

  it("two tenants' jobs downloading a file of the same name at the same moment each record their own bytes", async () => {
    const volumeName = 'belay-files-tenancy';
    const volumeId = await adapter.volumes.ensure(volumeName);
    const open = async (tenantId: string) => {
      const { sessionId } = await adapter.openSession({
        idleTimeoutMinutes: 600,
        maxDurationMinutes: 600,
        tags: { tenantId, jobId: 'j1' },
        volumes: [{ volumeId, readOnly: false }],
      });
      const { page } = await adapter.attach(sessionId, { allowedDomains: [] });
      await page.goto(`${site.origin}/?who=${tenantId}`);
      const files = createJobFiles({
        volumes: adapter.volumes,
        volumeName,
        tenantId,
        jobId: 'j1',
        pollMs: 50,
        downloads: { sessionId, capture: pageDownloads(page) },
      });
      return { sessionId, page, files };
    };
    const acme = await open('acme');
    const globex = await open('globex');
    // globex's invoice is saved first; acme clicks only then, while both downloads are under way,
    // so a file "new since acme began, named like invoice.pdf" would be globex's.
    let globexSaved: () => void = () => undefined;
    const saved = new Promise<void>((ok) => {
      globexSaved = ok;
    });
    const [mine, theirs] = await Promise.all([
      acme.files.download('invoice.pdf', async () => {
        await saved;
        await acme.page.click('#get');
      }),
      globex.files.download('invoice.pdf', () => globex.page.click('#get')).finally(() => globexSaved()),
    ]);
    expect(mine.sha256).toBe(sha256Hex(invoiceOf('acme')));
    expect(theirs.sha256).toBe(sha256Hex(invoiceOf('globex')));
    expect(mine.path).toBe('tenants/acme/jobs/j1/invoice.pdf');
    expect(theirs.path).toBe('tenants/globex/jobs/j1/invoice.pdf');
    expect(Buffer.from(await acme.files.read(mine))).toEqual(invoiceOf('acme'));
    expect(Buffer.from(await globex.files.read(theirs))).toEqual(invoiceOf('globex'));
    // Each browser saved into its session's own folder, nothing into the shared downloads/.
    const listed = (await adapter.volumes.listFiles(volumeId, 'downloads')).map((f) => f.path);
    expect(listed.filter((p) => p.startsWith(`downloads/${acme.sessionId}/`))).toHaveLength(1);
    expect(listed.filter((p) => p.startsWith(`downloads/${globex.sessionId}/`))).toHaveLength(1);
    expect(listed).toHaveLength(2);
    await adapter.endSession(acme.sessionId);
    await adapter.endSession(globex.sessionId);
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
    await new Promise((ok) => setTimeout(ok, 3_000));
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
