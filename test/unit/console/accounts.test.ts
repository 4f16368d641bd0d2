/**
 * The console's accounts page and its "Connect an account" action, through the API's handler
 * with dependencies in memory: what the page shows and to whom, the CSRF token and the admin
 * role the action needs, where it sends the browser, and bad input answered without a change
 * and without its text. The browser flow on the real stack is in test/integration/console/.
 */
import { describe, expect, it } from 'vitest';
import type { Account } from '../../../lambdas/lib/accounts/types.ts';
import { createApiHandler } from '../../../lambdas/lib/api/app.ts';
import { accountsBody } from '../../../lambdas/lib/api/console/accounts.ts';
import type { ConsoleSession } from '../../../lambdas/lib/api/console/sessions.ts';
import type { ApiDeps } from '../../../lambdas/lib/api/deps.ts';
import type { HttpApiEvent } from '../../../lambdas/lib/api/events.ts';
import { unlimited } from '../../../lambdas/lib/api/rate-limit.ts';
import type { Principal } from '../../../lambdas/lib/auth/api-keys.ts';
import { unavailableReceiptSigner } from '../../../lambdas/lib/receipts/runtime.ts';
import { FAKE_CONNECT_PAGE, fakeAnchor, fakeConnections } from '../../support/connect-fakes.ts';

const HOSTILE = '"><img src=x onerror="window.__xss=1"><script>window.__xss=2</script>';
const ADMIN: Principal = { tenantId: 'acme', roles: ['admin'], keyId: 'blk_admin0000001' };
const SUBMITTER: Principal = { tenantId: 'acme', roles: ['submitter'], keyId: 'blk_submitter001' };
const CSRF = 'csrf-token-of-the-page';
/** Text only a request holds: a page that quotes the request shows it (escaped or not). */
const SENT = 'sent<i>by-the-request</i>';

const account = (patch: Partial<Account>): Account => ({
  tenantId: 'acme',
  accountId: 'acct_1',
  application: 'shop',
  label: 'Shop (Ada)',
  profileName: 'acme--shop--acct_1',
  status: 'connected',
  connectedWith: 'credentials',
  createdAt: '2026-12-01T10:00:00.000Z',
  ...patch,
});

const ACCOUNTS: Account[] = [
  account({}),
  account({
    accountId: 'acct_2',
    label: HOSTILE,
    identityId: 'identity-of-acct-2',
    connectedWith: 'identity',
    status: 'revoked',
    createdAt: '2026-12-01T11:00:00.000Z',
    revokedAt: '2026-12-01T12:00:00.000Z',
  }),
  // Another tenant's account: the registry is asked for the session's tenant only.
  account({ tenantId: 'other', accountId: 'acct_other', label: 'Other tenant' }),
];

/** The API's dependencies in memory: two sessions (admin, submitter), the accounts above, fake Anchor. */
function consoleDeps() {
  const anchor = fakeAnchor();
  const connections = fakeConnections();
  const asked: string[] = [];
  const sessions: Record<string, ConsoleSession> = {
    'admin-cookie': { principal: ADMIN, csrf: CSRF, expiresAt: '2026-12-01T14:00:00.000Z' },
    'submitter-cookie': { principal: SUBMITTER, csrf: CSRF, expiresAt: '2026-12-01T14:00:00.000Z' },
  };
  const deps = {
    engine: {
      applications: {
        shop: { baseUrl: 'http://127.0.0.1:9001', allowedDomains: ['127.0.0.1'] },
        crm: { baseUrl: 'http://127.0.0.1:9002', allowedDomains: ['127.0.0.1'] },
      },
      clock: () => new Date('2026-12-01T12:00:00.000Z'),
      log: { error: () => undefined, warn: () => undefined },
    },
    accounts: {
      async list(tenantId: string) {
        asked.push(tenantId);
        // A stray field on an item stays off the page: it shows the API's view of an account.
        return ACCOUNTS.filter((a) => a.tenantId === tenantId).map((a) => ({ ...a, password: 'hunter2' }));
      },
    },
    consoleSessions: { verify: async (token: string | undefined) => sessions[token ?? ''] ?? null },
    anchor,
    connections,
    rateLimiter: unlimited,
    anonymousRateLimiter: unlimited,
    receipts: unavailableReceiptSigner(),
    maxBodyBytes: 64 * 1024,
    mcpAnswerTenants: new Set(),
    baseUrl: 'https://api.example',
  } as unknown as ApiDeps;
  return { deps, anchor, connections, asked };
}

function event(
  method: 'GET' | 'POST',
  path: string,
  options: { cookie?: string; form?: Record<string, string>; json?: unknown; csrfHeader?: string } = {},
): HttpApiEvent {
  const headers: Record<string, string> = { host: 'api.example' };
  if (options.cookie) headers.cookie = `belay_console=${options.cookie}`;
  if (options.csrfHeader) headers['x-belay-csrf'] = options.csrfHeader;
  let body: string | undefined;
  if (options.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  } else if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers,
    ...(body === undefined ? {} : { body }),
    isBase64Encoded: false,
    requestContext: {
      requestId: 'r1',
      routeKey: '$default',
      stage: '$default',
      timeEpoch: 0,
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 't' },
    },
  };
}

