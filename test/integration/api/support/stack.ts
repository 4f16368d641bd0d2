import { readFileSync } from 'node:fs';
import { SFNClient } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll } from 'vitest';
import { awaitHuman } from '../../../../lambdas/await-human/await-human.ts';
import { finish } from '../../../../lambdas/finish/finish.ts';
import { unavailableAnchorIdentities } from '../../../../lambdas/lib/accounts/anchor-identities.ts';
import { createConnectionStore } from '../../../../lambdas/lib/accounts/connections.ts';
import { createAccountRegistry } from '../../../../lambdas/lib/accounts/directory.ts';
import { createActionCacheStore } from '../../../../lambdas/lib/agent/cache/store.ts';
import { createConsoleSessionStore } from '../../../../lambdas/lib/api/console/sessions.ts';
import type { ApiDeps } from '../../../../lambdas/lib/api/deps.ts';
import { MAX_BODY_BYTES } from '../../../../lambdas/lib/api/deps.ts';
import {
  createDynamoRateLimiter,
  type RateLimitOptions,
  unlimited,
} from '../../../../lambdas/lib/api/rate-limit.ts';
import { createApiKeyStore, type Role } from '../../../../lambdas/lib/auth/api-keys.ts';
import { createLeaseCapacity } from '../../../../lambdas/lib/capacity/leases.ts';
import {
  STATE_MACHINE_FUNCTIONS,
  type StateMachineFunction,
  substitutionKey,
} from '../../../../lambdas/lib/engine/functions.ts';
import { localNotifier } from '../../../../lambdas/lib/engine/notifiers.ts';
import { unwrapRelayed } from '../../../../lambdas/lib/engine/relay.ts';
import { recordSessionOwner } from '../../../../lambdas/lib/engine/session-owners.ts';
import {
  DEFAULT_SETTINGS,
  type EngineDeps,
  type EngineSettings,
} from '../../../../lambdas/lib/engine/types.ts';
import { createNoScreenshotStore } from '../../../../lambdas/lib/evidence/store.ts';
import { createLedger } from '../../../../lambdas/lib/ledger/index.ts';
import { createLogger } from '../../../../lambdas/lib/logger.ts';
import { createWebhookStore } from '../../../../lambdas/lib/notifications/store.ts';
import { unavailableReceiptSigner } from '../../../../lambdas/lib/receipts/runtime.ts';
import { openSession } from '../../../../lambdas/open-session/open-session.ts';
import { reauthenticate } from '../../../../lambdas/reauthenticate/reauthenticate.ts';
import { reconcile } from '../../../../lambdas/reconcile/reconcile.ts';
import { recordFailure } from '../../../../lambdas/record-failure/record-failure.ts';
import { runNextStep } from '../../../../lambdas/run-step/next-step.ts';
import { start } from '../../../../lambdas/start/start.ts';
import { type LocalApi, startLocalApi } from '../../../../local/api/server.ts';
import {
  type EnforcementSpec,
  runAs,
  stackPolicies,
  synthesizedTemplate,
} from '../../../../local/iam/index.ts';
import { type LocalSfnServer, startLocalSfnServer } from '../../../../local/sfn/http.ts';
import { createLocalStepFunctions, type LocalStepFunctions } from '../../../../local/sfn/runner.ts';
import { type DynamoDbHandle, useDynamoDb } from '../../../support/dynamodb.ts';
import { createFakeWorld, type FakeWorld, memorySecretStore, testPlaybooks } from './fakes.ts';

/**
 * The API under test, on loopback: DynamoDB Local, the local Step Functions runner running
 * the real `statemachine/job.asl.json` behind its HTTP endpoint (the real `SFNClient` talks
 * to it), the real handler cores of every state (in this process, over the same ledger),
 * and the local API server. The browser and the target site are in-memory fakes.
 */

export const TENANT_A = 'acme';
export const TENANT_B = 'globex';
const ACCOUNT = '000000000000';

type Core = (deps: EngineDeps, payload: never) => Promise<unknown>;
const CORES: Record<StateMachineFunction, Core> = {
  Start: start as Core,
  OpenSession: openSession as Core,
  // As the handler: RunNextStep hands on a result that is not a completed step.
  RunStep: (async (deps: EngineDeps, event: never) => unwrapRelayed(await runNextStep(deps, event))) as Core,
  Reauthenticate: reauthenticate as Core,
  Reconcile: reconcile as Core,
  AwaitHuman: awaitHuman as Core,
  Finish: finish as Core,
  RecordFailure: recordFailure as Core,
};

const arnOf = (name: StateMachineFunction): string =>
  `arn:aws:lambda:us-east-1:${ACCOUNT}:function:test-${STATE_MACHINE_FUNCTIONS[name]}`;

