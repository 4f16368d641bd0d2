/**
 * Managed authentication on the local Anchor service, through the official `anchorbrowser` SDK:
 * applications and their auth flows, identities whose credentials no answer carries (except
 * `retrieveCredentials`, as on Anchor), identity tokens and the hosted connect page (single use),
 * and a session created with an identity that arrives signed in to the demo shop, its TOTP
 * answered from the identity's authenticator secret. Real Chromium, demo sites on loopback.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anchorbrowser, { BadRequestError, NotFoundError } from 'anchorbrowser';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ACCOUNTS } from '../../../demo/accounts.ts';
import { type StartedSites, startSites } from '../../../demo/sites/index.ts';
import { CONNECT_PAGE_PATH } from '../../../local/anchor/connect-page.ts';
import { type AnchorService, startAnchorService } from '../../../local/anchor/service.ts';

const API_KEY = 'test-key-identities-0123';
const GRACE = DEMO_ACCOUNTS.shop.find((a) => a.username === 'grace@example.com');
if (GRACE?.mfa.kind !== 'totp') throw new Error('demo shop account grace (TOTP) is missing');
const TOTP_SECRET = GRACE.mfa.secret;

describe('Local Anchor service: applications and identities with the official SDK', () => {
  let dataDir: string;
  let anchor: AnchorService;
  let sites: StartedSites;
  let sdk: Anchorbrowser;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'belay-anchor-identities-'));
    anchor = await startAnchorService({ dataDir, apiKey: API_KEY });
    sites = await startSites();
    sdk = new Anchorbrowser({ apiKey: API_KEY, baseURL: anchor.baseUrl, maxRetries: 0 });
  }, 60_000);

  afterAll(async () => {
    await anchor?.stop({ endSessions: true });
    await sites?.stop();
    await rm(dataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  });

  it('keeps applications with auth flows, and identities whose credentials only retrieveCredentials returns', async () => {
    const app = await sdk.applications.create({ source: sites.crm.baseUrl, name: 'crm-contract' });
    expect(app).toMatchObject({ id: expect.any(String), name: 'crm-contract', url: sites.crm.baseUrl });
    const flow = await sdk.applications.authFlows.create(app.id as string, {
      name: 'Password and authenticator',
      methods: ['username_password', 'authenticator'],
    });
    expect(flow.methods).toEqual(['username_password', 'authenticator']);
    const flows = await sdk.applications.authFlows.list(app.id as string);
    expect(flows.auth_flows?.map((f) => f.name)).toEqual([
      'Standard authentication',
      'Password and authenticator',
    ]);

    const created = await sdk.identities.create({
      source: sites.crm.baseUrl,
      name: 'Ada at the CRM',
      metadata: { tenant: 't1' },
      credentials: [{ type: 'username_password', username: 'ada@example.com', password: 'demo-crm-ada' }],
    });
    const answers = [
      created,
      await sdk.identities.retrieve(created.id as string),
      await sdk.applications.listIdentities(app.id as string),
      await sdk.applications.listIdentities(app.id as string, { metadata: JSON.stringify({ tenant: 't1' }) }),
      await sdk.identities.update(created.id as string, { metadata: { tenant: 't1', belay: 'yes' } }),
      await sdk.applications.list(),
    ];
    for (const answer of answers)
      expect(JSON.stringify(answer)).not.toMatch(/demo-crm-ada|"password"|"credentials"/);
    expect((answers[3] as { identities: { id: string }[] }).identities.map((i) => i.id)).toEqual([
      created.id,
    ]);
    expect(
      (
        await sdk.applications.listIdentities(app.id as string, {
          metadata: JSON.stringify({ tenant: 't2' }),
        })
      ).identities,
    ).toEqual([]);
    // As Anchor's API: the one call that answers with the secrets (Belay never makes it).
    const creds = await sdk.identities.retrieveCredentials(created.id as string);
    expect(creds.credentials).toEqual([
      { type: 'username_password', username: 'ada@example.com', password: 'demo-crm-ada' },
    ]);
    // Kept as the service keeps them: on its disk, readable by its user only.
    const onDisk = await readFile(join(dataDir, 'identities', `${created.id}.json`), 'utf8');
    expect(onDisk).toContain('demo-crm-ada');

    await sdk.identities.delete(created.id as string);
    await expect(sdk.identities.retrieve(created.id as string)).rejects.toBeInstanceOf(NotFoundError);
    await expect(sdk.identities.delete(created.id as string)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('connects through the hosted page once per token, and sends the person back with ?identityId=', async () => {
    const app = await sdk.applications.create({ source: sites.shop.baseUrl, name: 'shop-connect' });
    await expect(
      sdk.applications.createIdentityToken(app.id as string, { callbackUrl: 'http://example.com/cb' }),
    ).rejects.toBeInstanceOf(BadRequestError);
    await expect(
      sdk.applications.createIdentityToken('no-such-app', { callbackUrl: 'https://example.com/cb' }),
    ).rejects.toBeInstanceOf(NotFoundError);

    const answer = (await sdk.applications.createIdentityToken(app.id as string, {
      callbackUrl: 'https://belay.example/accounts/connect/callback/k1',
    })) as { data?: { token?: string; token_hash?: string; expires_at?: string }; token?: string };
    const token = answer.data?.token as string;
    expect(answer.token).toBe(token); // both shapes
    expect(Date.parse(answer.data?.expires_at ?? '') - Date.now()).toBeGreaterThan(14 * 60_000);
    expect(Date.parse(answer.data?.expires_at ?? '') - Date.now()).toBeLessThanOrEqual(15 * 60_000);

    const page = `${anchor.baseUrl}${CONNECT_PAGE_PATH}`;
    const shown = await fetch(`${page}?token=${encodeURIComponent(token)}`);
    expect(shown.status).toBe(200);
    expect(await shown.text()).toContain('name="password"');
    expect((await fetch(`${page}?token=made-up`)).status).toBe(410);

    const post = (fields: Record<string, string>): Promise<Response> =>
      fetch(page, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
        redirect: 'manual',
      });
    // A half-filled form does not use the token up.
    expect((await post({ token, username: 'grace@example.com' })).status).toBe(400);
    const sent = await post({
      token,
      username: 'grace@example.com',
      password: 'demo-shop-grace',
      totp_secret: TOTP_SECRET,
    });
    expect(sent.status).toBe(302);
    const back = new URL(sent.headers.get('location') ?? '');
    expect(`${back.origin}${back.pathname}`).toBe('https://belay.example/accounts/connect/callback/k1');
    const identityId = back.searchParams.get('identityId') as string;
    expect((await sdk.applications.listIdentities(app.id as string)).identities?.map((i) => i.id)).toEqual([
      identityId,
    ]);

    // Single use: the same token again creates nothing.
    const again = await post({ token, username: 'mallory@example.com', password: 'x' });
    expect(again.status).toBe(410);
    expect(await again.text()).toContain('used already');
    expect((await sdk.applications.listIdentities(app.id as string)).identities).toHaveLength(1);
  });

  it('refuses a session with an unknown identity, and hands one with an identity over signed in (TOTP answered)', {
    timeout: 90_000,
  }, async () => {
    const before = anchor.sessions().length;
    await expect(sdk.sessions.create({ identities: [{ id: 'no-such-identity' }] })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    expect(anchor.sessions()).toHaveLength(before); // no browser was started for the refusal

    const identity = await sdk.identities.create({
      source: sites.shop.baseUrl,
      credentials: [
        { type: 'username_password', username: 'grace@example.com', password: 'demo-shop-grace' },
        { type: 'authenticator', secret: TOTP_SECRET },
      ],
    });
    expect(identity.status).toBe('pending');
    const session = await sdk.sessions.create({
      identities: [{ id: identity.id as string }],
      session: { timeout: { idle_timeout: 2, max_duration: 5 } },
    });
    const browser = await chromium.connectOverCDP(session.data?.cdp_url as string, { timeout: 15_000 });
    try {
      const page = browser.contexts()[0]?.pages()[0];
      if (!page) throw new Error('the session has no page');
      await page.goto(`${sites.shop.baseUrl}/`, { waitUntil: 'load' });
      await expect(page.locator('[data-testid="account-name"]').textContent()).resolves.toContain(
        'Grace Hopper',
      );
    } finally {
      await browser.close();
    }
    expect((await sdk.identities.retrieve(identity.id as string)).status).toBe('validated');

    // A wrong password: the session is handed over signed out, the identity marked failed.
    const wrong = await sdk.identities.create({
      source: sites.shop.baseUrl,
      credentials: [{ type: 'username_password', username: 'ada@example.com', password: 'not-it' }],
    });
    await sdk.sessions.create({
      identities: [{ id: wrong.id as string }],
      session: { timeout: { idle_timeout: 1 } },
    });
    expect((await sdk.identities.retrieve(wrong.id as string)).status).toBe('failed');
  });
});
