import type { ApiKeyRecord } from '../../auth/api-keys.ts';
import { ApiKeyNotFoundError } from '../../auth/errors.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { bodyOf, ok, type Route } from '../route.ts';
import { fieldIssues } from '../schemas.ts';
import { CreateKeyBodySchema } from './schemas.ts';

/** The API-key routes (role admin): create, list and revoke the caller's tenant's keys. */

function view(k: ApiKeyRecord): Record<string, unknown> {
  return {
    keyId: k.keyId,
    roles: k.roles,
    ...(k.label ? { label: k.label } : {}),
    createdAt: k.createdAt,
    ...(k.revokedAt ? { revokedAt: k.revokedAt } : {}),
  };
}

export const KEY_ROUTES: readonly Route[] = [
  {
    method: 'POST',
    path: '/keys',
    auth: true,
    roles: ['admin'],
    async handle(req) {
      const parsed = CreateKeyBodySchema.safeParse(bodyOf(req));
      if (!parsed.success) {
        throw new BadRequestError('invalid_request', 'the key request is not valid: see details', {
          details: fieldIssues(parsed.error),
        });
      }
      const created = await req.deps.keys.create(req.principal.tenantId, parsed.data.roles, {
        ...(parsed.data.label ? { label: parsed.data.label } : {}),
      });
      return ok({ key: view(created), apiKey: created.apiKey }, 201);
    },
  },
  {
    method: 'GET',
    path: '/keys',
    auth: true,
    roles: ['admin'],
    async handle(req) {
      return ok({ keys: (await req.deps.keys.list(req.principal.tenantId)).map(view) });
    },
  },
  {
    method: 'DELETE',
    path: '/keys/{keyId}',
    auth: true,
    roles: ['admin'],
    async handle(req) {
      const keyId = req.params.keyId ?? '';
      try {
        await req.deps.keys.revoke(req.principal.tenantId, keyId);
      } catch (err) {
        if (err instanceof ApiKeyNotFoundError)
          throw new NotFoundError(`no API key ${keyId} for this tenant`, { cause: err });
        throw err;
      }
      return ok({ keyId, revoked: true });
    },
  },
];
