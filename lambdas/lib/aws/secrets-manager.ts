import { traced } from '../observability/tracing.ts';
import { SecretsManagerClient } from './sdk/client-secrets-manager.ts';

let client: SecretsManagerClient | undefined;

/** The process's Secrets Manager client (connected accounts' credentials, provider keys), built on first use. */
export function secretsManagerClient(): SecretsManagerClient {
  client ??= traced(new SecretsManagerClient({}));
  return client;
}
