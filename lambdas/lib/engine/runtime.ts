import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { createAccountRegistry } from '../accounts/directory.ts';
import { createFileSecretStore } from '../accounts/file-secret-store.ts';
import { createSecretsManagerStore } from '../accounts/secrets-manager-store.ts';
import type { SecretStore } from '../accounts/types.ts';
import { browserAdapterFromDeployedEnv } from '../browser/secret-key.ts';
import { createLeaseCapacity } from '../capacity/leases.ts';
import { isPlanName } from '../capacity/plans.ts';
import {
  ConfigError,
  getIntFromEnv,
  getJsonFromEnv,
  getOptionalStringFromEnv,
  getStringFromEnv,
} from '../config.ts';
import { faultPoint } from '../fault.ts';
import { createLedger } from '../ledger/index.ts';
import { createLogger } from '../logger.ts';
import { getPlaybook } from '../playbooks/registry.ts';
import { recordSessionOwner } from '../webhooks/store.ts';
import { eventBridgeNotifier, localNotifier } from './notifiers.ts';
import type { ApplicationEndpoint, EngineDeps } from './types.ts';

const ApplicationsSchema = z.record(
  z.string().min(1),
  z.object({ baseUrl: z.url(), allowedDomains: z.array(z.string().min(1)).optional() }),
);

/** `BELAY_APPLICATIONS`: application name -> base URL (and extra domains its pages may reach). */
export function applicationsFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): Record<string, ApplicationEndpoint> {
  const parsed = getJsonFromEnv('BELAY_APPLICATIONS', (v) => ApplicationsSchema.parse(v), env);
  const out: Record<string, ApplicationEndpoint> = {};
  for (const [name, app] of Object.entries(parsed)) {
    out[name] = {
      baseUrl: app.baseUrl,
      allowedDomains: [new URL(app.baseUrl).hostname, ...(app.allowedDomains ?? [])],
    };
  }
  return out;
}

/** A DynamoDB document client; `DYNAMODB_ENDPOINT` points it at DynamoDB Local. */
export function documentClientFromEnv(env: NodeJS.ProcessEnv = process.env): DynamoDBDocumentClient {
  const endpoint = getOptionalStringFromEnv('DYNAMODB_ENDPOINT', env);
  const client = new DynamoDBClient(
    endpoint
      ? {
          endpoint,
          region: env.AWS_REGION ?? 'us-east-1',
          credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        }
      : {},
  );
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}

async function secretStoreFromEnv(env: NodeJS.ProcessEnv): Promise<SecretStore> {
  const spec = getStringFromEnv('BELAY_SECRETS', env);
  if (spec.startsWith('file:'))
    return createFileSecretStore(spec.slice('file:'.length), env.BELAY_SECRETS_KEY);
  if (spec.startsWith('secretsmanager:')) {
    return createSecretsManagerStore(
      new SecretsManagerClient({}),
      spec.slice('secretsmanager:'.length) || 'belay',
    );
  }
  throw new ConfigError(
    'BELAY_SECRETS',
    `must be file:<dir> or secretsmanager:<prefix>, got ${JSON.stringify(spec)}`,
  );
}

/** Builds the engine's dependencies from the environment. Called once per process (cold start). */
export async function engineDepsFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<EngineDeps> {
  const tableName = getStringFromEnv('TABLE_NAME', env);
  const doc = documentClientFromEnv(env);
  const log = createLogger({ service: 'belay-engine' });
  const defaultPlan = getOptionalStringFromEnv('BELAY_DEFAULT_PLAN', env) ?? 'free';
  if (!isPlanName(defaultPlan))
    throw new ConfigError('BELAY_DEFAULT_PLAN', 'must be free, starter, growth or enterprise');
  const busName = getOptionalStringFromEnv('EVENT_BUS_NAME', env);
  const apiBaseUrl = getOptionalStringFromEnv('BELAY_API_URL', env);
  return {
    ledger: createLedger({ doc, tableName }),
    browser: await browserAdapterFromDeployedEnv(env),
    playbooks: { get: getPlaybook },
    accounts: createAccountRegistry({ doc, tableName }),
    secrets: await secretStoreFromEnv(env),
    capacity: createLeaseCapacity({
      doc,
      tableName,
      defaultPlan,
      leaseTtlSeconds: getIntFromEnv('BELAY_LEASE_TTL_SECONDS', 900, { min: 5 }, env),
      pollSeconds: getIntFromEnv('BELAY_CAPACITY_POLL_SECONDS', 5, { min: 1 }, env),
    }),
    applications: applicationsFromEnv(env),
    notifier: busName
      ? eventBridgeNotifier(new EventBridgeClient({}), busName, apiBaseUrl)
      : localNotifier(log, {
          apiBaseUrl,
          webhookUrl: getOptionalStringFromEnv('BELAY_WAIT_WEBHOOK_URL', env),
        }),
    clock: () => new Date(),
    log,
    recordSessionOwner: (sessionId, tenantId, jobId, app) =>
      recordSessionOwner(doc, tableName, sessionId, tenantId, jobId, { app }),
    faultPoint,
    settings: {
      sessionIdleTimeoutMinutes: getIntFromEnv('BELAY_SESSION_IDLE_MINUTES', 30, { min: 1 }, env),
      sessionMaxDurationMinutes: getIntFromEnv('BELAY_SESSION_MAX_MINUTES', 24 * 60, { min: 1 }, env),
      retryBackoffSeconds: getIntFromEnv('BELAY_RETRY_BACKOFF_SECONDS', 2, { min: 0 }, env),
      capacityPollSeconds: getIntFromEnv('BELAY_CAPACITY_POLL_SECONDS', 5, { min: 1 }, env),
    },
  };
}

let cached: Promise<EngineDeps> | undefined;

/** The process's engine dependencies, built on first use and reused while the process is warm. */
export function engineDeps(): Promise<EngineDeps> {
  cached ??= engineDepsFromEnv().catch((err: unknown) => {
    cached = undefined;
    throw err;
  });
  return cached;
}
