/**
 * The pure parts of connecting an account through Anchor's hosted sign-in: which callbacks are
 * refused and why, the HTTP answer each refusal gets, the identity token in either of the shapes
 * Anchor's sources give, and the local service's token rules. The whole flow, with the real SDK,
 * DynamoDB Local and the local Anchor service, is in test/integration/accounts/connect.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { anchorApplicationName, readIdentityToken } from '../../../lambdas/lib/accounts/anchor-identities.ts';
import {
  CALLBACK_KEY,
  callbackRefusal,
  newCallbackKey,
  type PendingConnection,
} from '../../../lambdas/lib/accounts/connections.ts';
import {
  type ConnectDeps,
  hostedSignInApplications,
  refusalError,
  startConnection,
} from '../../../lambdas/lib/api/accounts/connect.ts';
import { ApiError } from '../../../lambdas/lib/api/errors.ts';
import type { Principal } from '../../../lambdas/lib/auth/api-keys.ts';
import { tokenHash, tokenRefusal } from '../../../local/anchor/identities.ts';
import { FAKE_CONNECT_PAGE, fakeAnchor, fakeConnections } from '../../support/connect-fakes.ts';

const NOW = new Date('2026-12-01T12:00:00.000Z');

const pending = (patch: Partial<PendingConnection> = {}): PendingConnection => ({
  connectionId: 'conn_1',
  tenantId: 'acme',
  application: 'shop',
  label: 'Shop',
  anchorApplicationId: 'app-1',
  tokenHash: 'h',
  tokenExpiresAt: '2026-12-01T12:10:00.000Z',
  createdAt: '2026-12-01T11:55:00.000Z',
  status: 'pending',
  ...patch,
});

const ADMIN: Principal = { tenantId: 'acme', roles: ['admin'], keyId: 'blk_admin0000001' };

function connectDeps() {
  const anchor = fakeAnchor();
  const connections = fakeConnections();
  const deps = {
    anchor,
    connections,
    accounts: {},
    engine: {
      applications: {
        shop: { baseUrl: 'http://127.0.0.1:9001', allowedDomains: ['127.0.0.1'] },
        crm: { baseUrl: 'http://127.0.0.1:9002', allowedDomains: ['127.0.0.1'] },
      },
      clock: () => NOW,
    },
  } as unknown as ConnectDeps;
  return { deps, anchor, connections };
}

describe('Function: startConnection', () => {
  it("asks Anchor for a token with a callback to Belay, records the connection for the caller's tenant, and answers Anchor's page", async () => {
    const { deps, anchor, connections } = connectDeps();
    const { connection, connectUrl } = await startConnection(
      deps,
      ADMIN,
      { application: 'shop', label: 'Shop (Ada)' },
      'https://api.example/',
    );
    expect(connection).toMatchObject({ tenantId: 'acme', application: 'shop', label: 'Shop (Ada)' });
    expect(connectUrl).toBe(`${FAKE_CONNECT_PAGE}?token=identity-token-1`);
    const [callbackKey] = [...connections.created.keys()];
    expect(callbackKey).toMatch(CALLBACK_KEY);
    expect(anchor.calls).toEqual([
      'applicationFor(shop, http://127.0.0.1:9001)',
      `createToken(anchor-app-shop, https://api.example/accounts/connect/callback/${callbackKey})`,
    ]);
  });

  it.each(['billing', 'constructor', '__proto__', 'toString'])(
    'refuses %s, no application of this deployment, before asking Anchor anything',
    async (application) => {
      const { deps, anchor, connections } = connectDeps();
      await expect(
        startConnection(deps, ADMIN, { application, label: 'x' }, 'https://api.example'),
      ).rejects.toMatchObject({ statusCode: 422, code: 'unknown_application' });
      expect(anchor.calls).toEqual([]);
      expect(connections.created.size).toBe(0);
    },
  );

  it('offers every configured application, by name', () => {
    expect(hostedSignInApplications(connectDeps().deps)).toEqual(['crm', 'shop']);
  });
});

describe('Function: callbackRefusal', () => {
  it.each([
    ['no connection', null, 'connection-unknown'],
    ['a completed connection (replay)', pending({ status: 'completed' }), 'connection-used'],
    [
      'an expired token (late)',
      pending({ tokenExpiresAt: '2026-12-01T11:59:59.999Z' }),
      'connection-expired',
    ],
    ['a token expiring this instant', pending({ tokenExpiresAt: NOW.toISOString() }), 'connection-expired'],
    [
      'a used connection, also expired: used wins',
      pending({ status: 'completed', tokenExpiresAt: '2026-01-01T00:00:00Z' }),
      'connection-used',
    ],
  ])('refuses %s', (_what, connection, refusal) => {
    expect(callbackRefusal(connection, NOW)).toBe(refusal);
  });

  it('accepts a pending connection before its token expires', () => {
    expect(callbackRefusal(pending(), NOW)).toBeUndefined();
  });
});

describe('Function: refusalError', () => {
  it.each([
    ['connection-unknown', 404, 'not_found'],
    ['connection-used', 409, 'connection_used'],
    ['connection-expired', 410, 'connection_expired'],
    ['identity-not-of-connection', 422, 'identity_not_of_connection'],
  ] as const)('answers %s with %i %s', (refusal, status, code) => {
    const err = refusalError(refusal);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).statusCode).toBe(status);
    expect((err as ApiError).code).toBe(code);
  });
});

describe('Function: newCallbackKey', () => {
  it('makes 256-bit base64url keys that the callback route accepts, each different', () => {
    const keys = new Set(Array.from({ length: 50 }, () => newCallbackKey()));
    expect(keys.size).toBe(50);
    for (const key of keys) expect(key).toMatch(CALLBACK_KEY);
    expect(CALLBACK_KEY.test(`${newCallbackKey()}x`)).toBe(false);
  });
});

describe('Function: readIdentityToken', () => {
  it("reads the SDK's shape ({ data: { token, expires_at, token_hash } })", () => {
    const t = readIdentityToken(
      { data: { token: 't1', expires_at: '2026-12-01T12:15:00Z', token_hash: 'h1' } },
      NOW,
    );
    expect(t).toEqual({ token: 't1', tokenHash: 'h1', expiresAt: new Date('2026-12-01T12:15:00Z') });
  });

  it("reads the newer spec's flat shape ({ token, expiresAt, tokenHash })", () => {
    const t = readIdentityToken({ token: 't2', expiresAt: '2026-12-01T12:05:00Z', tokenHash: 'h2' }, NOW);
    expect(t).toEqual({ token: 't2', tokenHash: 'h2', expiresAt: new Date('2026-12-01T12:05:00Z') });
  });

  it('never trusts an expiry past the documented 15 minutes, and assumes them when none is given', () => {
    const late = readIdentityToken({ token: 't', expiresAt: '2027-01-01T00:00:00Z' }, NOW);
    expect(late.expiresAt).toEqual(new Date('2026-12-01T12:15:00Z'));
    expect(readIdentityToken({ token: 't' }, NOW).expiresAt).toEqual(new Date('2026-12-01T12:15:00Z'));
  });

  it.each([[{}], [null], [{ data: {} }], [{ token: '' }]])(
    'refuses an answer without a token: %j',
    (answer) => {
      expect(() => readIdentityToken(answer, NOW)).toThrow(/without a token/);
    },
  );
});

describe('Function: anchorApplicationName', () => {
  it("names Anchor's application after Belay's", () => {
    expect(anchorApplicationName('shop')).toBe('belay-shop');
  });
});

describe('Function: tokenRefusal (local Anchor service)', () => {
  const token = {
    tokenHash: tokenHash('x'),
    applicationId: 'a',
    callbackUrl: 'https://b/c',
    expiresAt: '2026-12-01T12:15:00Z',
  };
  it.each([
    ['unknown', undefined, /not valid/],
    ['used', { ...token, usedAt: '2026-12-01T11:59:00Z' }, /used already/],
    ['expired', { ...token, expiresAt: '2026-12-01T11:00:00Z' }, /expired/],
  ])('refuses an %s token', (_what, record, message) => {
    expect(tokenRefusal(record, NOW)).toMatch(message);
  });

  it('accepts an unused token before it expires, and stores tokens only as their SHA-256', () => {
    expect(tokenRefusal(token, NOW)).toBeUndefined();
    expect(tokenHash('x')).toMatch(/^[0-9a-f]{64}$/);
  });
});
