import { BelayError } from '../errors.ts';

/** Errors of the connected accounts and their credentials. */

/** No credentials are stored for this account (or it is another tenant's). */
export class CredentialsNotFoundError extends BelayError {
  constructor(
    readonly tenantId: string,
    readonly accountId: string,
    options?: ErrorOptions,
  ) {
    super(
      'CredentialsNotFoundError',
      'credentials-not-found',
      `no credentials stored for account ${accountId}`,
      options,
    );
  }
}

/**
 * The account signs in through its Anchor identity (hosted sign-in), not with credentials Belay
 * holds, and the session arrived signed out: the identity's sign-in failed or no longer holds.
 * A person reconnects the account; Belay has nothing to type.
 */
export class IdentitySignedOutError extends BelayError {
  constructor(
    readonly accountId: string,
    readonly application: string,
    options?: ErrorOptions,
  ) {
    super(
      'IdentitySignedOutError',
      'identity-signed-out',
      `account ${accountId} signs in to ${application} through its Anchor identity, and the session arrived signed out: the identity's sign-in failed or expired; connect the account again (POST /accounts/connect)`,
      options,
    );
  }
}

/** The function was deployed without access to connected accounts' credentials (`BELAY_SECRETS=none`). */
export class CredentialsAccessDeniedError extends BelayError {
  constructor(readonly accountId: string) {
    super(
      'CredentialsAccessDeniedError',
      'credentials-access-denied',
      `this function has no access to connected accounts' credentials (BELAY_SECRETS=none), asked for account ${accountId}`,
    );
  }
}

/**
 * The Anchor identity is bound to another tenant, the one that connected it first. Its message
 * names no tenant.
 */
export class IdentityOfAnotherTenantError extends BelayError {
  constructor(
    readonly identityId: string,
    options?: ErrorOptions,
  ) {
    super(
      'IdentityOfAnotherTenantError',
      'identity-of-another-tenant',
      `Anchor identity ${identityId} is connected by another tenant`,
      options,
    );
  }
}

/** Why a hosted sign-in's callback is refused: it changes nothing, and says which of these it was. */
export type ConnectionRefusal =
  /** No pending connection has this callback (a made-up or mistyped link). */
  | 'connection-unknown'
  /** The connection was completed already: a replayed callback. */
  | 'connection-used'
  /** The connection's token expired before the callback came. */
  | 'connection-expired'
  /** The identity is not one the connection's application holds (another application's, or none). */
  | 'identity-not-of-connection';

const REFUSAL_MESSAGES: Readonly<Record<ConnectionRefusal, string>> = {
  'connection-unknown': 'no pending account connection has this callback',
  'connection-used': 'this account connection was completed already; start a new one',
  'connection-expired': "this account connection's sign-in expired; start a new one",
  'identity-not-of-connection': "the identity is not one of this connection's application",
};

/** A hosted sign-in's callback that cannot complete its connection; nothing was changed. */
export class ConnectionRefusedError extends BelayError {
  constructor(
    readonly refusal: ConnectionRefusal,
    options?: ErrorOptions,
  ) {
    super('ConnectionRefusedError', refusal, REFUSAL_MESSAGES[refusal], options);
  }
}
