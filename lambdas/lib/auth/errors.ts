/** Errors of API key management. */

/** A role name that is not `submitter`, `approver` or `admin`, or an empty role list. */
export class InvalidRoleError extends Error {
  readonly role: string;
  constructor(role: string, options?: ErrorOptions) {
    super(`unknown role ${JSON.stringify(role)}: use submitter, approver or admin`, options);
    this.name = 'InvalidRoleError';
    this.role = role;
  }
}

/** A tenant id that cannot be a tenant (must be 1-64 characters of A-Z, a-z, 0-9, _ and -). */
export class InvalidTenantError extends Error {
  readonly tenantId: string;
  constructor(tenantId: string, options?: ErrorOptions) {
    super(
      `invalid tenant id ${JSON.stringify(tenantId)}: use 1-64 characters of A-Z, a-z, 0-9, _ and -`,
      options,
    );
    this.name = 'InvalidTenantError';
    this.tenantId = tenantId;
  }
}

/** No key with this id for this tenant. */
export class ApiKeyNotFoundError extends Error {
  readonly keyId: string;
  constructor(keyId: string, options?: ErrorOptions) {
    super(`no API key ${keyId} for this tenant`, options);
    this.name = 'ApiKeyNotFoundError';
    this.keyId = keyId;
  }
}
