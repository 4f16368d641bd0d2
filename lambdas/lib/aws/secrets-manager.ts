import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { traced } from '../observability/tracing.ts';

let client: SecretsManagerClient | undefined;

/** The process's Secrets Manager client (connected accounts' credentials, provider keys), built on first use. */
export function secretsManagerClient(): SecretsManagerClient {
  client ??= traced(new SecretsManagerClient({}));
  return client;
}
