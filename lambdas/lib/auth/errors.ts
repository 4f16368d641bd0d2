import { BelayError } from '../errors.ts';

/** Errors of API key management. */

/** A role name that is not `submitter`, `approver` or `admin`, or an empty role list. */
export class InvalidRoleError extends BelayError {
  readonly role: string;
  constructor(role: string, options?: ErrorOptions) {
    super(
      'InvalidRoleError',
      'invalid-role',
      `unknown role ${JSON.stringify(role)}: use submitter, approver or admin`,
      options,
    );
    this.role = role;
  }
}

/** A tenant id that cannot be a tenant (must be 1-64 characters of A-Z, a-z, 0-9, _ and -). */
export class InvalidTenantError extends BelayError {
  readonly tenantId: string;
  constructor(tenantId: string, options?: ErrorOptions) {
    super(
      'InvalidTenantError',
      'invalid-tenant',
      `invalid tenant id ${JSON.stringify(tenantId)}: use 1-64 characters of A-Z, a-z, 0-9, _ and -`,
      options,
    );
    this.tenantId = tenantId;
  }
}

/** No key with this id for this tenant. */
export class ApiKeyNotFoundError extends BelayError {
  readonly keyId: string;
  constructor(keyId: string, options?: ErrorOptions) {
    super('ApiKeyNotFoundError', 'api-key-not-found', `no API key ${keyId} for this tenant`, options);
    this.keyId = keyId;
  }
}