export interface ApiStack {
  url(): string;
  deps(): ApiDeps;
  world(): FakeWorld;
  sfn(): LocalStepFunctions;
  ddb: DynamoDbHandle;
  /** Keys by name: `a` (acme, submitter+approver), `aApprover`, `aSubmitter`, `b` (globex, submitter+approver). */
  key(name: 'a' | 'aApprover' | 'aSubmitter' | 'b'): string;
  /** Another API server on the same stack with these rate limits (per key, and per address without a key). */
  startApi(limits: RateLimitOptions, anonymous?: RateLimitOptions): Promise<LocalApi>;
}

export interface ApiStackOptions {
  /** Anchor webhook signing secrets. */
  webhookSecrets?: string[];
  /** Skip per-key rate limiting (a write per request) where a test does not look at it. */
  unlimited?: boolean;
  /** Engine settings over the stack's (no retry backoff, 1 s capacity polls). */
  settings?: Partial<EngineSettings>;
  /** Limits per source address of requests with no valid key (default: generous, like the per-key ones). */
  anonymousLimits?: RateLimitOptions;
  /** Tenants whose agents may answer people's waits through MCP (`BELAY_MCP_ANSWER_TENANTS`); default none. */
  mcpAnswerTenants?: string[];
}

/** Registers beforeAll/afterAll hooks that start (and stop, by their own handles) the whole stack. */
export function useApiStack(options: ApiStackOptions = {}): ApiStack {
  const ddb = useDynamoDb();
  let api: LocalApi | undefined;
  let sfnServer: LocalSfnServer | undefined;
  let sfn: LocalStepFunctions | undefined;
  let client: SFNClient | undefined;
  let deps: ApiDeps | undefined;
  let world: FakeWorld | undefined;
  const extra: LocalApi[] = [];
  let apiIam: { handler: EnforcementSpec; authorizer: EnforcementSpec } | undefined;
  const keys = new Map<string, string>();

  beforeAll(async () => {
    const doc = ddb.doc();
    const tableName = ddb.tableName();
    world = createFakeWorld();
    const log = createLogger({ level: 'error', sink: (line) => process.stderr.write(`${line}\n`) });
    const accounts = createAccountRegistry({ doc, tableName });
    const credentials = memorySecretStore({ username: 'user@example.com', password: 'pw' });
    const engine: EngineDeps = {
      ledger: createLedger({ doc, tableName }),
      browser: world.browser,
      playbooks: testPlaybooks(world),
      accounts,
      secrets: credentials,
      capacity: createLeaseCapacity({ doc, tableName, defaultPlan: 'growth', pollSeconds: 1 }),
      applications: { shop: { baseUrl: 'http://127.0.0.1:9', allowedDomains: ['127.0.0.1'] } },
      notifier: localNotifier(log),
      screenshots: createNoScreenshotStore(),
      actionCache: createActionCacheStore({ doc, tableName }),
      clock: () => new Date(),
      log,
      recordSessionOwner: (sessionId, tenantId, jobId, app) =>
        recordSessionOwner(doc, tableName, sessionId, tenantId, jobId, { app }),
      faultPoint: async () => {},
      settings: { ...DEFAULT_SETTINGS, retryBackoffSeconds: 0, capacityPollSeconds: 1, ...options.settings },
    };
    const definition = readFileSync(
      new URL('../../../../statemachine/job.asl.json', import.meta.url),
      'utf8',
    );
    const names = Object.keys(STATE_MACHINE_FUNCTIONS) as StateMachineFunction[];
    const stateMachineArn = `arn:aws:states:us-east-1:${ACCOUNT}:stateMachine:belay-api-test`;
    // Each core and the API are held to their IAM policies in the synthesized template, as in AWS.
    const iam = stackPolicies(await synthesizedTemplate(), {
      region: 'us-east-1',
      account: ACCOUNT,
      stackName: 'Belay',
      tableName,
      stateMachineArn,
      functions: {
        ...Object.fromEntries(names.map((n) => [n, `test-${STATE_MACHINE_FUNCTIONS[n]}`])),
        ApiHandler: 'test-api',
        ApiAuthorizer: 'test-authorizer',
      },
    });
    const specOf = (id: string): EnforcementSpec => {
      const spec = iam.specs[id];
      if (!spec) throw new Error(`no policy for ${id}`);
      return spec;
    };
    apiIam = { handler: specOf('ApiHandler'), authorizer: specOf('ApiAuthorizer') };
    const byArn = new Map(names.map((n) => [arnOf(n), { core: CORES[n], spec: specOf(n) }]));
    sfn = createLocalStepFunctions({
      definition,
      substitutions: Object.fromEntries(names.map((n) => [substitutionKey(n), arnOf(n)])),
      stateMachineArn,
      invoke: async (arn, payload) => {
        const fn = byArn.get(arn);
        if (!fn)
          throw Object.assign(new Error(`no function ${arn}`), { name: 'Lambda.ResourceNotFoundException' });
        return runAs(fn.spec, () => fn.core(engine, payload as never));
      },
      retryIntervalMs: 10,
      waitTimeOverrides: { WaitForCapacity: 50, RetryBackoff: 10 },
    });
    sfnServer = await startLocalSfnServer(sfn, { port: 0 });
    client = new SFNClient({
      endpoint: sfnServer.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const keyStore = createApiKeyStore({ doc, tableName });
    deps = {
      engine,
      accounts,
      credentials,
      anchor: unavailableAnchorIdentities(),
      connections: createConnectionStore({ doc, tableName }),
      keys: keyStore,
      consoleSessions: createConsoleSessionStore({ doc, tableName, keys: keyStore, ttlMinutes: 60 }),
      rateLimiter: options.unlimited
        ? unlimited
        : createDynamoRateLimiter({ doc, tableName, limits: { ratePerSecond: 1000, burst: 100_000 } }),
      anonymousRateLimiter: options.anonymousLimits
        ? createDynamoRateLimiter({ doc, tableName, limits: options.anonymousLimits })
        : options.unlimited
          ? unlimited
          : createDynamoRateLimiter({ doc, tableName, limits: { ratePerSecond: 1000, burst: 100_000 } }),
      sfn: client,
      stateMachineArn: sfn.stateMachineArn,
      doc,
      tableName,
      webhooks: { secrets: options.webhookSecrets ?? ['whsec_test_secret'], toleranceSeconds: 300 },
      notifications: {
        webhooks: createWebhookStore({ doc, tableName }),
        signingKey: 'test-signing-key',
        allowLoopback: true,
      },
      baseUrl: '',
      receipts: unavailableReceiptSigner(),
      maxBodyBytes: MAX_BODY_BYTES,
      mcpAnswerTenants: new Set(options.mcpAnswerTenants ?? []),
    };
    api = await startLocalApi({ port: 0, deps, iam: apiIam });

    const make = async (name: string, tenant: string, roles: Role[]): Promise<void> => {
      keys.set(name, (await keyStore.create(tenant, roles, { label: name, plan: 'enterprise' })).apiKey);
    };
    await make('a', TENANT_A, ['submitter', 'approver']);
    await make('aApprover', TENANT_A, ['approver']);
    await make('aSubmitter', TENANT_A, ['submitter']);
    await make('b', TENANT_B, ['submitter', 'approver']);
    await accounts.create({
      tenantId: TENANT_A,
      application: 'shop',
      label: 'Shop',
      accountId: 'acct_acme_shop',
    });
    await accounts.create({
      tenantId: TENANT_A,
      application: 'shop',
      label: 'Shop 2',
      accountId: 'acct_acme_shop2',
    });
    await accounts.create({
      tenantId: TENANT_A,
      application: 'crm',
      label: 'CRM',
      accountId: 'acct_acme_crm',
    });
    await accounts.create({
      tenantId: TENANT_A,
      application: 'shop',
      label: 'Old shop',
      accountId: 'acct_acme_old',
    });
    await accounts.revoke(TENANT_A, 'acct_acme_old');
    await accounts.create({
      tenantId: TENANT_B,
      application: 'shop',
      label: 'Shop',
      accountId: 'acct_globex_shop',
    });
  });

  afterAll(async () => {
    for (const other of extra) await other.stop();
    await api?.stop();
    await sfn?.shutdown();
    await sfnServer?.stop();
    client?.destroy();
  });

  const need = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is not ready`);
    return value;
  };
  return {
    url: () => need(api, 'API').url,
    deps: () => need(deps, 'API deps'),
    world: () => need(world, 'fake world'),
    sfn: () => need(sfn, 'Step Functions runner'),
    ddb,
    key: (name) => need(keys.get(name), `key ${name}`),
    async startApi(limits, anonymous) {
      const base = need(deps, 'API deps');
      const other = await startLocalApi({
        port: 0,
        ...(apiIam ? { iam: apiIam } : {}),
        deps: {
          ...base,
          rateLimiter: createDynamoRateLimiter({ doc: base.doc, tableName: base.tableName, limits }),
          ...(anonymous
            ? {
                anonymousRateLimiter: createDynamoRateLimiter({
                  doc: base.doc,
                  tableName: base.tableName,
                  limits: anonymous,
                }),
              }
            : {}),
        },
      });
      extra.push(other);
      return other;
    },
  };
}
