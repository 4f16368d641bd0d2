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
