import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type AccountRegistry, createAccountRegistry } from '../accounts/directory.ts';
import { createFileSecretStore, createNoSecretStore } from '../accounts/file-secret-store.ts';
import { createSecretsManagerStore } from '../accounts/secrets-manager-store.ts';
import type { WritableSecretStore } from '../accounts/types.ts';
import { type ActionCacheStore, createActionCacheStore, NO_ACTION_CACHE } from '../agent/cache/store.ts';
import { agentConfigFromEnv, MODEL_KEY_VARIABLES } from '../agent/models.ts';
import { configureAgentModels } from '../agent/registry.ts';
import { documentClientFromEnv } from '../aws/dynamodb.ts';
import { eventBridgeClient } from '../aws/event-bridge.ts';
import { secretsManagerClient } from '../aws/secrets-manager.ts';
import {
  browserAdapterFromDeployedEnv,
  resolveSecretEnv,
  SECRET_ARN_VARIABLES,
  type SecretReader,
} from '../browser/secret-key.ts';
import { createLeaseCapacity } from '../capacity/leases.ts';
import { isPlanName, type PlanCaps, planCaps } from '../capacity/plans.ts';
import { HISTORY_EVENT_QUOTA, maxQueueSecondsFor } from '../capacity/poll.ts';
import {
  ConfigError,
  getIntFromEnv,
  getJsonFromEnv,
  getOptionalStringFromEnv,
  getStringFromEnv,
} from '../config.ts';
import { screenshotStoreFromEnv } from '../evidence/runtime.ts';
import { faultPoint } from '../fault.ts';
import { createLedger } from '../ledger/index.ts';
import { processLogger } from '../logger.ts';
import { observeLedger } from '../metrics/ledger-metrics.ts';
import { observeNotifier } from '../metrics/notifier-metrics.ts';
import { processMetrics } from '../metrics/recorder.ts';
import { bundledPlaybooks } from '../playbooks/bundled.ts';
import type { PlaybookRegistry } from '../playbooks/registry.ts';
import { endpointsOf, parseApplications } from './applications.ts';
import { eventBridgeNotifier, localNotifier } from './notifiers.ts';
import { recordSessionOwner } from './session-owners.ts';
import type { ApplicationEndpoint, EngineDeps, EngineSettings } from './types.ts';

/** `BELAY_APPLICATIONS`: application name -> base URL (and extra domains its pages may reach). */
export function applicationsFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): Record<string, ApplicationEndpoint> {
  return endpointsOf(parseApplications(getStringFromEnv('BELAY_APPLICATIONS', env), 'BELAY_APPLICATIONS'));
}

/**
 * `BELAY_SECRETS`: where connected accounts' credentials live (`file:<dir>` locally,
 * `secretsmanager:<prefix>` in AWS), or `none` for a function that must never read them.
 */
export async function secretStoreFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<WritableSecretStore> {
  const spec = getStringFromEnv('BELAY_SECRETS', env);
  if (spec === 'none') return createNoSecretStore();
  if (spec.startsWith('file:'))
    return createFileSecretStore(spec.slice('file:'.length), env.BELAY_SECRETS_KEY);
  if (spec.startsWith('secretsmanager:')) {
    return createSecretsManagerStore(secretsManagerClient(), spec.slice('secretsmanager:'.length) || 'belay');
  }
  throw new ConfigError(
    'BELAY_SECRETS',
    `must be file:<dir>, secretsmanager:<prefix> or none, got ${JSON.stringify(spec)}`,
  );
}

/** `BELAY_PLAN_CAPS`: caps per plan over the defaults, e.g. `{"free": 2}`. */
export function planCapsFromEnv(env: NodeJS.ProcessEnv = process.env): PlanCaps {
  if (getOptionalStringFromEnv('BELAY_PLAN_CAPS', env) === undefined) return planCaps();
  return getJsonFromEnv('BELAY_PLAN_CAPS', (v) => planCaps(v), env);
}

/** A `true`/`false` variable (default false). */
function getFlagFromEnv(name: string, env: NodeJS.ProcessEnv): boolean {
  const raw = getOptionalStringFromEnv(name, env)?.trim().toLowerCase();
  if (raw === undefined || raw === 'false' || raw === '0') return false;
  if (raw === 'true' || raw === '1') return true;
  throw new ConfigError(name, `must be true or false, got ${JSON.stringify(raw)}`);
}

/** `BELAY_WRITE_GUARD`: `prevent` (default: prevent and detect), `detect` (detect only) or `off`. */
function writeGuardFromEnv(env: NodeJS.ProcessEnv): EngineSettings['writeGuard'] {
  const mode = getOptionalStringFromEnv('BELAY_WRITE_GUARD', env)?.trim().toLowerCase() ?? 'prevent';
  if (mode === 'prevent') return { prevent: true, detect: true };
  if (mode === 'detect') return { prevent: false, detect: true };
  if (mode === 'off') return { prevent: false, detect: false };
  throw new ConfigError('BELAY_WRITE_GUARD', `must be prevent, detect or off, got ${JSON.stringify(mode)}`);
}

