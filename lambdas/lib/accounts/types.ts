import type { Credentials } from '../playbooks/contract.ts';

/**
 * A tenant's connected account in one application: the authorization mapper's row. Belay,
 * not the browser, decides which job may act as which account.
 */
export interface Account {
  tenantId: string;
  accountId: string;
  /** Application name as playbooks know it (`shop`, `crm`, `billing`). */
  application: string;
  label: string;
  /** Persisted browser profile of this account: named by tenant, application and account. */
  profileName: string;
  /** Anchor identity (managed authentication), when the account was connected through one. */
  identityId?: string;
  status: 'connected' | 'revoked';
  /** How the account signs in: credentials in the secret store, or an Anchor identity. */
  connectedWith?: 'credentials' | 'identity';
  createdAt: string;
  /** When it was disconnected (revoked). */
  revokedAt?: string;
}

/** Looks accounts up, scoped to a tenant: another tenant's account is indistinguishable from a missing one. */
export interface AccountDirectory {
  get(tenantId: string, accountId: string): Promise<Account | null>;
}

/** Where credentials live (Secrets Manager in AWS; an encrypted file locally). Never in DynamoDB items. */
export interface SecretStore {
  getCredentials(tenantId: string, accountId: string): Promise<Credentials>;
}

/** The profile name of an account: stable, tenant-scoped, safe as a directory name. */
export function profileNameFor(tenantId: string, application: string, accountId: string): string {
  return `${tenantId}--${application}--${accountId}`;
}

/** A secret store the accounts API writes to (connect) and deletes from (revoke). */
export interface WritableSecretStore extends SecretStore {
  putCredentials(tenantId: string, accountId: string, credentials: Credentials): Promise<void>;
  deleteCredentials(tenantId: string, accountId: string): Promise<void>;
}
