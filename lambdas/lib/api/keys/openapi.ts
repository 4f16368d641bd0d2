import { z } from 'zod';
import type { RegisterPaths } from '../openapi-kit.ts';
import { CreatedKeySchema, CreateKeyBodySchema, KeyListSchema } from './schemas.ts';

/** The API-key paths of the OpenAPI document. */
export const registerKeyPaths: RegisterPaths = (r, { security, json, error, body, common }) => {
  const admin = { 403: error('The key lacks the admin role.'), ...common };
  r.registerPath({
    method: 'post',
    path: '/keys',
    summary: 'Create an API key for your tenant (role admin); the key is shown once',
    security,
    request: { body: body(CreateKeyBodySchema) },
    responses: { 201: json(CreatedKeySchema, 'The new key.'), 400: error('Bad roles or label.'), ...admin },
  });
  r.registerPath({
    method: 'get',
    path: '/keys',
    summary: "Your tenant's keys (ids and roles, never the keys) (role admin)",
    security,
    responses: { 200: json(KeyListSchema, 'The keys.'), ...admin },
  });
  r.registerPath({
    method: 'delete',
    path: '/keys/{keyId}',
    summary: 'Revoke a key (role admin); effective for the next request and its console sessions',
    security,
    request: { params: z.object({ keyId: z.string() }) },
    responses: {
      200: json(z.object({ keyId: z.string(), revoked: z.literal(true) }), 'Revoked.'),
      404: error('No such key for this tenant.'),
      ...admin,
    },
  });
};