/**
 * The engine's timing settings. A human wait shorter than `BELAY_PARK_AFTER_SECONDS` keeps
 * its browser session, so the session's idle timeout must outlast it: by default it is the
 * park-after time plus ten minutes (at least 30), and a configured one that is shorter is refused.
 */
/** `BELAY_FILES_VOLUME`: the team volume's name (Anchor's rule: letters, digits, `_`, `-`). */
function filesVolumeFromEnv(env: NodeJS.ProcessEnv): string {
  const name = getOptionalStringFromEnv('BELAY_FILES_VOLUME', env) ?? 'belay-files';
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(name))
    throw new ConfigError('BELAY_FILES_VOLUME', 'must be 1-64 of letters, digits, _ and -');
  return name;
}

export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): EngineSettings {
  const parkAfterSeconds = getIntFromEnv('BELAY_PARK_AFTER_SECONDS', 900, { min: 1, max: 86_400 }, env);
  const coverMinutes = Math.ceil(parkAfterSeconds / 60) + 1;
  const idle = getIntFromEnv('BELAY_SESSION_IDLE_MINUTES', Math.max(30, coverMinutes + 9), { min: 1 }, env);
  if (idle < coverMinutes) {
    throw new ConfigError(
      'BELAY_SESSION_IDLE_MINUTES',
      `must cover a wait that keeps its session: at least ${coverMinutes} with BELAY_PARK_AFTER_SECONDS=${parkAfterSeconds}`,
    );
  }
  const capacityPollSeconds = getIntFromEnv('BELAY_CAPACITY_POLL_SECONDS', 5, { min: 1 }, env);
  // The asks of the longest wait must fit in the execution's history (see `maxQueueSecondsFor`).
  const fit = maxQueueSecondsFor(capacityPollSeconds);
  const maxQueueSeconds = getIntFromEnv('BELAY_MAX_QUEUE_SECONDS', Math.min(86_400, fit), { min: 1 }, env);
  if (maxQueueSeconds > fit) {
    throw new ConfigError(
      'BELAY_MAX_QUEUE_SECONDS',
      `must be <= ${fit} with BELAY_CAPACITY_POLL_SECONDS=${capacityPollSeconds}: a longer wait's capacity asks would not fit in the execution's ${HISTORY_EVENT_QUOTA} history events`,
    );
  }
  return {
    sessionIdleTimeoutMinutes: idle,
    sessionMaxDurationMinutes: getIntFromEnv('BELAY_SESSION_MAX_MINUTES', 24 * 60, { min: 1 }, env),
    retryBackoffSeconds: getIntFromEnv('BELAY_RETRY_BACKOFF_SECONDS', 2, { min: 0 }, env),
    capacityPollSeconds,
    maxQueueSeconds,
    parkAfterSeconds,
    // Longer than any task that does not renew (Finish: 180 s) in production; RunStep renews as it runs.
    leaseTtlSeconds: getIntFromEnv('BELAY_LEASE_TTL_SECONDS', 900, { min: 30 }, env),
    writeGuard: writeGuardFromEnv(env),
    filesVolume: filesVolumeFromEnv(env),
  };
}

/** The `service` of the engine's log lines. */
export const ENGINE_SERVICE = 'belay-engine';

/**
 * What the engine shares with the API in one process: the table and its one client, the
 * connected accounts and the credential store. Built once (`sharedPartsFromEnv`) and handed
 * to both, so a process never builds a second client for the same table.
 */
export interface SharedParts {
  doc: DynamoDBDocumentClient;
  tableName: string;
  accounts: AccountRegistry;
  secrets: WritableSecretStore;
}

/** The shared parts from the environment: `TABLE_NAME`, `BELAY_SECRETS` (and `DYNAMODB_ENDPOINT` locally). */
export async function sharedPartsFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<SharedParts> {
  const tableName = getStringFromEnv('TABLE_NAME', env);
  const doc = documentClientFromEnv(env);
  return {
    doc,
    tableName,
    accounts: createAccountRegistry({ doc, tableName }),
    secrets: await secretStoreFromEnv(env),
  };
}

/**
 * Builds the engine's dependencies from the environment and the playbooks it runs. Called once
 * per process (cold start). Besides the variables of {@link settingsFromEnv}: `BELAY_DEFAULT_PLAN`
 * (plan of a tenant with none recorded), `BELAY_PLAN_CAPS` (caps per plan),
 * `BELAY_SERIALIZE_ACCOUNTS` (one job per connected account at a time).
 *
 * @param playbooks the bundle's own (`bundledPlaybooks`), or what `loadPlaybooks` found for a
 *   process that runs the engine from its sources (the local stack's API, tests)
 */