const invoke = (deps: ApiDeps, e: HttpApiEvent) =>
  createApiHandler(async () => deps)(e, { awsRequestId: 'x' } as never) as Promise<{
    statusCode: number;
    body: string;
    headers: Record<string, string>;
  }>;

const connect = (cookie: string, form: Record<string, string>) =>
  event('POST', '/console/api/accounts/connect', { cookie, form });

describe('Function: accountsBody', () => {
  const views = ACCOUNTS.slice(0, 2).map((a) => ({
    accountId: a.accountId,
    application: a.application,
    label: a.label,
    status: a.status,
    profile: a.profileName,
    ...(a.connectedWith ? { connectedWith: a.connectedWith } : {}),
    domains: [],
    createdAt: a.createdAt,
    ...(a.revokedAt ? { revokedAt: a.revokedAt } : {}),
  }));

  it('lists each account with its label escaped, how it was connected and its status', () => {
    const page = accountsBody({
      accounts: views,
      applications: ['shop'],
      principal: ADMIN,
      csrf: CSRF,
    }).value;
    expect(page).toContain('&quot;&gt;&lt;img src=x onerror=&quot;window.__xss=1&quot;&gt;&lt;script&gt;');
    expect(page).not.toContain('<img src=x');
    expect(page).not.toContain('<script>');
    expect(page).toContain('<td>Anchor identity</td>');
    expect(page).toContain('<td>credentials</td>');
    expect(page).toContain('status-revoked');
    expect(page).toContain('<code>acct_2</code>');
  });

  it('gives an admin the connect form with the configured applications and the CSRF token', () => {
    const page = accountsBody({
      accounts: [],
      applications: ['crm', 'shop'],
      principal: ADMIN,
      csrf: CSRF,
      error: `Choose one of the applications in the list. ${HOSTILE}`,
    }).value;
    expect(page).toContain('No accounts yet.');
    expect(page).toContain('action="/console/api/accounts/connect"');
    expect(page).toContain(`<input type="hidden" name="csrf" value="${CSRF}">`);
    expect(page).toContain('<option value="crm">crm</option>');
    expect(page).toContain('<option value="shop">shop</option>');
    expect(page).toMatch(
      /<p class="error" role="alert">Choose one of the applications in the list\. &quot;&gt;/,
    );
  });

  it('gives a key without the admin role the list and no form', () => {
    const page = accountsBody({
      accounts: views,
      applications: ['shop'],
      principal: SUBMITTER,
      csrf: CSRF,
    }).value;
    expect(page).toContain('<code>acct_1</code>');
    expect(page).not.toContain('<form');
    expect(page).not.toContain(CSRF);
    expect(page).toContain('needs the admin role; your key has submitter');
  });
});

describe('Route: GET /console/accounts', () => {
  it("shows the session's tenant's accounts only, under the console's headers, and no credential", async () => {
    const { deps, asked } = consoleDeps();
    const res = await invoke(deps, event('GET', '/console/accounts', { cookie: 'admin-cookie' }));
    expect(res.statusCode).toBe(200);
    expect(asked).toEqual(['acme']);
    expect(res.body).toContain('<code>acct_1</code>');
    expect(res.body).toContain('<code>acct_2</code>');
    expect(res.body).not.toContain('acct_other');
    expect(res.body).not.toContain('hunter2');
    expect(res.body).toMatch(/<a href="\/console\/accounts" aria-current="page">Accounts<\/a>/);
    expect(res.headers['X-Frame-Options']).toBe('DENY');
    expect(res.headers['Cache-Control']).toBe('no-store');
    // The admin's form may go on to the hosted sign-in's origin, and to nothing else.
    const csp = res.headers['Content-Security-Policy'];
    expect(csp).toContain("form-action 'self' https://connect.anchor.example;");
    expect(csp).toContain("script-src 'self'");
  });

  it('refuses a submitter as GET /accounts does (403, no account listed, no Accounts link), and sends a visitor without a session to sign in', async () => {
    const { deps, asked } = consoleDeps();
    const res = await invoke(deps, event('GET', '/console/accounts', { cookie: 'submitter-cookie' }));
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('Not allowed');
    expect(res.body).not.toContain('acct_1');
    expect(res.body).not.toContain('href="/console/accounts"');
    expect(asked).toEqual([]);
    expect(res.body).not.toContain('action="/console/api/accounts/connect"');
    expect(res.headers['Content-Security-Policy']).toContain("form-action 'self';");
    const anonymous = await invoke(deps, event('GET', '/console/accounts'));
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers.Location).toBe('/console/sign-in');
  });
});

