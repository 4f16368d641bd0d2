import type { RegisterPaths } from '../openapi-kit.ts';
import {
  AccountIdParams,
  AccountListSchema,
  AccountResponseSchema,
  AccountRevokedResponseSchema,
  ConnectAccountBodySchema,
} from './schemas.ts';

/** The accounts paths of the OpenAPI document, from the schemas the handlers validate with. */
export const registerAccountPaths: RegisterPaths = (r, { security, json, error, common }) => {
  const admin = { 403: error('The key lacks the admin role.'), ...common };
  const missing = {
    404: error("No such account for this tenant (another tenant's account reads the same)."),
  };

  r.registerPath({
    method: 'post',
    path: '/accounts',
    summary: 'Connect an account of an application (role admin)',
    description:
      'Credentials go to the secret store only; no response, log line or DynamoDB item carries them. The account gets its own persisted browser profile, named by tenant, application and account.',
    security,
    request: {
      body: { required: true, content: { 'application/json': { schema: ConnectAccountBodySchema } } },
    },
    responses: {
      201: json(AccountResponseSchema, 'Connected.'),
      400: error('Malformed request; details name the fields.'),
      409: error('The Anchor identity is bound to another tenant (the one that connected it first).'),
      422: error('An application this deployment does not know.'),
      ...admin,
    },
  });
  r.registerPath({
    method: 'get',
    path: '/accounts',
    summary: "The tenant's accounts, connected and revoked (role admin)",
    security,
    responses: { 200: json(AccountListSchema, 'The accounts, oldest first.'), ...admin },
  });
  r.registerPath({
    method: 'get',
    path: '/accounts/{accountId}',
    summary: 'One account (role admin)',
    security,
    request: { params: AccountIdParams },
    responses: { 200: json(AccountResponseSchema, 'The account.'), ...missing, ...admin },
  });
  r.registerPath({
    method: 'delete',
    path: '/accounts/{accountId}',
    summary: 'Disconnect an account: revoke it and delete its credentials (role admin)',
    description:
      'Jobs using the account stop at their next step: FAILED with reason account-revoked, sessions ended, nothing further done. Jobs waiting for a person (approval, MFA, review, parked or not) are failed at once; `jobsStopped` counts them. Idempotent.',
    security,
    request: { params: AccountIdParams },
    responses: {
      200: json(AccountRevokedResponseSchema, 'Revoked (or already was).'),
      ...missing,
      ...admin,
    },
  });
};
