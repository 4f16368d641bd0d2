/**
 * The local Anchor service's API contract as the official SDK sees it: status codes, error
 * bodies and typed SDK errors, profiles, and the CLI. No browser is launched here.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anchorbrowser, {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  NotFoundError,
} from 'anchorbrowser';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnchorService, startAnchorService } from '../../../local/anchor/service.ts';

const API_KEY = 'test-key-0123456789';

describe('Local Anchor service: API contract with the official SDK', () => {
  let dataDir: string;
  let anchor: AnchorService;
  let sdk: Anchorbrowser;
  let wrongKey: Anchorbrowser;
  let cli: ChildProcess | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'belay-anchor-api-'));
    anchor = await startAnchorService({ dataDir, apiKey: API_KEY });
    sdk = new Anchorbrowser({ apiKey: API_KEY, baseURL: anchor.baseUrl });
    wrongKey = new Anchorbrowser({ apiKey: 'wrong', baseURL: anchor.baseUrl });
  });

  afterAll(async () => {
    if (cli?.pid && cli.exitCode === null && cli.signalCode === null) process.kill(cli.pid, 'SIGKILL');
    await anchor?.stop({ endSessions: true });
    expect(anchor.browserPids()).toEqual([]);
    // Chromium's last helper processes may still be writing as they exit: rm retries then.
    await rm(dataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  });

  it.each([
    ['sessions.create', (c: Anchorbrowser) => c.sessions.create({})],
    ['sessions.retrieve', (c: Anchorbrowser) => c.sessions.retrieve('any')],
    ['sessions.all.status', (c: Anchorbrowser) => c.sessions.all.status()],
    ['profiles.list', (c: Anchorbrowser) => c.profiles.list()],
  ])('%s with a wrong API key -> 401 AuthenticationError', async (_name, call) => {
    const err = await call(wrongKey).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
    expect((err as AuthenticationError).error).toEqual({ error: { code: 401, message: 'Invalid API key' } });
  });

  it('refuses a CDP connection with a wrong API key (401)', async () => {
    const url = `${anchor.baseUrl.replace('http', 'ws')}?apiKey=wrong&sessionId=any`;
    await expect(chromium.connectOverCDP(url, { timeout: 5_000 })).rejects.toThrow(/401/);
  });

  it.each([
    ['sessions.retrieve', () => sdk.sessions.retrieve('no-such-session')],
    ['sessions.delete', () => sdk.sessions.delete('no-such-session')],
    ['profiles.retrieve', () => sdk.profiles.retrieve('no-such-profile')],
    ['profiles.delete', () => sdk.profiles.delete('no-such-profile')],
  ])('%s of an unknown id -> 404 NotFoundError', async (_name, call) => {
    const err = await call().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as NotFoundError).status).toBe(404);
  });

  it('refuses a CDP connection to an unknown session (404)', async () => {
    const url = `${anchor.baseUrl.replace('http', 'ws')}?apiKey=${API_KEY}&sessionId=nope`;
    await expect(chromium.connectOverCDP(url, { timeout: 5_000 })).rejects.toThrow(/404/);
  });

  it('a malformed JSON body -> 400 with a message', async () => {
    const res = await fetch(`${anchor.baseUrl}/v1/sessions`, {
      method: 'POST',
      headers: { 'anchor-api-key': API_KEY, 'content-type': 'application/json' },
      body: '{"session": {',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { code: 400, message: 'Malformed JSON body' } });
  });

  it.each([
    ['session.timeout.idle_timeout', { session: { timeout: { idle_timeout: 'ten' } } }],
    ['session.timeout.max_duration', { session: { timeout: { max_duration: 0 } } }],
    ['browser.profile.name', { browser: { profile: { name: '../../etc', persist: true } } }],
    ['browser.profile.name', { browser: { profile: { persist: true } } }],
    ['identities', { identities: 'alice' }],
  ])('a create body with a bad %s -> 400 BadRequestError naming it', async (field, body) => {
    const err = await sdk.sessions.create(body as never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).message).toContain(field);
  });

  it('a session from an unknown, non-persisted profile -> 404 before any browser starts', async () => {
    const err = await sdk.sessions
      .create({ browser: { profile: { name: 'nobody', persist: false } } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(anchor.browserPids()).toEqual([]);
  });

  it('profiles: create, retrieve, list, conflict, delete', async () => {
    await sdk.profiles.create({ name: 'crm-bob', description: 'Bob at the CRM' });
    expect((await sdk.profiles.retrieve('crm-bob')).data).toMatchObject({
      name: 'crm-bob',
      description: 'Bob at the CRM',
      status: 'ready',
    });
    expect((await sdk.profiles.list()).data?.items?.map((p) => p.name)).toEqual(['crm-bob']);
    await expect(sdk.profiles.create({ name: 'crm-bob' })).rejects.toBeInstanceOf(ConflictError);
    await expect(sdk.profiles.create({ name: 'x', session_id: 'no-such-session' })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    await sdk.profiles.delete('crm-bob');
    await expect(sdk.profiles.retrieve('crm-bob')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('lists no running sessions, and ending all of none succeeds', async () => {
    expect((await sdk.sessions.all.status()).data).toEqual({ count: 0, items: [] });
    expect((await sdk.sessions.all.delete()).data).toEqual({ status: 'success' });
  });

  it('refuses to start on a port in use, leaving the running instance alone', async () => {
    await expect(startAnchorService({ dataDir, apiKey: API_KEY, port: anchor.port })).rejects.toThrow(
      /EADDRINUSE/,
    );
    expect((await sdk.sessions.all.status()).data?.count).toBe(0);
  });

  it('the CLI prints its base URL and key, serves, and exits 0 on SIGTERM', async () => {
    const cliDir = join(dataDir, 'cli');
    cli = spawn(process.execPath, ['--import', 'tsx', 'local/anchor/main.ts', '--port', '0', '--quiet'], {
      env: { ...process.env, ANCHOR_LOCAL_DATA_DIR: cliDir, ANCHOR_LOCAL_API_KEY: 'cli-key' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<number | null>((ok) => cli?.once('exit', (code) => ok(code)));
    const printed = await new Promise<Record<string, string>>((ok) => {
      let text = '';
      cli?.stdout?.on('data', (d: Buffer) => {
        text += d.toString();
        if (text.includes('ANCHOR_LOCAL_PID=')) {
          ok(
            Object.fromEntries(
              text
                .trim()
                .split('\n')
                .map((l) => l.split('=', 2) as [string, string]),
            ),
          );
        }
      });
    });
    expect(printed.ANCHORBROWSER_BASE_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(printed.ANCHORBROWSER_API_KEY).toBe('cli-key');
    const viaCli = new Anchorbrowser({ apiKey: 'cli-key', baseURL: printed.ANCHORBROWSER_BASE_URL });
    expect((await viaCli.sessions.all.status()).data?.count).toBe(0);
    cli.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
