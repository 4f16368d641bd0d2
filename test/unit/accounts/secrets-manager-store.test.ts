import {
  DeleteSecretCommand,
  GetSecretValueCommand,
  InvalidRequestException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { CredentialsNotFoundError } from '../../../lambdas/lib/accounts/errors.ts';
import { createSecretsManagerStore } from '../../../lambdas/lib/accounts/secrets-manager-store.ts';

const secrets = mockClient(SecretsManagerClient);
afterEach(() => secrets.reset());

/** What Secrets Manager answers for a secret scheduled for deletion (its 7-day recovery window). */
const marked = (): InvalidRequestException =>
  new InvalidRequestException({
    message: "You can't perform this operation on the secret because it was marked for deletion.",
    $metadata: { httpStatusCode: 400 },
  });

describe('Function: createSecretsManagerStore', () => {
  const store = () => createSecretsManagerStore(new SecretsManagerClient({ region: 'us-east-1' }), 'belay');

  it('deletes an account’s credentials once, and a second delete (the secret scheduled for deletion) is done', async () => {
    secrets.on(DeleteSecretCommand).resolvesOnce({}).rejectsOnce(marked());
    await store().deleteCredentials('acme', 'acct_1');
    await expect(store().deleteCredentials('acme', 'acct_1')).resolves.toBeUndefined();
    expect(secrets.commandCalls(DeleteSecretCommand)[0]?.args[0].input).toEqual({
      SecretId: 'belay/acme/acct_1',
      RecoveryWindowInDays: 7,
    });
  });

  it('reads no credentials from a secret scheduled for deletion', async () => {
    secrets.on(GetSecretValueCommand).rejects(marked());
    await expect(store().getCredentials('acme', 'acct_1')).rejects.toBeInstanceOf(CredentialsNotFoundError);
  });

  it('passes on any other refusal', async () => {
    secrets
      .on(DeleteSecretCommand)
      .rejects(
        new InvalidRequestException({ message: 'something else', $metadata: { httpStatusCode: 400 } }),
      );
    await expect(store().deleteCredentials('acme', 'acct_1')).rejects.toBeInstanceOf(InvalidRequestException);
  });
});
