/**
 * Connecting an account through the hosted sign-in on the real local stack, the way a user
 * meets it: `POST /accounts/connect` over HTTP with an admin key, the local Anchor service's
 * hosted page, Anchor's redirect to the API's callback (no key), then a `checkout@1` job on the
 * new account whose session arrives signed in (no sign-in by Belay: the account has no
 * credentials), and `DELETE /accounts/{id}` deleting the identity at Anchor.
 */
import Anchorbrowser, { NotFoundError } from 'anchorbrowser';
import { describe, it } from 'vitest';
import { DEMO_ACCOUNTS } from '../../../demo/accounts.ts';
import { siteAdmin } from '../../../demo/sites/admin-client.ts';
import { ofType } from '../../support/records.ts';
import { call } from '../api/support/http.ts';
import { api, approveApi, submitCheckoutApi, tenantKey, useApiStack, waitForStatus } from './support.ts';

const stack = useApiStack();
const SHOPPER = DEMO_ACCOUNTS.shop.find((a) => a.username === 'shopper19@example.com');
if (!SHOPPER) throw new Error('demo shopper19 is missing');

/** The person on the hosted page: signs in, and returns where Anchor sends their browser. */
async function signInOnHostedPage(connectUrl: string, username: string, password: string): Promise<URL> {
  const token = new URL(connectUrl).searchParams.get('token') ?? '';
  const sent = await fetch(new URL(new URL(connectUrl).pathname, connectUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token, username, password }).toString(),
    redirect: 'manual',
  });
  if (sent.status !== 302) throw new Error(`the hosted page answered ${sent.status}`);
  return new URL(sent.headers.get('location') ?? '');
}

describe('Accounts connected through the hosted sign-in, on the real stack', () => {
  it('connects for the right tenant, refuses a replay, runs a job signed in by the identity, and deletes the identity on revoke', {
    timeout: 300_000,
  }, async ({ expect }) => {
    const s = stack();
    const started = await api(s, 'POST', '/accounts/connect', s.demoKey, {
      application: 'shop',
      label: 'Shop (19)',
    });
    expect(started.status, started.text).toBe(201);
    const { connectUrl, status } = started.json.connection as { connectUrl: string; status: string };
    expect(status).toBe('pending');
    expect((await fetch(connectUrl)).status).toBe(200);

    // A submitter key may not start a connection.
    const submitter = await tenantKey(s, 'demo', ['submitter']);
    expect(
      (await api(s, 'POST', '/accounts/connect', submitter, { application: 'shop', label: 'x' })).status,
    ).toBe(403);

    const back = await signInOnHostedPage(connectUrl, SHOPPER.username, SHOPPER.password);
    expect(back.origin).toBe(new URL(s.apiUrl).origin);
    const path = `${back.pathname}${back.search}`;
    const done = await call(s.apiUrl, 'GET', path); // no API key: Anchor's redirect carries none
    expect(done.status, done.text).toBe(200);
    const account = done.json.account as { accountId: string; identityId: string; connectedWith: string };
    expect(account.connectedWith).toBe('identity');
    expect(account.identityId).toBe(back.searchParams.get('identityId'));
    const listed = await api(s, 'GET', '/accounts', s.demoKey);
    expect(listed.json.accounts.map((a: { accountId: string }) => a.accountId)).toContain(account.accountId);

    const replay = await call(s.apiUrl, 'GET', path);
    expect(replay.status).toBe(409);
    expect(replay.json.error.code).toBe('connection_used');
    expect(replay.text).not.toContain(SHOPPER.password);
    // The person's browser, sent back again, gets a page saying why, not the API's JSON.
    const replayPage = await fetch(new URL(path, s.apiUrl), { headers: { accept: 'text/html' } });
    expect(replayPage.status).toBe(409);
    expect(replayPage.headers.get('content-type')).toMatch(/^text\/html/);
    expect(replayPage.headers.get('content-security-policy')).toContain("default-src 'none'");
    const replayHtml = await replayPage.text();
    expect(replayHtml).toContain('The account was not connected');
    expect(replayHtml).toContain('completed already');
    const after = await api(s, 'GET', '/accounts', s.demoKey);
    expect(after.json.accounts.length).toBe(listed.json.accounts.length);

    // A job on the account: the session arrives signed in, Belay signs in nowhere.
    const jobId = 'identity-checkout';
    await submitCheckoutApi(s, s.demoKey, jobId, account.accountId);
    await waitForStatus(s, 'demo', jobId, 'WAITING_APPROVAL', 240_000);
    await approveApi(s, s.demoKey, jobId, 'place-order');
    await waitForStatus(s, 'demo', jobId, 'SUCCEEDED', 120_000);
    const { entries } = await s.ledger.readJob('demo', jobId);
    const opened = ofType(entries, 'session-opened');
    expect(opened.length).toBeGreaterThan(0);
    for (const o of opened) expect(o.identityId).toBe(account.identityId);
    expect(ofType(entries, 'reauth')).toEqual([]);

    const sdk = new Anchorbrowser({
      apiKey: s.stack.anchor.apiKey,
      baseURL: s.stack.anchor.baseUrl,
      maxRetries: 0,
    });

    // The identity's sign-in stops holding (its password changed at the site): the session
    // arrives signed out, and the job says so, not that credentials are missing.
    await sdk.identities.update(account.identityId, {
      credentials: [{ type: 'username_password', username: SHOPPER.username, password: 'no-longer-valid' }],
    });
    await siteAdmin(s.stack.sites.shop.baseUrl, s.stack.sites.adminToken).expireSessions();
    const signedOut = 'identity-signed-out';
    await submitCheckoutApi(s, s.demoKey, signedOut, account.accountId);
    const failed = await waitForStatus(s, 'demo', signedOut, 'FAILED', 240_000);
    expect(failed.failure?.reason).toBe('identity-signed-out');
    expect(failed.failure?.message).toContain('connect the account again');
    expect(JSON.stringify(failed)).not.toContain('no-longer-valid');

    // Revoking deletes the identity at Anchor.
    const deleted = await api(s, 'DELETE', `/accounts/${account.accountId}`, s.demoKey);
    expect(deleted.status).toBe(200);
    await expect(sdk.identities.retrieve(account.identityId)).rejects.toBeInstanceOf(NotFoundError);
  });
});
