/**
 * `POST /accounts` with an Anchor identity id: Anchor is asked before anything is written. An
 * identity it does not know is 422, one tagged for another tenant 409, a deployment with no Anchor
 * account 422; in each case neither the account registry nor the secret store is touched.
 */
import { describe, expect, it } from 'vitest';
import type { AnchorIdentities } from '../../../lambdas/lib/accounts/anchor-identities.ts';
import type { AnchorIdentity } from '../../../lambdas/lib/accounts/identity-binding.ts';
import { connectAccount } from '../../../lambdas/lib/api/accounts/manage.ts';
import type { ApiDeps } from '../../../lambdas/lib/api/deps.ts';
import { ApiError } from '../../../lambdas/lib/api/errors.ts';
import type { Principal } from '../../../lambdas/lib/auth/api-keys.ts';
import { ConfigError } from '../../../lambdas/lib/config.ts';

const ADMIN: Principal = { tenantId: 'acme', roles: ['admin'], keyId: 'blk_admin000001' };
const BODY = { application: 'crm', label: 'CRM', anchorIdentityId: 'ident-1' };

function deps(found: AnchorIdentity | undefined | Error) {
  const written: string[] = [];
  const anchor: Partial<AnchorIdentities> = {
    applicationFor: async ({ name }) => {
      if (found instanceof Error) throw found;
      return `anchor-app-${name}`;
    },
    findIdentity: async (applicationId, identityId) => {
      expect(applicationId).toBe('anchor-app-crm');
      return found instanceof Error || found?.id !== identityId ? undefined : found;
    },
  };
  const d = {
    engine: { applications: { crm: { baseUrl: 'http://127.0.0.1:9002', allowedDomains: ['127.0.0.1'] } } },
    anchor,
    accounts: {
      create: async (input: { identityId?: string }) => {
        written.push(`account ${input.identityId}`);
        return { ...input, accountId: 'acct_1', status: 'connected' };
      },
    },
    credentials: {
      putCredentials: async () => written.push('credentials'),
      deleteCredentials: async () => written.push('credentials deleted'),
    },
  } as unknown as ApiDeps;
  return { d, written };
}

async function refusal(p: Promise<unknown>): Promise<{ status: number; code: string }> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return { status: (err as ApiError).statusCode, code: (err as ApiError).code };
}

describe('Function: connectAccount (an Anchor identity by id)', () => {
  it('connects an identity Anchor knows for the application, untagged or tagged for this tenant', async () => {
    for (const metadata of [{}, { belayTenant: 'acme' }]) {
      const { d, written } = deps({ id: 'ident-1', metadata });
      await connectAccount(d, ADMIN, BODY);
      expect(written).toEqual(['account ident-1']);
    }
  });

  it.each([
    ['unknown to Anchor (or of another application)', undefined, 422, 'identity_unknown'],
    [
      'tagged for another tenant',
      { id: 'ident-1', metadata: { belayTenant: 'globex' } },
      409,
      'identity_unavailable',
    ],
    [
      'asked of a deployment with no Anchor account',
      new ConfigError('ANCHORBROWSER_API_KEY', 'is not set'),
      422,
      'anchor_not_configured',
    ],
  ] as const)('refuses an identity %s, writing nothing', async (_what, found, status, code) => {
    const { d, written } = deps(found);
    expect(await refusal(connectAccount(d, ADMIN, BODY))).toEqual({ status, code });
    expect(written).toEqual([]);
  });
});
