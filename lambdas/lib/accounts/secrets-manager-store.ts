import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import {
  CreateSecretCommand,
  DeleteSecretCommand,
  GetSecretValueCommand,
  InvalidRequestException,
  PutSecretValueCommand,
  ResourceNotFoundException,
} from '../aws/sdk/client-secrets-manager.ts';
import type { Credentials } from '../playbooks/contract.ts';
import { CredentialsNotFoundError } from './errors.ts';
import { registered, type WritableSecretStore } from './file-secret-store.ts';

/**
 * A secret already scheduled for deletion (an account disconnected before): Secrets Manager
 * answers any operation on it but a restore with InvalidRequestException, "You can't perform
 * this operation on the secret because it was marked for deletion."
 */
function markedForDeletion(err: unknown): boolean {
  return err instanceof InvalidRequestException && /deleted|deletion/i.test(err.message);
}

/**
 * Credentials in AWS Secrets Manager, one secret per account named
 * `<prefix>/<tenant>/<account>`. The functions' IAM policies are scoped to the prefix. A
 * secret scheduled for deletion is one that is gone: reading it finds no credentials, deleting
 * it again is done already (a repeated `DELETE /accounts/{id}`).
 */
export function createSecretsManagerStore(
  client: SecretsManagerClient,
  prefix = 'belay',
): WritableSecretStore {
  const name = (tenantId: string, accountId: string): string => `${prefix}/${tenantId}/${accountId}`;
  return {
    async getCredentials(tenantId, accountId) {
      try {
        const res = await client.send(new GetSecretValueCommand({ SecretId: name(tenantId, accountId) }));
        if (!res.SecretString) throw new CredentialsNotFoundError(tenantId, accountId);
        return registered(tenantId, JSON.parse(res.SecretString) as Credentials);
      } catch (err) {
        if (err instanceof ResourceNotFoundException || markedForDeletion(err))
          throw new CredentialsNotFoundError(tenantId, accountId, { cause: err });
        throw err;
      }
    },
    async putCredentials(tenantId, accountId, credentials) {
      const SecretString = JSON.stringify(credentials);
      try {
        await client.send(new PutSecretValueCommand({ SecretId: name(tenantId, accountId), SecretString }));
      } catch (err) {
        if (!(err instanceof ResourceNotFoundException)) throw err;
        await client.send(new CreateSecretCommand({ Name: name(tenantId, accountId), SecretString }));
      }
      // Stored: masked from now on.
      registered(tenantId, credentials);
    },
    async deleteCredentials(tenantId, accountId) {
      try {
        await client.send(
          new DeleteSecretCommand({ SecretId: name(tenantId, accountId), RecoveryWindowInDays: 7 }),
        );
      } catch (err) {
        if (!(err instanceof ResourceNotFoundException) && !markedForDeletion(err)) throw err;
      }
    },
  };
}
