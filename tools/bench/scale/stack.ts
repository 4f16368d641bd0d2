/**
 * The engine of the load simulation, in one process: DynamoDB Local (its own JVM), the local
 * Step Functions runner running the real `statemachine/job.asl.json` behind its HTTP endpoint
 * (the API's real `SFNClient` starts executions there), the real handler cores of every state
 * invoked in this process through `meterInvocation` (as `engineHandler` runs them), the real API
 * behind the local API server, and the scripted browser of `world.ts`. Handler cores run
 * in-process rather than as a thousand worker processes: the Lambda runner's process isolation
 * is for faults, and here it would only measure process start-up.
 */

import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SFNClient } from '@aws-sdk/client-sfn';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { awaitHuman } from '../../../lambdas/await-human/await-human.ts';
import { finish } from '../../../lambdas/finish/finish.ts';
import { unavailableAnchorIdentities } from '../../../lambdas/lib/accounts/anchor-identities.ts';
import { createConnectionStore } from '../../../lambdas/lib/accounts/connections.ts';
import { createAccountRegistry } from '../../../lambdas/lib/accounts/directory.ts';
import type { WritableSecretStore } from '../../../lambdas/lib/accounts/types.ts';
import { NO_ACTION_CACHE } from '../../../lambdas/lib/agent/cache/store.ts';
import { createConsoleSessionStore } from '../../../lambdas/lib/api/console/sessions.ts';
import { type ApiDeps, MAX_BODY_BYTES } from '../../../lambdas/lib/api/deps.ts';
import { createDynamoRateLimiter } from '../../../lambdas/lib/api/rate-limit.ts';
import { createApiKeyStore } from '../../../lambdas/lib/auth/api-keys.ts';
import { createLeaseCapacity } from '../../../lambdas/lib/capacity/leases.ts';
import {
  STATE_MACHINE_FUNCTIONS,
  type StateMachineFunction,
  substitutionKey,
} from '../../../lambdas/lib/engine/functions.ts';
import { meterInvocation } from '../../../lambdas/lib/engine/metering.ts';
import { unwrapRelayed } from '../../../lambdas/lib/engine/relay.ts';
import { recordSessionOwner } from '../../../lambdas/lib/engine/session-owners.ts';
import { DEFAULT_SETTINGS, type EngineDeps, type WaitEvent } from '../../../lambdas/lib/engine/types.ts';
import { createNoScreenshotStore } from '../../../lambdas/lib/evidence/store.ts';
import { createLedger, createLedgerTable } from '../../../lambdas/lib/ledger/index.ts';
import { createLogger } from '../../../lambdas/lib/logger.ts';
import { observeLedger } from '../../../lambdas/lib/metrics/ledger-metrics.ts';
import { createMetricsRecorder } from '../../../lambdas/lib/metrics/recorder.ts';
import { createWebhookStore } from '../../../lambdas/lib/notifications/store.ts';
import { unavailableReceiptSigner } from '../../../lambdas/lib/receipts/runtime.ts';
import { withTenantScope } from '../../../lambdas/lib/redact.ts';
import { openSession } from '../../../lambdas/open-session/open-session.ts';
import { reauthenticate } from '../../../lambdas/reauthenticate/reauthenticate.ts';
import { reconcile } from '../../../lambdas/reconcile/reconcile.ts';
import { recordFailure } from '../../../lambdas/record-failure/record-failure.ts';
import { runNextStep } from '../../../lambdas/run-step/next-step.ts';
import { start } from '../../../lambdas/start/start.ts';
import { type LocalApi, startLocalApi } from '../../../local/api/server.ts';
import { createDynamoDbClient, type DynamoDbLocal, startDynamoDbLocal } from '../../../local/dynamodb.ts';
import {
  createLocalStepFunctions,
  type LocalStepFunctions,
  startLocalSfnServer,
} from '../../../local/sfn/index.ts';
import { type DynamoProbe, probeDynamo } from './probe.ts';
import { createScriptedWorld, type ScriptedWorld, type ScriptedWorldOptions } from './world.ts';

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
const ACCOUNT = '000000000000';
const TABLE = 'belay-scale';
const arnOf = (name: StateMachineFunction): string =>
  `arn:aws:lambda:us-east-1:${ACCOUNT}:function:belay-${STATE_MACHINE_FUNCTIONS[name]}`;

