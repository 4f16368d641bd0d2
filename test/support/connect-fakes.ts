/**
 * In-memory stand-ins for what starting a hosted sign-in touches (Anchor's applications and
 * tokens, the pending connections), recording every call, for unit tests of the routes that
 * start one. The real ones run against the local Anchor service and DynamoDB Local in
 * test/integration/accounts/.
 */
import type { AnchorIdentities } from '../../lambdas/lib/accounts/anchor-identities.ts';
import type { ConnectionStore, PendingConnection } from '../../lambdas/lib/accounts/connections.ts';

/** The hosted page's address in these fakes. */
export const FAKE_CONNECT_PAGE = 'https://connect.anchor.example/identity/create';

export interface FakeAnchor extends AnchorIdentities {
  /** Every call that reached Anchor, as `method(args)` text. */
  calls: string[];
}

export function fakeAnchor(): FakeAnchor {
  const calls: string[] = [];
  let tokens = 0;
  return {
    calls,
    async applicationFor(app) {
      calls.push(`applicationFor(${app.name}, ${app.baseUrl})`);
      return `anchor-app-${app.name}`;
    },
    async createToken(applicationId, callbackUrl) {
      calls.push(`createToken(${applicationId}, ${callbackUrl})`);
      tokens += 1;
      return {
        token: `identity-token-${tokens}`,
        tokenHash: `hash-${tokens}`,
        expiresAt: new Date('2026-12-01T12:15:00.000Z'),
      };
    },
    connectPageUrl(token) {
      const url = new URL(FAKE_CONNECT_PAGE);
      url.searchParams.set('token', token);
      return url.toString();
    },
    async findIdentity() {
      throw new Error('not used by these tests');
    },
    async tagIdentity() {
      throw new Error('not used by these tests');
    },
    async deleteIdentity() {
      throw new Error('not used by these tests');
    },
  };
}

export interface FakeConnections extends ConnectionStore {
  /** The connections created, by callback key. */
  created: Map<string, PendingConnection>;
}

export function fakeConnections(): FakeConnections {
  const created = new Map<string, PendingConnection>();
  return {
    created,
    async create(callbackKey, input) {
      const connection: PendingConnection = {
        ...input,
        connectionId: `conn_${created.size + 1}`,
        createdAt: '2026-12-01T12:00:00.000Z',
        status: 'pending',
      };
      created.set(callbackKey, connection);
      return connection;
    },
    async get(callbackKey) {
      return created.get(callbackKey) ?? null;
    },
    completion() {
      throw new Error('not used by these tests');
    },
  };
}
