import type { SFNClient } from '@aws-sdk/client-sfn';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AnchorIdentities } from '../accounts/anchor-identities.ts';
import type { ConnectionStore } from '../accounts/connections.ts';
import type { AccountRegistry } from '../accounts/directory.ts';
import type { WritableSecretStore } from '../accounts/types.ts';
import type { ApiKeyStore } from '../auth/api-keys.ts';
import { ConfigError, getOptionalStringFromEnv } from '../config.ts';
import type { EngineDeps } from '../engine/types.ts';
import type { WebhookStore } from '../notifications/store.ts';
import type { Playbook } from '../playbooks/contract.ts';
import { UnknownPlaybookError } from '../playbooks/errors.ts';
import type { ReceiptSigner } from '../receipts/sign.ts';
import type { ConsoleSessionStore } from './console/sessions.ts';
import type { RateLimiter } from './rate-limit.ts';
import { ID_PATTERN } from './schemas.ts';

/** Checking Anchor's webhooks: the shared signing secrets and how fresh a delivery must be. */
export interface WebhookSettings {
  /** Signing secrets; more than one while a secret is being rotated (Anchor keeps the old one valid for 24 h). */
  secrets: string[];
  /** Deliveries older (or further in the future) than this are refused. */
  toleranceSeconds: number;
}

/** Everything the API's handlers need, built once at the edge and injected. */
export interface ApiDeps {
  /**
   * The engine's dependencies: the ledger, playbooks, browser (to complete MFA in the job's
   * session), capacity (to release leases on cancel), logger and clock.
   */
  engine: EngineDeps;
  /**
   * The tenant's connected accounts; `list` lets a submission leave out an application's only
   * account; `create` and `revoke` serve the accounts routes.
   */
  accounts: AccountRegistry;
  /** Where the accounts routes store (and delete) credentials: the engine's secret store. */
  credentials: WritableSecretStore;
  /** Anchor's applications and identities (hosted sign-in; an identity deleted when its account is revoked). */
  anchor: AnchorIdentities;
  /** Accounts being connected through Anchor's hosted sign-in, until their callback. */
  connections: ConnectionStore;
  keys: ApiKeyStore;
  /** Console sign-ins: sessions exchanged for an API key (cookie-authenticated console routes). */
  consoleSessions: ConsoleSessionStore;
  /** Per API key. */
  rateLimiter: RateLimiter;
  /** Per source address, for requests with no valid key (public routes, refused keys). */
  anonymousRateLimiter: RateLimiter;
  sfn: SFNClient;
  stateMachineArn: string;
  /** The ledger table (webhook dedupe and session owners live there too). */
  doc: DynamoDBDocumentClient;
  tableName: string;
  webhooks: WebhookSettings;
  /** Tenants' outgoing webhooks: where they are kept, the key their secrets derive from ('' = not configured). */
  notifications: { webhooks: WebhookStore; signingKey: string; allowLoopback: boolean };
  /** The key that signs job receipts (KMS in AWS, a key file locally; one that refuses when none is configured). */
  receipts: ReceiptSigner;
  /** Base URL of the API for links; `''` = the URL the request came in on. */
  baseUrl: string;
  /** Largest request body accepted (bytes). */
  maxBodyBytes: number;
  /**
   * Tenants whose agents may answer approvals, one-time codes and reviews through MCP (with an
   * approver key that did not submit the job); for every other tenant only people answer them.
   */
  mcpAnswerTenants: ReadonlySet<string>;
}

/**
 * A comma-separated list of tenant ids from the environment variable `name`, as a set; unset
 * or empty = none. An entry that is not a tenant id fails the cold start with the variable's name.
 */
export function getTenantListFromEnv(name: string, env: NodeJS.ProcessEnv): ReadonlySet<string> {
  const tenants = (getOptionalStringFromEnv(name, env) ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  for (const tenant of tenants) {
    if (!ID_PATTERN.test(tenant)) {
      throw new ConfigError(
        name,
        `${JSON.stringify(tenant)} is not a tenant id (1-64 of A-Z, a-z, 0-9, _, -)`,
      );
    }
  }
  return new Set(tenants);
}

/** 256 KiB: the largest body the API accepts (and Step Functions' payload limit). */
export const MAX_BODY_BYTES = 256 * 1024;

/** The playbook with this id, or `undefined` when there is none. */
export function findPlaybook(deps: Pick<ApiDeps, 'engine'>, id: string): Playbook | undefined {
  try {
    return deps.engine.playbooks.get(id);
  } catch (err) {
    if (err instanceof UnknownPlaybookError) return undefined;
    throw err;
  }
}
