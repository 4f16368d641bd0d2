/** Which Anchor identity a tenant may map to an account: the pure rules, no network. */
import { describe, expect, it } from 'vitest';
import {
  type AnchorIdentity,
  connectionIdentityRefusal,
  namedIdentityRefusal,
} from '../../../lambdas/lib/accounts/identity-binding.ts';

const connection = {
  tokenHash: 'hash-of-this-token',
  createdAt: '2026-12-01T12:00:00.000Z',
  tokenExpiresAt: '2026-12-01T12:15:00.000Z',
};
const made = (patch: Partial<AnchorIdentity> = {}): AnchorIdentity => ({
  id: 'ident-1',
  createdAt: '2026-12-01T12:03:00.000Z',
  tokenHash: 'hash-of-this-token',
  metadata: {},
  ...patch,
});

describe('Function: connectionIdentityRefusal', () => {
  it("accepts the identity this connection's sign-in created", () => {
    expect(connectionIdentityRefusal(made(), connection)).toBeUndefined();
    // Where the provider does not say which token made it, the connection's window decides.
    expect(connectionIdentityRefusal(made({ tokenHash: undefined }), connection)).toBeUndefined();
  });

  it.each([
    ['unknown to the application', undefined, 'not-found'],
    ["another connection's (another token)", made({ tokenHash: 'hash-of-another-token' }), 'other-token'],
    [
      'older than the connection',
      made({ tokenHash: undefined, createdAt: '2026-12-01T11:00:00.000Z' }),
      'outside-window',
    ],
    [
      'made after the token expired',
      made({ tokenHash: undefined, createdAt: '2026-12-01T13:00:00.000Z' }),
      'outside-window',
    ],
    ['tagged for an account already', made({ metadata: { belayAccount: 'acct_1' } }), 'claimed'],
  ] as const)('refuses an identity %s', (_what, identity, refusal) => {
    expect(connectionIdentityRefusal(identity, connection)).toBe(refusal);
  });
});

describe('Function: namedIdentityRefusal', () => {
  it('accepts an identity Anchor knows, untagged or tagged for this tenant', () => {
    expect(namedIdentityRefusal(made(), 'acme')).toBeUndefined();
    expect(namedIdentityRefusal(made({ metadata: { belayTenant: 'acme' } }), 'acme')).toBeUndefined();
  });

  it('refuses one Anchor does not know, and one tagged for another tenant', () => {
    expect(namedIdentityRefusal(undefined, 'acme')).toBe('unknown');
    expect(namedIdentityRefusal(made({ metadata: { belayTenant: 'globex' } }), 'acme')).toBe('other-tenant');
  });
});
