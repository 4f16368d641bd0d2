import { documentClientFromEnv } from '../aws/dynamodb.ts';
import { resolveSecretEnv } from '../browser/secret-key.ts';
import { getIntFromEnv, getOptionalStringFromEnv, getStringFromEnv } from '../config.ts';
import { createLogger } from '../logger.ts';
import { DEFAULT_BACKOFF_MS, type DeliverDeps } from './deliver.ts';
import { createWebhookStore } from './store.ts';

/**
 * The notifier's dependencies from the environment: `TABLE_NAME`, `BELAY_WEBHOOK_SIGNING_KEY`
 * (in AWS from the secret `BELAY_WEBHOOK_SIGNING_KEY_SECRET_ARN` names), `BELAY_API_URL` (the
 * console links), `BELAY_WEBHOOK_BACKOFF_MS` (comma-separated pauses between attempts, default
 * 1000,4000,15000) and `BELAY_WEBHOOK_TIMEOUT_MS` (each attempt, default 5000).
 */
export async function deliverDepsFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<DeliverDeps> {
  const withSecrets = await resolveSecretEnv(env, ['BELAY_WEBHOOK_SIGNING_KEY']);
  const backoff = getOptionalStringFromEnv('BELAY_WEBHOOK_BACKOFF_MS', env);
  return {
    webhooks: createWebhookStore({
      doc: documentClientFromEnv(env),
      tableName: getStringFromEnv('TABLE_NAME', env),
    }),
    signingKey: getStringFromEnv('BELAY_WEBHOOK_SIGNING_KEY', withSecrets),
    apiBaseUrl: getOptionalStringFromEnv('BELAY_API_URL', env) ?? '',
    fetch: globalThis.fetch,
    clock: () => new Date(),
    backoffMs: backoff ? backoff.split(',').map((v) => Math.max(0, Number(v) || 0)) : DEFAULT_BACKOFF_MS,
    timeoutMs: getIntFromEnv('BELAY_WEBHOOK_TIMEOUT_MS', 5_000, { min: 100, max: 20_000 }, env),
    log: createLogger({ service: 'belay-notify' }),
  };
}
