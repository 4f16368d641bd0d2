import type { RegisterPaths } from '../openapi-kit.ts';
import {
  AccountIdParams,
  AccountListSchema,
  AccountResponseSchema,
  AccountRevokedResponseSchema,
  ConnectAccountBodySchema,
  ConnectAccountHostedBodySchema,
  ConnectCallbackParams,
  ConnectCallbackQuery,
  ConnectCallbackResponseSchema,
  PendingConnectionResponseSchema,
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
    method: 'post',
    path: '/accounts/connect',
    summary: "Connect an account through Anchor's hosted sign-in (role admin)",
    description:
      "Belay creates Anchor's identity token for the application, with a callback to Belay, and answers with Anchor's page. Send the person there: they sign in on Anchor's page (Belay never sees their password), and Anchor sends their browser back to the callback, which creates the account. The link is single use and expires with the token (15 minutes).",
    security,
    request: {
      body: { required: true, content: { 'application/json': { schema: ConnectAccountHostedBodySchema } } },
    },
    responses: {
      201: json(
        PendingConnectionResponseSchema,
        'The pending connection and the page to send the person to.',
      ),
      400: error('Malformed request; details name the fields.'),
      422: error('An application this deployment does not know.'),
      ...admin,
    },
  });
  r.registerPath({
    method: 'get',
    path: '/accounts/connect/callback/{callbackKey}',
    summary:
      "Where Anchor's hosted sign-in sends the person back (no key: the callback key is the credential)",
    description:
      "Maps the identity Anchor created to the tenant's new account (connectedWith identity). A callback changes nothing when it is refused, and its error code says why: connection_used (replayed), connection_expired (late), identity_not_of_connection (an identity of another application), identity_unavailable (another tenant's identity), or 404 (no such connection). A request that asks for text/html (the person's browser) gets the same status with a page saying so instead of JSON.",
    request: { params: ConnectCallbackParams, query: ConnectCallbackQuery },
    responses: {
      200: json(ConnectCallbackResponseSchema, 'Connected: the new account.'),
      400: error('No valid identityId.'),
      404: error('No pending connection has this callback.'),
      409: error('Replayed (connection_used) or another tenant holds the identity (identity_unavailable).'),
      410: error('The connection expired (connection_expired).'),
      422: error("The identity is not one of the connection's application (identity_not_of_connection)."),
      429: error('Too many requests from this address.'),
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