export interface ScaleStackOptions extends ScriptedWorldOptions {
  dataDir: string;
  /** Told when a job waits for a person (the scripted approver answers through the API). */
  onWaiting(event: WaitEvent): void;
  /** Pause of `WaitForCapacity` and `RetryBackoff`, ms (the machine's own pauses, shortened). */
  waitMs: number;
  /** Sockets of the process's one DynamoDB client (the SDK's default is 50). */
  sockets: number;
}

/** Task invocations: how many ran, are running, and the most at once. */
export interface InvocationCounts {
  total: number;
  byFunction: Record<string, number>;
  inFlight: number;
  peak: number;
  startOutcomes: Record<string, number>;
}

export interface ScaleStack {
  dynamodb: DynamoDbLocal;
  probe: DynamoProbe;
  world: ScriptedWorld;
  sfn: LocalStepFunctions;
  api: LocalApi;
  deps: ApiDeps;
  engine: EngineDeps;
  invocations: InvocationCounts;
  metricsFile: string;
  tableName: string;
  stop(): Promise<void>;
}

/** An in-memory credential store: the scripted sign-in never reads a password. */
function noCredentials(): WritableSecretStore {
  return {
    getCredentials: async () => ({ username: 'scale@example.com', password: 'not-used' }),
    putCredentials: async () => undefined,
    deleteCredentials: async () => undefined,
  };
}