describe('Route: POST /console/api/accounts/connect', () => {
  it('sends the plain form on to the hosted sign-in (303) after starting the connection for the tenant', async () => {
    const { deps, anchor, connections } = consoleDeps();
    const res = await invoke(
      deps,
      connect('admin-cookie', { csrf: CSRF, application: 'shop', label: 'Shop (Ada)' }),
    );
    expect(res.statusCode).toBe(303);
    expect(res.headers.Location).toBe(`${FAKE_CONNECT_PAGE}?token=identity-token-1`);
    expect(res.headers['Content-Security-Policy']).toContain("default-src 'none'");
    expect(connections.created.size).toBe(1);
    const [callbackKey, connection] = [...connections.created.entries()][0] ?? [];
    expect(connection).toMatchObject({ tenantId: 'acme', application: 'shop', label: 'Shop (Ada)' });
    expect(anchor.calls).toContain(
      `createToken(anchor-app-shop, https://api.example/accounts/connect/callback/${callbackKey})`,
    );
  });

  it("answers the script with the API's JSON (201), connectUrl included", async () => {
    const { deps } = consoleDeps();
    const res = await invoke(
      deps,
      event('POST', '/console/api/accounts/connect', {
        cookie: 'admin-cookie',
        csrfHeader: CSRF,
        json: { application: 'crm', label: 'CRM (Ada)' },
      }),
    );
    expect(res.statusCode).toBe(201);
    expect(JSON.parse(res.body)).toEqual({
      connection: {
        connectionId: 'conn_1',
        application: 'crm',
        label: 'CRM (Ada)',
        status: 'pending',
        connectUrl: `${FAKE_CONNECT_PAGE}?token=identity-token-1`,
        expiresAt: '2026-12-01T12:15:00.000Z',
      },
    });
  });

  it.each([
    ['no CSRF token', 'admin-cookie', { application: 'shop', label: 'x' }, 403, 'csrf'],
    ['a stale CSRF token', 'admin-cookie', { csrf: 'other', application: 'shop', label: 'x' }, 403, 'csrf'],
    [
      'a key without the admin role',
      'submitter-cookie',
      { csrf: CSRF, application: 'shop', label: 'x' },
      403,
      'forbidden',
    ],
    ['no session', 'ended-cookie', { csrf: CSRF, application: 'shop', label: 'x' }, 401, 'unauthorized'],
  ])('refuses %s and starts nothing', async (_what, cookie, form, status, code) => {
    const { deps, anchor, connections } = consoleDeps();
    const res = await invoke(deps, connect(cookie, form));
    expect(res.statusCode).toBe(status);
    expect(JSON.parse(res.body).error.code).toBe(code);
    expect(anchor.calls).toEqual([]);
    expect(connections.created.size).toBe(0);
  });

  it.each([
    ['no label', { application: 'shop' }, 400, 'Give the account a label'],
    ['a blank label', { application: 'shop', label: '   ' }, 400, 'Give the account a label'],
    ['no application', { label: SENT }, 400, 'Choose an application.'],
    [
      'an unknown application',
      { application: SENT, label: SENT },
      422,
      'Choose one of the applications in the list.',
    ],
    [
      'an application name too long',
      { application: SENT.repeat(10), label: SENT },
      400,
      'Choose an application.',
    ],
    ['a field the form has not', { application: 'shop', label: SENT, [SENT]: SENT }, 400, 'reload the page'],
  ])(
    'answers a form with %s with the page again, saying what to fix, changing nothing and quoting nothing',
    async (_what, fields, status, message) => {
      const { deps, anchor, connections } = consoleDeps();
      const res = await invoke(deps, connect('admin-cookie', { csrf: CSRF, ...fields }));
      expect(res.statusCode).toBe(status);
      expect(res.headers['Content-Type']).toMatch(/^text\/html/);
      expect(res.headers['Content-Security-Policy']).toContain(
        "form-action 'self' https://connect.anchor.example;",
      );
      expect(res.body).toMatch(
        new RegExp(`<p class="error" role="alert">[^<]*${message.replace('.', '\\.')}`),
      );
      expect(res.body).toContain('<code>acct_1</code>');
      expect(res.body).not.toContain('by-the-request');
      expect(anchor.calls).toEqual([]);
      expect(connections.created.size).toBe(0);
    },
  );

  it("answers the script's bad input with the API's status and the console's words, not the request's", async () => {
    const { deps, connections } = consoleDeps();
    const res = await invoke(
      deps,
      event('POST', '/console/api/accounts/connect', {
        cookie: 'admin-cookie',
        csrfHeader: CSRF,
        json: { application: SENT, label: 'x' },
      }),
    );
    expect(res.statusCode).toBe(422);
    expect(JSON.parse(res.body).error).toMatchObject({
      code: 'unknown_application',
      message: 'Choose one of the applications in the list.',
    });
    expect(res.body).not.toContain('by-the-request');
    expect(connections.created.size).toBe(0);
  });
});
