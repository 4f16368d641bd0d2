import { randomBytes } from 'node:crypto';
import {
  CALLBACK_KEY,
  callbackRefusal,
  newCallbackKey,
  type PendingConnection,
} from '../../accounts/connections.ts';
import {
  type ConnectionRefusal,
  ConnectionRefusedError,
  IdentityOfAnotherTenantError,
} from '../../accounts/errors.ts';
import { connectionIdentityRefusal } from '../../accounts/identity-binding.ts';
import type { Account } from '../../accounts/types.ts';
import type { Principal } from '../../auth/api-keys.ts';
import type { EngineDeps } from '../../engine/types.ts';
import type { ApiDeps } from '../deps.ts';
import { BadRequestError, ConflictError, GoneError, NotFoundError, UnprocessableError } from '../errors.ts';
import { fieldIssues } from '../schemas.ts';
import { ConnectAccountHostedBodySchema, IDENTITY_ID, type PendingConnectionView } from './schemas.ts';

/**
 * Connecting an account through Anchor's hosted sign-in (OmniConnect). An admin asks to connect
 * (`POST /accounts/connect`); Belay creates Anchor's identity token for the application, with a
 * callback to Belay that carries a fresh random key, records the pending connection under that
 * key (tenant, application, label, token expiry) and answers with Anchor's page. The person
 * signs in there (their password goes to Anchor, never to Belay) and Anchor sends their browser
 * to the callback with `?identityId=`. The callback maps that identity to the tenant's new
 * account, in one transaction with the connection's completion and the identity's claim. Only
 * the identity this connection's sign-in created is taken (`connectionIdentityRefusal`): of the
 * connection's Anchor application, from its token where Anchor says which, created while the
 * connection was open, tagged for no account. A replayed callback (the connection is completed),
 * a late one (the token expired), a foreign one (another connection's identity, one of another
 * application, or one another tenant holds) or a made-up one changes nothing and says which it was.
 */

/** What connecting needs of the API's dependencies. */
export type ConnectDeps = Pick<ApiDeps, 'anchor' | 'connections' | 'accounts'> & {
  engine: Pick<EngineDeps, 'applications' | 'clock' | 'log'>;
};

/** The path Anchor sends the person back to; `{callbackKey}` is the connection's only credential. */
export const CONNECT_CALLBACK_PATH = '/accounts/connect/callback';

/** What the admin gets back: where to send the person, until when. */
export interface StartedConnection {
  connection: PendingConnection;
  connectUrl: string;
}

/**
 * The applications an account may be connected to through the hosted sign-in: every application
 * this deployment configures (Anchor's application for it signs in at its `baseUrl`), by name.
 */
export function hostedSignInApplications(deps: { engine: Pick<EngineDeps, 'applications'> }): string[] {
  return Object.keys(deps.engine.applications).sort();
}

/** The origin of the hosted sign-in's page, where a person is sent to connect an account. */
export function hostedSignInOrigin(deps: Pick<ConnectDeps, 'anchor'>): string {
  return new URL(deps.anchor.connectPageUrl('')).origin;
}

/** What the API answers about a connection it started (`POST /accounts/connect`). */
export function connectionView({ connection, connectUrl }: StartedConnection): PendingConnectionView {
  return {
    connectionId: connection.connectionId,
    application: connection.application,
    label: connection.label,
    status: connection.status,
    connectUrl,
    expiresAt: connection.tokenExpiresAt,
  };
}

