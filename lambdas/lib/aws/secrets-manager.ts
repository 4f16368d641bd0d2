import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

let client: SecretsManagerClient | undefined;

/** The process's Secrets Manager client (connected accounts' credentials, provider keys), built on first use. */
export function secretsManagerClient(): SecretsManagerClient {
  client ??= new SecretsManagerClient({});
  return client;
}
