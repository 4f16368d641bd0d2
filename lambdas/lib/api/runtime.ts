import { anchorIdentitiesFromEnv } from '../accounts/anchor-identities.ts';
import { createConnectionStore } from '../accounts/connections.ts';
import { createApiKeyStore } from '../auth/api-keys.ts';
import { sfnClientFromEnv } from '../aws/step-functions.ts';
import { resolveSecretEnv } from '../browser/secret-key.ts';
import { getIntFromEnv, getOptionalStringFromEnv, getStringFromEnv } from '../config.ts';
import { engineDepsFromEnv, sharedPartsFromEnv } from '../engine/runtime.ts';
import { createWebhookStore } from '../notifications/store.ts';
import { bundledPlaybooks } from '../playbooks/bundled.ts';
import type { PlaybookRegistry } from '../playbooks/registry.ts';
import { receiptSignerFromEnv } from '../receipts/runtime.ts';
import { createConsoleSessionStore } from './console/sessions.ts';
import { type ApiDeps, getTenantListFromEnv, MAX_BODY_BYTES } from './deps.ts';
import { anonymousRateLimiterFromEnv, createDynamoRateLimiter } from './rate-limit.ts';

/**
 * The API's dependencies from the environment (read once, at cold start). Besides the
 * engine's variables (`TABLE_NAME`, `BELAY_APPLICATIONS`, `BELAY_SECRETS`, ...):
 * - `STATE_MACHINE_ARN` (required): the job state machine;
 * - `ANCHOR_WEBHOOK_SECRET`: Anchor's signing secret(s), comma-separated while rotating;
 *   without one every webhook delivery is refused;
 * - `ANCHOR_WEBHOOK_TOLERANCE_SECONDS` (default 300): freshness window of a delivery;
 * - `BELAY_API_URL`: base URL for links (default: relative links);
 * - `BELAY_WEBHOOK_SIGNING_KEY` (or `..._SECRET_ARN`): the key tenants' webhook secrets derive from;
 *   `BELAY_WEBHOOK_ALLOW_LOOPBACK=true` (local stack only) allows http://127.0.0.1 receivers;
 * - `ANCHORBROWSER_API_KEY` (or `..._SECRET_ARN`), `ANCHORBROWSER_BASE_URL`: Anchor, for connecting
 *   accounts through its hosted sign-in; `ANCHOR_CONNECT_PAGE_URL`: that page (default Anchor's);
 * - `BELAY_CONSOLE_SESSION_MINUTES` (default 120): how long a console sign-in lasts;
 * - `BELAY_API_RATE_PER_SECOND` (default 10) and `BELAY_API_BURST` (default 20): per-key limits;
 * - `BELAY_API_ANONYMOUS_RATE_PER_SECOND` (default 5) and `BELAY_API_ANONYMOUS_BURST` (default 30):
 *   per source address, for requests with no valid key;
 * - `BELAY_MCP_ANSWER_TENANTS`: tenants (comma-separated) whose agents may answer approvals,
 *   one-time codes and reviews through MCP; default none (people answer them);
 * - `BELAY_RECEIPT_KEY`: the key receipts are signed with, `kms:<key id or ARN>` or `file:<path>`;
 *   without one `GET /jobs/{jobId}/receipt` answers 503;
 * - `SFN_ENDPOINT`, `DYNAMODB_ENDPOINT`: local endpoints.
 *
 * @param playbooks the bundle's (`bundledPlaybooks`), or `loadPlaybooks`' for an API run from its sources
 */
export async function apiDepsFromEnv(env: NodeJS.ProcessEnv, playbooks: PlaybookRegistry): Promise<ApiDeps> {
  const withSecrets = await resolveSecretEnv(env, [
    'ANCHOR_WEBHOOK_SECRET',
    'BELAY_WEBHOOK_SIGNING_KEY',
    'ANCHORBROWSER_API_KEY',
  ]);
  const stateMachineArn = getStringFromEnv('STATE_MACHINE_ARN', env);
  const shared = await sharedPartsFromEnv(env);
  const { doc, tableName } = shared;
  const engine = await engineDepsFromEnv(env, playbooks, shared);
  const keys = createApiKeyStore({ doc, tableName });
  return {
    engine,
    accounts: shared.accounts,
    credentials: shared.secrets,
    anchor: anchorIdentitiesFromEnv(withSecrets),
    connections: createConnectionStore({ doc, tableName }),
    keys,
    consoleSessions: createConsoleSessionStore({
      doc,
      tableName,
      keys,
      ttlMinutes: getIntFromEnv('BELAY_CONSOLE_SESSION_MINUTES', 120, { min: 1, max: 24 * 60 }, env),
    }),
    rateLimiter: createDynamoRateLimiter({
      doc,
      tableName,
      limits: {
        ratePerSecond: getIntFromEnv('BELAY_API_RATE_PER_SECOND', 10, { min: 1 }, env),
        burst: getIntFromEnv('BELAY_API_BURST', 20, { min: 1 }, env),
      },
    }),
    anonymousRateLimiter: anonymousRateLimiterFromEnv(doc, tableName, env),
    sfn: sfnClientFromEnv(env),
    stateMachineArn,
    doc,
    tableName,
    webhooks: {
      secrets: (getOptionalStringFromEnv('ANCHOR_WEBHOOK_SECRET', withSecrets) ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      toleranceSeconds: getIntFromEnv('ANCHOR_WEBHOOK_TOLERANCE_SECONDS', 300, { min: 1, max: 3600 }, env),
    },
    notifications: {
      webhooks: createWebhookStore({ doc, tableName }),
      signingKey: getOptionalStringFromEnv('BELAY_WEBHOOK_SIGNING_KEY', withSecrets) ?? '',
      allowLoopback: getOptionalStringFromEnv('BELAY_WEBHOOK_ALLOW_LOOPBACK', env) === 'true',
    },
    receipts: receiptSignerFromEnv(env),
    baseUrl: getOptionalStringFromEnv('BELAY_API_URL', env) ?? '',
    maxBodyBytes: MAX_BODY_BYTES,
    mcpAnswerTenants: getTenantListFromEnv('BELAY_MCP_ANSWER_TENANTS', env),
  };
}

let cached: Promise<ApiDeps> | undefined;

/** The process's API dependencies, built on first use and reused while the process is warm. */
export function apiDeps(): Promise<ApiDeps> {
  cached ??= apiDepsFromEnv(process.env, bundledPlaybooks).catch((err: unknown) => {
    cached = undefined;
    throw err;
  });
  return cached;
}