/**
 * Agent steps' provider keys in AWS: RunStep alone is bound to their secrets (the
 * `*_SECRET_ARN` variables), read once at cold start, and the process's models are configured
 * with them. A variable that is set (the local stack) wins and no call is made; with neither,
 * the models are configured from the environment at first use, as before.
 *
 * @returns whether a key was read from a secret
 */
export async function configureModelKeysFromEnv(
  env: NodeJS.ProcessEnv,
  reader?: SecretReader,
): Promise<boolean> {
  // Only RunStep, with a provider's model configured, is given a secret to read; every other
  // function builds no Secrets Manager client for this.
  if (!MODEL_KEY_VARIABLES.some((name) => env[SECRET_ARN_VARIABLES[name]]?.trim())) return false;
  const resolved = await resolveSecretEnv(env, MODEL_KEY_VARIABLES, reader);
  if (!MODEL_KEY_VARIABLES.some((name) => resolved[name] !== env[name])) return false;
  configureAgentModels(agentConfigFromEnv(resolved));
  return true;
}

export async function engineDepsFromEnv(
  env: NodeJS.ProcessEnv,
  playbooks: PlaybookRegistry,
  shared?: SharedParts,
): Promise<EngineDeps> {
  const { doc, tableName, accounts, secrets } = shared ?? (await sharedPartsFromEnv(env));
  const log = processLogger(ENGINE_SERVICE);
  const metrics = processMetrics(env);
  const defaultPlan = getOptionalStringFromEnv('BELAY_DEFAULT_PLAN', env) ?? 'free';
  if (!isPlanName(defaultPlan))
    throw new ConfigError('BELAY_DEFAULT_PLAN', 'must be free, starter, growth or enterprise');
  const busName = getOptionalStringFromEnv('EVENT_BUS_NAME', env);
  const apiBaseUrl = getOptionalStringFromEnv('BELAY_API_URL', env);
  const settings = settingsFromEnv(env);
  await configureModelKeysFromEnv(env);
  return {
    // Its writes are the business metrics; the step, attempt and session they name correlate the log lines after them.
    ledger: observeLedger(createLedger({ doc, tableName }), metrics, {
      onWrite: (entry) =>
        log.correlate({ step: entry.step, attempt: entry.attempt, sessionId: entry.sessionId }),
    }),
    browser: await browserAdapterFromDeployedEnv(env),
    playbooks,
    accounts,
    secrets,
    capacity: createLeaseCapacity({
      doc,
      tableName,
      defaultPlan,
      caps: planCapsFromEnv(env),
      leaseTtlSeconds: settings.leaseTtlSeconds,
      pollSeconds: settings.capacityPollSeconds,
      serializeAccounts: getFlagFromEnv('BELAY_SERIALIZE_ACCOUNTS', env),
    }),
    applications: applicationsFromEnv(env),
    notifier: busName
      ? observeNotifier(
          eventBridgeNotifier(eventBridgeClient(env), busName, apiBaseUrl, { log }),
          metrics,
          'eventbridge',
        )
      : localNotifier(log, {
          apiBaseUrl,
          webhookUrl: getOptionalStringFromEnv('BELAY_WAIT_WEBHOOK_URL', env),
        }),
    screenshots: screenshotStoreFromEnv(env),
    actionCache: actionCacheFromEnv(env, doc, tableName),
    clock: () => new Date(),
    log,
    recordSessionOwner: (sessionId, tenantId, jobId, app) =>
      recordSessionOwner(doc, tableName, sessionId, tenantId, jobId, { app }),
    faultPoint,
    settings,
  };
}

/**
 * The action cache: in the ledger table, unless `BELAY_ACTION_CACHE=off` (then agent steps ask
 * their model for every action, as they did before the cache).
 */
export function actionCacheFromEnv(
  env: NodeJS.ProcessEnv,
  doc: DynamoDBDocumentClient,
  tableName: string,
): ActionCacheStore {
  const mode = getOptionalStringFromEnv('BELAY_ACTION_CACHE', env) ?? 'on';
  if (mode !== 'on' && mode !== 'off') throw new ConfigError('BELAY_ACTION_CACHE', 'must be on or off');
  return mode === 'off' ? NO_ACTION_CACHE : createActionCacheStore({ doc, tableName });
}

let cached: Promise<EngineDeps> | undefined;

/**
 * The process's engine dependencies, built on first use and reused while the process is warm:
 * a bundled handler's, with the playbooks generated into its bundle.
 */
export function engineDeps(): Promise<EngineDeps> {
  cached ??= engineDepsFromEnv(process.env, bundledPlaybooks).catch((err: unknown) => {
    cached = undefined;
    throw err;
  });
  return cached;
}
