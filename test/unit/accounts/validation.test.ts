/**
 * What `POST /accounts` refuses, and what it leaves behind when a write fails: nothing. The
 * handler's core runs against a recording registry and secret store (the HTTP path, with
 * DynamoDB and the file store, is exercised in accounts.test.ts on the real stack).
 */
import { describe, expect, it } from 'vitest';
import type { WritableSecretStore } from '../../../lambdas/lib/accounts/file-secret-store.ts';
import type { Account } from '../../../lambdas/lib/accounts/types.ts';
import { connectAccount } from '../../../lambdas/lib/api/accounts/manage.ts';
import type { ApiDeps } from '../../../lambdas/lib/api/deps.ts';
import { ApiError, errorBody } from '../../../lambdas/lib/api/errors.ts';
import type { Principal } from '../../../lambdas/lib/auth/api-keys.ts';

const ADMIN: Principal = { tenantId: 'acme', roles: ['admin'], keyId: 'key_admin' };

function world(fail: { put?: boolean; create?: boolean } = {}) {
  const stored = new Map<string, unknown>();
  const created: Account[] = [];
  const credentials: WritableSecretStore = {
    getCredentials: async () => {
      throw new Error('not used');
    },
    putCredentials: async (tenantId, accountId, c) => {
      if (fail.put) throw new Error('secret store down');
      stored.set(`${tenantId}/${accountId}`, c);
    },
    deleteCredentials: async (tenantId, accountId) => {
      stored.delete(`${tenantId}/${accountId}`);
    },
  };
  const deps = {
    engine: { applications: { shop: { baseUrl: 'http://127.0.0.1:1', allowedDomains: ['127.0.0.1'] } } },
    accounts: {
      get: async () => null,
      create: async (input: Omit<Account, 'profileName' | 'status' | 'createdAt'>) => {
        if (fail.create) throw new Error('table down');
        const account = { ...input, profileName: 'p', status: 'connected', createdAt: 'now' } as Account;
        created.push(account);
        return account;
      },
    },
    credentials,
  } as unknown as ApiDeps;
  return { deps, stored, created };
}

describe('Function: connectAccount', () => {
  it.each([
    [
      'an application the deployment does not know',
      { application: 'bank', label: 'x', anchorIdentityId: 'i1' },
      422,
      'application',
    ],
    [
      'credentials and an identity',
      {
        application: 'shop',
        label: 'x',
        anchorIdentityId: 'i1',
        credentials: { username: 'u', password: 'hunter2-secret' },
      },
      400,
      'credentials',
    ],
    ['neither credentials nor an identity', { application: 'shop', label: 'x' }, 400, 'credentials'],
    [
      'a field the API does not have',
      { application: 'shop', label: 'x', anchorIdentityId: 'i1', tenantId: 'rival' },
      400,
      'tenantId',
    ],
    [
      'a password that is not a string',
      { application: 'shop', label: 'x', credentials: { username: 'u', password: 42 } },
      400,
      'credentials.password',
    ],
    [
      'a TOTP secret that is not base32',
      {
        application: 'shop',
        label: 'x',
        credentials: { username: 'u', password: 'hunter2-secret', totpSecret: 'not base32!' },
      },
      400,
      'credentials.totpSecret',
    ],
  ])(
    'refuses %s, naming the field, echoing no secret, storing nothing',
    async (_name, body, status, field) => {
      const { deps, stored, created } = world();
      const err = await connectAccount(deps, ADMIN, body).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      const response = errorBody(err, { tenantId: ADMIN.tenantId });
      expect(response.statusCode).toBe(status);
      expect((response.body.error.details as { field: string }[]).map((d) => d.field)).toContain(field);
      expect(JSON.stringify(response.body)).not.toContain('hunter2-secret');
      expect(stored.size).toBe(0);
      expect(created).toEqual([]);
    },
  );

  it('stores credentials first, then the mapping; a failed mapping takes the credentials back', async () => {
    const ok = world();
    const account = await connectAccount(ok.deps, ADMIN, {
      application: 'shop',
      label: 'Shop',
      credentials: { username: 'u', password: 'hunter2-secret' },
    });
    expect(ok.stored.get(`acme/${account.accountId}`)).toEqual({ username: 'u', password: 'hunter2-secret' });
    expect(ok.created[0]).toMatchObject({
      tenantId: 'acme',
      application: 'shop',
      connectedWith: 'credentials',
    });
    expect(JSON.stringify(ok.created)).not.toContain('hunter2-secret');

    const broken = world({ create: true });
    await expect(
      connectAccount(broken.deps, ADMIN, {
        application: 'shop',
        label: 'S',
        credentials: { username: 'u', password: 'p4ssword' },
      }),
    ).rejects.toThrow('table down');
    expect(broken.stored.size).toBe(0);

    const noStore = world({ put: true });
    await expect(
      connectAccount(noStore.deps, ADMIN, {
        application: 'shop',
        label: 'S',
        credentials: { username: 'u', password: 'p4ssword' },
      }),
    ).rejects.toThrow('secret store down');
    expect(noStore.created).toEqual([]);
  });
});