/** Starts a hosted sign-in for a new account of `application`. */
export async function startConnection(
  deps: ConnectDeps,
  principal: Principal,
  body: unknown,
  apiBaseUrl: string,
): Promise<StartedConnection> {
  const parsed = ConnectAccountHostedBodySchema.safeParse(body);
  if (!parsed.success) {
    throw new BadRequestError(
      'invalid_request',
      'the connection is not valid: see details for the fields to fix',
      {
        details: fieldIssues(parsed.error),
      },
    );
  }
  const { application, label } = parsed.data;
  const known = hostedSignInApplications(deps);
  // By the configured names, not by indexing: `constructor` is no application of a plain object.
  const endpoint = known.includes(application) ? deps.engine.applications[application] : undefined;
  if (!endpoint) {
    throw new UnprocessableError('unknown_application', `this deployment has no application ${application}`, {
      details: [{ field: 'application', message: `use one of ${known.join(', ')}` }],
    });
  }
  if (!apiBaseUrl)
    throw new UnprocessableError('no_api_url', 'the API does not know its own URL (set BELAY_API_URL)');
  const anchorApplicationId = await deps.anchor.applicationFor({
    name: application,
    baseUrl: endpoint.baseUrl,
  });
  const callbackKey = newCallbackKey();
  const callbackUrl = `${apiBaseUrl.replace(/\/+$/, '')}${CONNECT_CALLBACK_PATH}/${callbackKey}`;
  const token = await deps.anchor.createToken(anchorApplicationId, callbackUrl);
  const connection = await deps.connections.create(callbackKey, {
    tenantId: principal.tenantId,
    application,
    label,
    anchorApplicationId,
    tokenHash: token.tokenHash,
    tokenExpiresAt: token.expiresAt.toISOString(),
  });
  return { connection, connectUrl: deps.anchor.connectPageUrl(token.token) };
}

/** The API error a refusal answers with: its code is the refusal, so the caller knows why. */
export function refusalError(refusal: ConnectionRefusal): Error {
  const { message } = new ConnectionRefusedError(refusal);
  const code = refusal.replaceAll('-', '_');
  switch (refusal) {
    case 'connection-unknown':
      return new NotFoundError(message);
    case 'connection-used':
      return new ConflictError(code, message);
    case 'connection-expired':
      return new GoneError(code, message);
    case 'identity-not-of-connection':
      return new UnprocessableError(code, message, {
        details: [{ field: 'identityId', message: "an identity created on this connection's sign-in page" }],
      });
  }
}

/**
 * The hosted sign-in's callback: maps the identity to the connection's tenant's new account.
 * Throws an API error naming the refusal; nothing is written unless it succeeds.
 */
export async function completeConnection(
  deps: ConnectDeps,
  callbackKey: string,
  identityId: string | undefined,
): Promise<{ account: Account; connection: PendingConnection }> {
  if (!CALLBACK_KEY.test(callbackKey)) throw refusalError('connection-unknown');
  if (!identityId || !IDENTITY_ID.test(identityId)) {
    throw new BadRequestError('invalid_request', 'the callback has no valid identityId', {
      details: [{ field: 'identityId', message: 'the identity id Anchor appends to the callback' }],
    });
  }
  const connection = await deps.connections.get(callbackKey);
  const refused = callbackRefusal(connection, deps.engine.clock());
  if (refused || !connection) throw refusalError(refused ?? 'connection-unknown');
  // The identity this connection's sign-in created, not any identity of the (shared) application.
  const identity = await deps.anchor.findIdentity(connection.anchorApplicationId, identityId);
  if (connectionIdentityRefusal(identity, connection)) throw refusalError('identity-not-of-connection');

  const accountId = `acct_${randomBytes(8).toString('hex')}`;
  let account: Account;
  try {
    account = await deps.accounts.create({
      tenantId: connection.tenantId,
      application: connection.application,
      label: connection.label,
      accountId,
      identityId,
      connectedWith: 'identity',
      alsoWrite: [
        deps.connections.completion(callbackKey, { accountId, identityId, at: deps.engine.clock() }),
      ],
    });
  } catch (err) {
    if (err instanceof IdentityOfAnotherTenantError) {
      throw new ConflictError(
        'identity_unavailable',
        'this Anchor identity cannot be connected by this tenant',
      );
    }
    if (err instanceof ConnectionRefusedError) {
      // Another callback completed it meanwhile, or the token expired meanwhile: read to say which.
      throw refusalError(
        callbackRefusal(await deps.connections.get(callbackKey), deps.engine.clock()) ?? err.refusal,
      );
    }
    throw err;
  }
  // Labels the identity at Anchor with what it serves; the mapping is Belay's either way.
  await deps.anchor
    .tagIdentity(identityId, { belayTenant: connection.tenantId, belayAccount: accountId })
    .catch((err: unknown) =>
      deps.engine.log.warn('tagging the identity at Anchor failed', { error: String(err) }),
    );
  return { account, connection: { ...connection, status: 'completed', accountId, identityId } };
}
