/**
 * Connecting an account through Anchor's hosted sign-in, Belay's side: the real `anchorbrowser`
 * SDK against the local Anchor service, DynamoDB Local for the pending connection, the account
 * and the identity claim (one transaction), the demo shop for the sign-in, real Chromium. The
 * person's part (the hosted page) is played over HTTP; the session that uses the account is
 * opened by Belay's browser adapter, as OpenSession opens it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import Anchorbrowser, { NotFoundError } from 'anchorbrowser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ACCOUNTS } from '../../../demo/accounts.ts';
import { type StartedSites, startSites } from '../../../demo/sites/index.ts';
import { createAnchorIdentities } from '../../../lambdas/lib/accounts/anchor-identities.ts';
import { createConnectionStore } from '../../../lambdas/lib/accounts/connections.ts';
import { createAccountRegistry } from '../../../lambdas/lib/accounts/directory.ts';
import {
  type ConnectDeps,
  completeConnection,
  startConnection,
} from '../../../lambdas/lib/api/accounts/connect.ts';
import { deleteIdentityUnlessShared } from '../../../lambdas/lib/api/accounts/manage.ts';
import { ApiError } from '../../../lambdas/lib/api/errors.ts';
import type { Principal } from '../../../lambdas/lib/auth/api-keys.ts';
import { createBrowserAdapter } from '../../../lambdas/lib/browser/adapter.ts';
import { createLogger } from '../../../lambdas/lib/logger.ts';
import { CONNECT_PAGE_PATH } from '../../../local/anchor/connect-page.ts';
import { type AnchorService, startAnchorService } from '../../../local/anchor/service.ts';
import { useDynamoDb } from '../../support/dynamodb.ts';

const API_KEY = 'test-key-connect-0123456';
const API_BASE = 'http://127.0.0.1:9/belay';
const ADA = DEMO_ACCOUNTS.shop.find((a) => a.username === 'ada@example.com');
if (!ADA) throw new Error('demo shop account ada is missing');
const admin = (tenantId: string): Principal => ({ tenantId, roles: ['admin'], keyId: `key_${tenantId}` });

const ddb = useDynamoDb();

describe('Connecting an account through the hosted sign-in (real SDK, local Anchor, DynamoDB Local)', () => {
  let dataDir: string;
  let anchor: AnchorService;
  let sites: StartedSites;
  let sdk: Anchorbrowser;
  let offsetMs = 0;
  const logLines: string[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'belay-connect-'));
    anchor = await startAnchorService({ dataDir, apiKey: API_KEY });
    sites = await startSites();
    sdk = new Anchorbrowser({ apiKey: API_KEY, baseURL: anchor.baseUrl, maxRetries: 0 });
  }, 60_000);

  afterAll(async () => {
    await anchor?.stop({ endSessions: true });
    await sites?.stop();
    await rm(dataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  });

  const deps = (): ConnectDeps => {
    const clock = (): Date => new Date(Date.now() + offsetMs);
    const doc = ddb.doc();
    const tableName = ddb.tableName();
    return {
      engine: {
        applications: {
          shop: { baseUrl: sites.shop.baseUrl, allowedDomains: [] },
          crm: { baseUrl: sites.crm.baseUrl, allowedDomains: [] },
        },
        clock,
        log: createLogger({ sink: (line) => logLines.push(line) }),
      },
      anchor: createAnchorIdentities({
        client: async () => sdk,
        connectPageUrl: `${anchor.baseUrl}${CONNECT_PAGE_PATH}`,
      }),
      connections: createConnectionStore({ doc, tableName, clock }),
      accounts: createAccountRegistry({ doc, tableName, clock }),
    };
  };

  /** The person on the hosted page: signs in, and returns the callback Anchor sends them to. */
  async function signInOnHostedPage(connectUrl: string, username: string, password: string): Promise<URL> {
    const shown = await fetch(connectUrl);
    expect(shown.status).toBe(200);
    const token = new URL(connectUrl).searchParams.get('token') ?? '';
    const sent = await fetch(new URL(CONNECT_PAGE_PATH, connectUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, username, password }).toString(),
      redirect: 'manual',
    });
    expect(sent.status).toBe(302);
    return new URL(sent.headers.get('location') ?? '');
  }

  /** The callback as the route sees it: its key (last path segment) and `identityId`. */
  const callback = (d: ConnectDeps, url: URL) =>
    completeConnection(
      d,
      url.pathname.split('/').pop() ?? '',
      url.searchParams.get('identityId') ?? undefined,
    );

  const refusal = async (p: Promise<unknown>): Promise<{ status: number; code: string }> => {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    return { status: (err as ApiError).statusCode, code: (err as ApiError).code };
  };

  it('maps the identity to the tenant that started the connection; a replay changes nothing; a session on the account arrives signed in; revoking deletes the identity', {
    timeout: 120_000,
  }, async () => {
    const d = deps();
    const { connection, connectUrl } = await startConnection(
      d,
      admin('acme'),
      { application: 'shop', label: 'Shop (Ada)' },
      API_BASE,
    );
    expect(connection).toMatchObject({ tenantId: 'acme', application: 'shop', status: 'pending' });
    expect(connectUrl.startsWith(`${anchor.baseUrl}${CONNECT_PAGE_PATH}?token=`)).toBe(true);
    // Belay's application at Anchor, found again (not created twice) on the next connection.
    const apps = (await sdk.applications.list({ search: 'belay-shop' })).applications ?? [];
    expect(apps.map((a) => a.name)).toEqual(['belay-shop']);

    const back = await signInOnHostedPage(connectUrl, ADA.username, ADA.password);
    expect(back.href.startsWith(`${API_BASE}/accounts/connect/callback/`)).toBe(true);
    const { account } = await callback(d, back);
    expect(account).toMatchObject({
      tenantId: 'acme',
      application: 'shop',
      label: 'Shop (Ada)',
      connectedWith: 'identity',
      status: 'connected',
    });
    expect(account.identityId).toBe(back.searchParams.get('identityId'));
    const stored = await ddb.doc().send(
      new GetCommand({
        TableName: ddb.tableName(),
        Key: { pk: `IDENTITY#${account.identityId}`, sk: 'IDENTITY' },
      }),
    );
    expect(stored.Item?.tenantId).toBe('acme');
    // The identity at Anchor carries the account it serves, and no Belay item holds a password.
    expect((await sdk.identities.retrieve(account.identityId as string)).metadata).toEqual({
      belayTenant: 'acme',
      belayAccount: account.accountId,
    });
    expect(JSON.stringify(await d.accounts.list('acme'))).not.toContain(ADA.password);
    expect(logLines.join('\n')).not.toContain(ADA.password);

    // Replayed: refused as used; still exactly one account.
    expect(await refusal(callback(d, back))).toEqual({ status: 409, code: 'connection_used' });
    expect(await d.accounts.list('acme')).toHaveLength(1);

    // A session for the account, opened as OpenSession opens it, arrives signed in.
    const browser = createBrowserAdapter({ apiKey: API_KEY, baseUrl: anchor.baseUrl });
    const opened = await browser.openSession({
      identityIds: [account.identityId as string],
      idleTimeoutMinutes: 2,
      maxDurationMinutes: 5,
      tags: { jobId: 'connect-test' },
    });
    const { page } = await browser.attach(opened.sessionId, { allowedDomains: [] });
    await page.goto(`${sites.shop.baseUrl}/`, { waitUntil: 'load' });
    await expect(page.locator('[data-testid="account-name"]').textContent()).resolves.toContain(
      ADA.displayName,
    );
    await browser.endSession(opened.sessionId);

    // Revoking: the identity is deleted at Anchor (and a second revoke is harmless).
    await d.accounts.revoke('acme', account.accountId);
    await deleteIdentityUnlessShared(d, 'acme', account.accountId, account.identityId as string);
    await expect(sdk.identities.retrieve(account.identityId as string)).rejects.toBeInstanceOf(NotFoundError);
    await deleteIdentityUnlessShared(d, 'acme', account.accountId, account.identityId as string);
  });

  it("refuses a foreign callback (another connection's identity, claimed or not; another application's) and leaves the connection pending", {
    timeout: 60_000,
  }, async () => {
    const d = deps();
    const first = await startConnection(d, admin('owner'), { application: 'shop', label: 'Shop' }, API_BASE);
    const ownersBack = await signInOnHostedPage(first.connectUrl, ADA.username, ADA.password);
    await callback(d, ownersBack);
    const ownersIdentity = ownersBack.searchParams.get('identityId') as string;

    // A rival tenant's own connection, called back with the owner's identity.
    const rival = await startConnection(
      d,
      admin('rival'),
      { application: 'shop', label: 'Stolen' },
      API_BASE,
    );
    const rivalBack = await signInOnHostedPage(rival.connectUrl, ADA.username, ADA.password);
    const forged = new URL(rivalBack);
    forged.searchParams.set('identityId', ownersIdentity);
    expect(await refusal(callback(d, forged))).toEqual({ status: 422, code: 'identity_not_of_connection' });
    expect(await d.accounts.list('rival')).toEqual([]);

    // Another connection's identity that nobody has claimed yet (its callback not yet made): the
    // identity is bound to the token that created it, so a held callback URL cannot take it.
    const third = await startConnection(d, admin('third'), { application: 'shop', label: 'Third' }, API_BASE);
    const thirdBack = await signInOnHostedPage(third.connectUrl, ADA.username, ADA.password);
    const taken = new URL(rivalBack);
    taken.searchParams.set('identityId', thirdBack.searchParams.get('identityId') as string);
    expect(await refusal(callback(d, taken))).toEqual({ status: 422, code: 'identity_not_of_connection' });
    expect(await d.accounts.list('rival')).toEqual([]);
    expect((await callback(d, thirdBack)).account).toMatchObject({ tenantId: 'third', label: 'Third' });

    // An identity of another application (the CRM's) on the shop's connection.
    const crm = await startConnection(d, admin('rival'), { application: 'crm', label: 'CRM' }, API_BASE);
    const crmBack = await signInOnHostedPage(crm.connectUrl, 'ada@example.com', 'demo-crm-ada');
    const crossed = new URL(rivalBack);
    crossed.searchParams.set('identityId', crmBack.searchParams.get('identityId') as string);
    expect(await refusal(callback(d, crossed))).toEqual({ status: 422, code: 'identity_not_of_connection' });

    // A made-up callback key, and a malformed one.
    const madeUp = new URL(rivalBack);
    madeUp.pathname = madeUp.pathname.replace(/[^/]+$/, 'A'.repeat(43));
    expect(await refusal(callback(d, madeUp))).toEqual({ status: 404, code: 'not_found' });
    expect(await refusal(completeConnection(d, '../x', 'id'))).toEqual({ status: 404, code: 'not_found' });

    // Nothing was used up by the refusals: the rival's connection completes with its own identity.
    const { account } = await callback(d, rivalBack);
    expect(account).toMatchObject({
      tenantId: 'rival',
      label: 'Stolen',
      identityId: rivalBack.searchParams.get('identityId'),
    });
  });

  it('refuses a late callback (the token expired) and creates no account', { timeout: 60_000 }, async () => {
    const d = deps();
    const { connectUrl } = await startConnection(
      d,
      admin('late'),
      { application: 'shop', label: 'Late' },
      API_BASE,
    );
    const back = await signInOnHostedPage(connectUrl, ADA.username, ADA.password);
    offsetMs = 16 * 60_000;
    try {
      expect(await refusal(callback(d, back))).toEqual({ status: 410, code: 'connection_expired' });
    } finally {
      offsetMs = 0;
    }
    expect(await d.accounts.list('late')).toEqual([]);
  });
});