export async function startScaleStack(options: ScaleStackOptions): Promise<ScaleStack> {
  // Node 20 is supported here; the SDK's notice about its future releases is not news to a user.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const cleanups: (() => Promise<void>)[] = [];
  const stop = async (): Promise<void> => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  };
  try {
    const dynamodb = await startDynamoDbLocal();
    cleanups.push(() => dynamodb.stop());
    const raw = createDynamoDbClient(dynamodb.endpoint);
    await createLedgerTable(raw, TABLE);
    raw.destroy();
    // One client for every in-flight invocation of the process. In AWS each Lambda environment
    // has its own client and runs one invocation at a time; the SDK's default of 50 sockets per
    // client would queue the rest here (the first run of this simulation found 939 waiting).
    const doc = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: dynamodb.endpoint,
        region: 'local',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        maxAttempts: 3,
        requestHandler: { httpAgent: { maxSockets: options.sockets } },
      }),
      { marshallOptions: { removeUndefinedValues: true } },
    );
    cleanups.push(async () => doc.destroy());
    const probe = probeDynamo(doc);
    const world = createScriptedWorld(options);
    const metricsFile = join(options.dataDir, 'metrics.jsonl');
    const metrics = createMetricsRecorder({
      immediate: true,
      sink: (line) => appendFileSync(metricsFile, `${line}\n`),
    });
    const log = createLogger({ level: 'error', sink: (line) => process.stderr.write(`${line}\n`) });
    const accounts = createAccountRegistry({ doc, tableName: TABLE });
    const engine: EngineDeps = {
      ledger: observeLedger(createLedger({ doc, tableName: TABLE }), metrics),
      browser: world.browser,
      playbooks: world.playbooks,
      accounts,
      secrets: noCredentials(),
      // Every tenant may run every job at once: the cap is not what is measured.
      capacity: createLeaseCapacity({
        doc,
        tableName: TABLE,
        defaultPlan: 'enterprise',
        caps: { enterprise: 100_000 },
        pollSeconds: 1,
      }),
      applications: { shop: { baseUrl: 'http://127.0.0.1:9', allowedDomains: ['127.0.0.1'] } },
      notifier: {
        async waiting(event) {
          options.onWaiting(event);
        },
        // The load simulation runs no drift check.
        checkFailed: async () => undefined,
      },
      clock: () => new Date(),
      log,
      recordSessionOwner: (sessionId, tenantId, jobId, app) =>
        recordSessionOwner(doc, TABLE, sessionId, tenantId, jobId, { app }),
      faultPoint: async () => {},
      // Screenshots are measured by the browser section; the load simulation keeps none.
      screenshots: createNoScreenshotStore(),
      // The load simulation's playbooks are scripted: no agent step looks the cache up.
      actionCache: NO_ACTION_CACHE,
      settings: { ...DEFAULT_SETTINGS, retryBackoffSeconds: 1, capacityPollSeconds: 1 },
    };

    const invocations: InvocationCounts = {
      total: 0,
      byFunction: {},
      inFlight: 0,
      peak: 0,
      startOutcomes: {},
    };
    const names = Object.keys(STATE_MACHINE_FUNCTIONS) as StateMachineFunction[];
    const byArn = new Map(names.map((n) => [arnOf(n), n]));
    const sfn = createLocalStepFunctions({
      definition: readFileSync(new URL('../../../statemachine/job.asl.json', import.meta.url), 'utf8'),
      substitutions: Object.fromEntries(names.map((n) => [substitutionKey(n), arnOf(n)])),
      invoke: async (arn, payload) => {
        const fn = byArn.get(arn);
        if (!fn)
          throw Object.assign(new Error(`no function ${arn}`), { name: 'Lambda.ResourceNotFoundException' });
        const event = payload as { tenantId: string; jobId: string };
        invocations.total += 1;
        invocations.byFunction[fn] = (invocations.byFunction[fn] ?? 0) + 1;
        invocations.inFlight += 1;
        invocations.peak = Math.max(invocations.peak, invocations.inFlight);
        try {
          const result = await withTenantScope(String(event.tenantId), () =>
            meterInvocation(engine, fn, event, (d) => CORES[fn](d, payload as never)),
          );
          if (fn === 'Start') {
            const outcome = String((result as { outcome?: unknown })?.outcome);
            invocations.startOutcomes[outcome] = (invocations.startOutcomes[outcome] ?? 0) + 1;
          }
          return result;
        } finally {
          invocations.inFlight -= 1;
        }
      },
      retryIntervalMs: options.waitMs,
      waitTimeOverrides: { WaitForCapacity: options.waitMs, RetryBackoff: options.waitMs },
    });
    cleanups.push(() => sfn.shutdown());
    const sfnServer = await startLocalSfnServer(sfn, { port: 0 });
    cleanups.push(() => sfnServer.stop());
    const client = new SFNClient({
      endpoint: sfnServer.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      requestHandler: { httpAgent: { maxSockets: options.sockets } },
    });
    cleanups.push(async () => client.destroy());
    const keys = createApiKeyStore({ doc, tableName: TABLE });
    const deps: ApiDeps = {
      engine,
      accounts,
      credentials: noCredentials(),
      anchor: unavailableAnchorIdentities(),
      connections: createConnectionStore({ doc, tableName: TABLE }),
      keys,
      consoleSessions: createConsoleSessionStore({ doc, tableName: TABLE, keys, ttlMinutes: 120 }),
      notifications: {
        webhooks: createWebhookStore({ doc, tableName: TABLE }),
        signingKey: '',
        allowLoopback: false,
      },
      // Per-key limits high enough not to be what is measured; each request still writes its RATE# item.
      rateLimiter: createDynamoRateLimiter({
        doc,
        tableName: TABLE,
        limits: { ratePerSecond: 100_000, burst: 100_000 },
      }),
      anonymousRateLimiter: createDynamoRateLimiter({
        doc,
        tableName: TABLE,
        limits: { ratePerSecond: 100_000, burst: 100_000 },
      }),
      sfn: client,
      stateMachineArn: sfn.stateMachineArn,
      doc,
      tableName: TABLE,
      webhooks: { secrets: ['whsec_scale'], toleranceSeconds: 300 },
      baseUrl: '',
      receipts: unavailableReceiptSigner(),
      maxBodyBytes: MAX_BODY_BYTES,
      mcpAnswerTenants: new Set(),
    };
    const api = await startLocalApi({ port: 0, deps });
    cleanups.push(() => api.stop());
    return {
      dynamodb,
      probe,
      world,
      sfn,
      api,
      deps,
      engine,
      invocations,
      metricsFile,
      tableName: TABLE,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
