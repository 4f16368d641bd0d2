/**
 * The browser layer end to end: the official SDK and the adapter against the local Anchor
 * service, real Chromium, client processes that get SIGKILLed. Browsers are launched one at a
 * time (five in all); every one of them must be gone when the file ends.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anchorbrowser from 'anchorbrowser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedSessionIds, createBrowserAdapter } from '../../../lambdas/lib/browser/adapter.ts';
import { SessionGoneError } from '../../../lambdas/lib/browser/errors.ts';
import type { BrowserAdapter } from '../../../lambdas/lib/browser/types.ts';
import { type AnchorService, startAnchorService } from '../../../local/anchor/service.ts';
import { isProcessAlive, killProcessGroup, waitForExit } from '../../../local/chromium.ts';
import {
  type ClientRun,
  liveProcessesMentioning,
  runClient,
  type Site,
  startSite,
  waitFor,
} from './support.ts';

/** The service counts a "minute" as one second here; LONG keeps sessions alive for the file. */
const MINUTE_MS = 1_000;
const LONG = 600;

describe('Browser layer: local Anchor service, SDK and adapter with real Chromium', () => {
  let dataDir: string;
  let anchor: AnchorService;
  let site: Site;
  let elsewhere: Site;
  let sdk: Anchorbrowser;
  let adapter: BrowserAdapter;
  const browserPids = new Set<number>();
  const clients: ClientRun[] = [];
  const env = (): { apiKey: string; baseUrl: string } => ({ apiKey: anchor.apiKey, baseUrl: anchor.baseUrl });
  const rememberPids = (): void => {
    for (const pid of anchor.browserPids()) browserPids.add(pid);
  };
  const restart = async (): Promise<void> => {
    rememberPids();
    const { port } = anchor;
    await anchor.stop();
    anchor = await startAnchorService({ dataDir, port, minuteMs: MINUTE_MS });
  };
  const client = (args: string[]): ClientRun => {
    const run = runClient(args, env());
    clients.push(run);
    return run;
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'belay-anchor-'));
    anchor = await startAnchorService({ dataDir, minuteMs: MINUTE_MS });
    site = await startSite();
    elsewhere = await startSite();
    sdk = new Anchorbrowser({ apiKey: anchor.apiKey, baseURL: anchor.baseUrl });
    adapter = createBrowserAdapter({ apiKey: anchor.apiKey, baseUrl: anchor.baseUrl, callTimeoutMs: 20_000 });
  });

  afterAll(async () => {
    for (const run of clients)
      if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
    for (const id of cachedSessionIds()) await adapter.detach(id);
    if (anchor) rememberPids();
    await anchor?.stop({ endSessions: true });
    await site?.stop();
    await elsewhere?.stop();
    for (const pid of browserPids)
      expect(await waitForExit(pid, 5_000), `chromium ${pid} still alive`).toBe(true);
    const leftovers = await waitFor('helper processes to exit', async () => {
      const pids = liveProcessesMentioning(dataDir);
      return pids.length === 0 ? pids : undefined;
    }).catch(() => liveProcessesMentioning(dataDir));
    for (const pid of leftovers) killProcessGroup(pid);
    expect(leftovers, 'processes still using the data dir').toEqual([]);
    // Chromium's last helper processes may still be writing as they exit: rm retries then.
    await rm(dataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  });

  let sessionA = '';

  it('a new process reattaches within a second to what a SIGKILLed client left: page, form, cookie, localStorage', async () => {
    ({ sessionId: sessionA } = await adapter.openSession({
      idleTimeoutMinutes: LONG,
      maxDurationMinutes: LONG,
      tags: { job: 'job-1' },
    }));
    const fill = client(['fill', sessionA, `${site.origin}/form`, site.host]);
    expect(await fill.firstJson).toEqual({ ready: true });
    fill.child.kill('SIGKILL');
    expect(await fill.exited).toBe('SIGKILL');

    const inspect = client(['inspect', sessionA, site.host]);
    const seen = await inspect.firstJson;
    expect(seen).toMatchObject({
      reused: false,
      url: `${site.origin}/form`,
      name: 'Ada Lovelace',
      draft: 'step-12',
      pages: 1,
    });
    expect(seen.cookies).toEqual(['cart=42']);
    expect(seen.attachMs).toBeLessThan(1_000);
    expect(await inspect.exited).toBe(0);
    expect(anchor.session(sessionA)?.status).toBe('running');
  });

  it('a warm reattach in the same process reuses the cached connection and page', async () => {
    const first = await adapter.attach(sessionA, { allowedDomains: [site.host] });
    const started = performance.now();
    const second = await adapter.attach(sessionA, { allowedDomains: [site.host] });
    const warmMs = performance.now() - started;
    expect([first.reused, second.reused]).toEqual([false, true]);
    expect(second.browser).toBe(first.browser);
    expect(second.page).toBe(first.page);
    expect(warmMs).toBeLessThan(50);
  });

  it('the allowlist blocks and reports a navigation elsewhere; a warm reattach swaps the list instead of stacking', async () => {
    const hits = elsewhere.hits();
    const { page, blockedRequests } = await adapter.attach(sessionA, { allowedDomains: [site.host] });
    await expect(page.goto(`${elsewhere.origin}/export?token=secret`)).rejects.toThrow(
      /ERR_BLOCKED_BY_CLIENT/,
    );
    expect(blockedRequests()).toEqual([`${elsewhere.origin}/export`]);
    expect(elsewhere.hits()).toBe(hits);
    // Chromium then shows its own error page; let it commit before navigating again.
    await page.waitForURL((url) => url.protocol === 'chrome-error:');
    await page.goto('data:text/html,<p>local</p>');
    await page.goto(`${site.origin}/form`);
    expect(page.url()).toBe(`${site.origin}/form`);

    const widened = await adapter.attach(sessionA, { allowedDomains: [site.host, elsewhere.host] });
    expect(widened.reused).toBe(true);
    await widened.page.goto(`${elsewhere.origin}/ok`);
    expect(elsewhere.hits()).toBe(hits + 1);
    expect([blockedRequests().length, widened.blockedRequests()]).toEqual([1, []]);
    await widened.page.goto(`${site.origin}/form`);
    await widened.page.fill('#name', 'still here');
    await adapter.detach(sessionA);
    expect(cachedSessionIds()).toEqual([]);
  });

  it('a restart of the service keeps a live session reachable, through the adapter and the SDK', async () => {
    const pid = anchor.session(sessionA)?.browser.pid ?? -1;
    const { apiKey } = anchor;
    await restart();
    expect(isProcessAlive(pid)).toBe(true);
    expect(anchor.apiKey).toBe(apiKey);
    expect(anchor.session(sessionA)?.browser.pid).toBe(pid);
    expect((await sdk.sessions.retrieve(sessionA)).data?.status).toBe('running');

    const { page, reused } = await adapter.attach(sessionA, { allowedDomains: [site.host] });
    expect(reused).toBe(false);
    expect([page.url(), await page.inputValue('#name')]).toEqual([`${site.origin}/form`, 'still here']);
    await adapter.detach(sessionA);

    const viaSdk = await sdk.browser.connect(sessionA);
    expect(viaSdk.contexts()[0]?.pages()[0]?.url()).toBe(`${site.origin}/form`);
    await viaSdk.close();
    expect(isProcessAlive(pid)).toBe(true);
  });

  it('a session whose browser died while the service was down is marked ended; attach raises SessionGoneError', async () => {
    const pid = anchor.session(sessionA)?.browser.pid ?? -1;
    rememberPids();
    await anchor.stop();
    killProcessGroup(pid);
    expect(await waitForExit(pid, 5_000)).toBe(true);
    anchor = await startAnchorService({ dataDir, port: anchor.port, minuteMs: MINUTE_MS });

    expect((await sdk.sessions.retrieve(sessionA)).data?.status).toBe('failed');
    expect(anchor.session(sessionA)?.endReason).toBe('dead_on_restart');
    await expect(adapter.attach(sessionA, { allowedDomains: [] })).rejects.toBeInstanceOf(SessionGoneError);
    expect(await adapter.isAlive(sessionA)).toBe(false);
  });

  it('a persisted profile carries a login cookie into a new session; an ended session is gone', async () => {
    const profile = { name: 'crm-alice', persist: true };
    const first = await adapter.openSession({ profile, idleTimeoutMinutes: LONG, maxDurationMinutes: LONG });
    const signIn = await adapter.attach(first.sessionId, { allowedDomains: [site.host] });
    await signIn.page.goto(`${site.origin}/login`);
    await signIn.page.evaluate(() => localStorage.setItem('theme', 'dark'));
    await adapter.endSession(first.sessionId);
    expect((await sdk.sessions.retrieve(first.sessionId)).data?.status).toBe('completed');
    await expect(adapter.attach(first.sessionId, { allowedDomains: [] })).rejects.toBeInstanceOf(
      SessionGoneError,
    );
    await expect(adapter.endSession(first.sessionId)).resolves.toBeUndefined();
    expect((await sdk.profiles.retrieve('crm-alice')).data).toMatchObject({
      name: 'crm-alice',
      status: 'ready',
    });

    const second = await adapter.openSession({
      profile: { name: 'crm-alice', persist: false },
      idleTimeoutMinutes: LONG,
      maxDurationMinutes: LONG,
    });
    const { page } = await adapter.attach(second.sessionId, { allowedDomains: [site.host] });
    await page.goto(`${site.origin}/whoami`);
    expect(await page.textContent('#who')).toBe('alice');
    expect(await page.evaluate(() => localStorage.getItem('theme'))).toBe('dark');
  });

  it('fault injection: the PID serving a session is known, and killing it ends the session as failed', async () => {
    const [running] = (await sdk.sessions.all.status()).data?.items ?? [];
    const id = running?.session_id ?? '';
    const res = await fetch(`${anchor.baseUrl}/_local/sessions/${id}`, {
      headers: { 'anchor-api-key': anchor.apiKey },
    });
    const { data } = (await res.json()) as { data: { browser: { pid: number } } };
    expect(data.browser.pid).toBe(anchor.session(id)?.browser.pid);
    const attached = await adapter.attach(id, { allowedDomains: [site.host] });

    expect(await anchor.killBrowser(id)).toBe(data.browser.pid);
    expect(isProcessAlive(data.browser.pid)).toBe(false);
    expect(anchor.session(id)).toMatchObject({ status: 'failed', endReason: 'browser_killed' });
    await waitFor('the cached connection to notice', async () =>
      attached.browser.isConnected() ? undefined : true,
    );
    const err = await adapter.attach(id, { allowedDomains: [] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SessionGoneError);
    expect((err as SessionGoneError).status).toBe('failed');
    expect(await adapter.isAlive(id)).toBe(false);
  });

  it('a session ends at its max duration even with a client connected', async () => {
    const { sessionId } = await adapter.openSession({ idleTimeoutMinutes: LONG, maxDurationMinutes: 2 });
    const { browser } = await adapter.attach(sessionId, { allowedDomains: [] });
    expect(browser.isConnected()).toBe(true);
    await waitFor('the session to reach its max duration', async () =>
      anchor.session(sessionId)?.status === 'completed' ? true : undefined,
    );
    expect(anchor.session(sessionId)?.endReason).toBe('max_duration');
    await waitFor('the client to be disconnected', async () => (browser.isConnected() ? undefined : true));
    await expect(adapter.attach(sessionId, { allowedDomains: [] })).rejects.toBeInstanceOf(SessionGoneError);
  });

  it('an idle session ends after its idle timeout, counted from the last CDP client leaving', async () => {
    const { sessionId } = await adapter.openSession({ idleTimeoutMinutes: 2, maxDurationMinutes: LONG });
    const pid = anchor.session(sessionId)?.browser.pid ?? -1;
    const { page } = await adapter.attach(sessionId, { allowedDomains: [] });
    await page.goto(`${site.origin}/whoami`);
    expect(await page.textContent('#who')).toBe('nobody');
    await new Promise((r) => setTimeout(r, 3 * MINUTE_MS));
    expect(await adapter.isAlive(sessionId)).toBe(true);

    const left = Date.now();
    await adapter.detach(sessionId);
    await waitFor('the idle session to end', async () =>
      (await sdk.sessions.retrieve(sessionId)).data?.status === 'completed' ? true : undefined,
    );
    expect(Date.now() - left).toBeGreaterThanOrEqual(2 * MINUTE_MS - 100);
    expect(anchor.session(sessionId)?.endReason).toBe('idle_timeout');
    expect(await waitForExit(pid, 5_000)).toBe(true);
  });
});
