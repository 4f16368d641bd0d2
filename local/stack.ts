import { readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { type StartedSites, startSites } from '../demo/sites/index.ts';
import {
  createFileSecretStore,
  type WritableSecretStore,
} from '../lambdas/lib/accounts/file-secret-store.ts';
import { apiDepsFromEnv } from '../lambdas/lib/api/runtime.ts';
import { createApiKeyStore } from '../lambdas/lib/auth/api-keys.ts';
import type { ApplicationConfig } from '../lambdas/lib/engine/applications.ts';
import { executionName, generationOf } from '../lambdas/lib/engine/executions.ts';
import {
  STATE_MACHINE_FUNCTIONS,
  type StateMachineFunction,
  substitutionKey,
  TASK_FUNCTION_FACTS,
} from '../lambdas/lib/engine/functions.ts';
import {
  createLedger,
  createLedgerTable,
  type Job,
  type Ledger,
  TERMINAL_STATUSES,
} from '../lambdas/lib/ledger/index.ts';
import { playbookDirs } from '../lambdas/lib/playbooks/discovery/find.ts';
import { type LoadedPlaybooks, loadPlaybooks } from '../lambdas/lib/playbooks/discovery/load.ts';
import { registerSdkResolution } from '../lambdas/lib/playbooks/discovery/register.ts';
import { writeRegistryModule } from '../lambdas/lib/playbooks/discovery/registry-module.ts';
import { type AnchorService, startAnchorService } from './anchor/service.ts';
import { startLocalApi } from './api/server.ts';
import {
  createDocumentClient,
  createDynamoDbClient,
  type DynamoDbLocal,
  startDynamoDbLocal,
} from './dynamodb.ts';
import { type LocalEventRule, startLocalEventRule } from './events.ts';
import { createLambdaRunner, type LambdaRunner } from './lambda/index.ts';
import { killRecorded, recordPid } from './pids.ts';
import { type LocalS3, startLocalS3 } from './s3.ts';
import { DEMO_TENANT, seedDemoTenant } from './seed.ts';
import {
  createLocalStepFunctions,
  type HistoryEvent,
  type LocalSfnServer,
  type LocalStepFunctions,
  startLocalSfnServer,
} from './sfn/index.ts';

/**
 * The local stack: the same state machine file and handler code as in AWS, on one machine.
 * DynamoDB Local, the Anchor-compatible browser service (detached Chromium per session), the
 * demo sites, the local Lambda runner (a process per invocation, or warm workers) and the
 * local Step Functions runner. Its data lives under one directory, so a restart resumes
 * every unfinished job from the ledger.
 */
export interface LocalStackOptions {
  /** Where everything persists (default `.local`). */
  dataDir?: string;
  /** Start from nothing: the data directory is emptied first. */
  fresh?: boolean;
  /** Loopback ports; 0 picks a free one. Defaults: anchor 8790, shop 8801, crm 8802, billing 8803, others free. */
  ports?: Partial<Record<'anchor' | 'shop' | 'crm' | 'billing' | 'dynamodb' | 'sfn', number>>;
  /** `warm` reuses a worker per function (a warm Lambda); `cold` starts a process per invocation. */
  lambdaMode?: 'warm' | 'cold';
  /** Workers' own output (JSON logs): shown, or dropped (default). */
  workerOutput?: 'inherit' | 'ignore';
  /** Pauses between retries, in ms (default: as the state machine says). Tests shorten them. */
  retryIntervalMs?: number;
  /** Wait-state durations in ms by state name (e.g. capacity polling), for tests. */
  waitTimeOverrides?: Record<string, number>;
  /** Length of a browser-service minute in ms (idle timeouts), for tests. */
  anchorMinuteMs?: number;
  /** Extra environment for the handlers (e.g. `BELAY_DEFAULT_PLAN`). */
  env?: Record<string, string>;
  /** Resume unfinished jobs on start (default true). */
  resume?: boolean;
  /** Progress lines while starting (default: none). */
  log?: (line: string) => void;
  /** The HTTP API on this port (default: a free one; `npm start` uses 3000), or `false` for none. */
  apiPort?: number | false;
  /** Every execution history event as it is recorded (progress displays, benchmarks). */
  onHistoryEvent?: (event: HistoryEvent) => void;
  /** Provisioned concurrency by function (warm mode), as `belay:provisionedRunSteps` deploys it for RunStep. */
  provisioned?: Partial<Record<StateMachineFunction, number>>;
  /**
   * Playbook folders besides the repository's `playbooks/` and `BELAY_PLAYBOOKS_DIRS`
   * (`npm start -- --playbooks <dir>`). Every playbook found is checked before anything starts.
   */
  playbookDirs?: string[];
  /**
   * Target applications over the demo sites (which are the defaults: `shop`, `crm`, `billing`
   * at the ports the stack starts them on); `npm start -- --applications` and `BELAY_APPLICATIONS`.
   */
  applications?: Record<string, ApplicationConfig>;
}

export interface LocalStack {
  dataDir: string;
  tableName: string;
  doc: DynamoDBDocumentClient;
  ledger: Ledger;
  secrets: WritableSecretStore;
  dynamodb: DynamoDbLocal;
  anchor: AnchorService;
  sites: StartedSites;
  /** The S3-compatible server holding screenshots. */
  s3: LocalS3;
  /** The stand-in for the rule that sends wait events to the notifier (tenants' webhooks). */
  waitEvents: LocalEventRule;
  lambdas: LambdaRunner;
  sfn: LocalStepFunctions;
  sfnServer: LocalSfnServer;
  /** Environment the handlers run with (also what an in-process API needs). */
  env: Record<string, string>;
  demoTenant: string;
  /** The HTTP API (`http://127.0.0.1:<port>`), when started. */
  apiUrl?: string;
  /** A submitter + approver + admin key of the demo tenant (kept under the data directory, local only). */
  demoApiKey: string;
  /** The playbooks the stack runs, where each came from, and the folders searched. */
  playbooks: LoadedPlaybooks;
  /** The target applications the handlers know (`BELAY_APPLICATIONS`): the demo sites and the configured ones. */
  applications: Record<string, ApplicationConfig>;
  /** Jobs resumed on start, with the execution that resumed each. */
  resumed: { tenantId: string; jobId: string; executionName: string }[];
  /** Starts a new execution for a job (submission or resume). */
  startJobExecution(tenantId: string, jobId: string, generation: number): Promise<string>;
  /** Stops everything this stack started. Browser sessions live on for a restart unless `endSessions`. */
  stop(options?: { endSessions?: boolean }): Promise<void>;
}

export const LOCAL_TABLE = 'belay-local';
/** The notifier function (tenants' webhooks), as the local Lambda runner knows it. */
const NOTIFY_ARN = 'arn:aws:lambda:us-east-1:000000000000:function:belay-notify';
const REGION = 'us-east-1';
const ACCOUNT = '000000000000';

/** The ARN the local stack gives a state machine function (the runner maps it back to its handler). */
export function localFunctionArn(name: StateMachineFunction): string {
  return `arn:aws:lambda:${REGION}:${ACCOUNT}:function:belay-${STATE_MACHINE_FUNCTIONS[name]}`;
}

export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const log = options.log ?? ((): void => undefined);
  const dataDir = resolve(options.dataDir ?? '.local');
  if (options.fresh) await rm(dataDir, { recursive: true, force: true });
  await mkdir(dataDir, { recursive: true });
  const pidFile = join(dataDir, 'pids.json');
  const stale = await killRecorded(pidFile);
  if (stale.length) log(`ended ${stale.length} process(es) left by a previous run: ${stale.join(', ')}`);

  const ports = { anchor: 8790, shop: 8801, crm: 8802, billing: 8803, dynamodb: 0, sfn: 0, ...options.ports };
  // Playbooks first: one that does not load, is not valid or shares an id stops the start here,
  // with its file named, before any service runs.
  registerSdkResolution();
  const playbooks = await loadPlaybooks(playbookDirs(options.playbookDirs ?? []));
  const playbookRegistry = await writeRegistryModule(playbooks);
  log(
    `playbooks: ${playbooks.playbooks.map((p) => p.playbook.id).join(', ') || 'none'} (from ${playbooks.dirs.length} folder(s))`,
  );
  const cleanups: (() => Promise<void>)[] = [];
  try {
    log('starting DynamoDB Local');
    await mkdir(join(dataDir, 'dynamodb'), { recursive: true });
    const dynamodb = await startDynamoDbLocal({ port: ports.dynamodb, dbPath: join(dataDir, 'dynamodb') });
    cleanups.push(() => dynamodb.stop());
    await recordPid(pidFile, dynamodb.pid);
    await createLedgerTable(createDynamoDbClient(dynamodb.endpoint), LOCAL_TABLE);
    const doc = createDocumentClient(dynamodb.endpoint);
    const ledger = createLedger({ doc, tableName: LOCAL_TABLE });

    log('starting the Anchor-compatible browser service');
    const anchor = await startAnchorService({
      port: ports.anchor,
      dataDir: join(dataDir, 'anchor'),
      ...(options.anchorMinuteMs ? { minuteMs: options.anchorMinuteMs } : {}),
    });
    let endSessions = false;
    cleanups.push(() => anchor.stop({ endSessions }));

    log('starting the demo sites');
    const sites = await startSites({
      dataDir: join(dataDir, 'sites'),
      ports: { shop: ports.shop, crm: ports.crm, billing: ports.billing },
      adminToken: await persistentToken(join(dataDir, 'sites-admin-token')),
    });
    cleanups.push(() => sites.stop());

    const s3 = await startLocalS3({ directory: join(dataDir, 's3') });
    cleanups.push(() => s3.stop());

    const secrets = await createFileSecretStore(join(dataDir, 'secrets'));
    await seedDemoTenant(doc, LOCAL_TABLE, secrets);

    // The demo sites are the defaults; configured applications add to them or replace them.
    const applications: Record<string, ApplicationConfig> = {
      shop: { baseUrl: sites.shop.baseUrl },
      crm: { baseUrl: sites.crm.baseUrl },
      billing: { baseUrl: sites.billing.baseUrl },
      ...options.applications,
    };
    for (const p of playbooks.playbooks) {
      const missing = Object.keys(p.playbook.applications).filter((app) => !(app in applications));
      if (missing.length)
        log(
          `warning: ${p.playbook.id} (${p.source}) works on ${missing.join(', ')}, which no application configures: its jobs fail at Start (--applications)`,
        );
    }

    const useRealAnchor = Boolean(process.env.ANCHORBROWSER_API_KEY);
    const env: Record<string, string> = {
      TABLE_NAME: LOCAL_TABLE,
      DYNAMODB_ENDPOINT: dynamodb.endpoint,
      AWS_REGION: REGION,
      ANCHORBROWSER_API_KEY: useRealAnchor ? (process.env.ANCHORBROWSER_API_KEY as string) : anchor.apiKey,
      ...(useRealAnchor
        ? process.env.ANCHORBROWSER_BASE_URL
          ? { ANCHORBROWSER_BASE_URL: process.env.ANCHORBROWSER_BASE_URL }
          : {}
        : { ANCHORBROWSER_BASE_URL: anchor.baseUrl }),
      BELAY_APPLICATIONS: JSON.stringify(applications),
      BELAY_SECRETS: `file:${join(dataDir, 'secrets')}`,
      S3_ENDPOINT: s3.endpoint,
      BELAY_SCREENSHOT_BUCKET: s3.bucket,
      BELAY_WEBHOOK_SIGNING_KEY: await persistentToken(join(dataDir, 'webhook-signing-key')),
      BELAY_WEBHOOK_ALLOW_LOOPBACK: 'true',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
      // Node 20 is supported here; the SDK's notice about its future releases is not news to a user.
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ...options.env,
    };

    const functions = Object.fromEntries(
      (Object.keys(STATE_MACHINE_FUNCTIONS) as StateMachineFunction[]).map((name) => [
        localFunctionArn(name),
        {
          entry: `lambdas/${STATE_MACHINE_FUNCTIONS[name]}/handler.ts`,
          // As the CDK stack deploys it: its timeout, and credentials only where it signs in.
          timeoutMs: TASK_FUNCTION_FACTS[name].timeoutSeconds * 1000,
          ...(TASK_FUNCTION_FACTS[name].readsCredentials ? {} : { env: { BELAY_SECRETS: 'none' } }),
          provisioned: options.provisioned?.[name] ?? 0,
        },
      ]),
    );
    // Not a state machine task: the target of the wait-event rule (tenants' webhooks).
    functions[NOTIFY_ARN] = {
      entry: 'lambdas/notify/handler.ts',
      timeoutMs: 60_000,
      env: { BELAY_SECRETS: 'none' },
      provisioned: 0,
    };
    const lambdas = createLambdaRunner({
      functions,
      mode: options.lambdaMode ?? 'warm',
      env,
      output: options.workerOutput ?? 'ignore',
      playbookRegistry,
    });
    cleanups.push(() => lambdas.stop());
    const waitEvents = await startLocalEventRule({
      invoke: (payload) =>
        lambdas.invoke(NOTIFY_ARN, payload, { timeoutMs: 60_000, signal: AbortSignal.timeout(60_000) }),
      log,
    });
    cleanups.push(() => waitEvents.stop());
    env.BELAY_WAIT_WEBHOOK_URL ??= waitEvents.url;

    const substitutions = Object.fromEntries(
      (Object.keys(STATE_MACHINE_FUNCTIONS) as StateMachineFunction[]).map((n) => [
        substitutionKey(n),
        localFunctionArn(n),
      ]),
    );
    const sfn = createLocalStepFunctions({
      definition: readFileSync(new URL('../statemachine/job.asl.json', import.meta.url), 'utf8'),
      substitutions,
      invoke: lambdas.invoke,
      ...(options.onHistoryEvent ? { onEvent: options.onHistoryEvent } : {}),
      ...(options.retryIntervalMs !== undefined ? { retryIntervalMs: options.retryIntervalMs } : {}),
      ...(options.waitTimeOverrides ? { waitTimeOverrides: options.waitTimeOverrides } : {}),
    });
    cleanups.push(() => sfn.shutdown());
    const sfnServer = await startLocalSfnServer(sfn, { port: ports.sfn });
    cleanups.push(() => sfnServer.stop());

    const startJobExecution = async (
      tenantId: string,
      jobId: string,
      generation: number,
    ): Promise<string> => {
      const name = executionName(tenantId, jobId, generation);
      await sfn.startExecution({ name, input: JSON.stringify({ tenantId, jobId }) });
      return name;
    };

    const demoApiKey = await demoKey(doc, join(dataDir, 'demo-api-key'));
    let apiUrl: string | undefined;
    if (options.apiPort !== false) {
      const apiEnv = {
        ...env,
        STATE_MACHINE_ARN: sfn.stateMachineArn,
        SFN_ENDPOINT: sfnServer.endpoint,
        BELAY_API_RATE_PER_SECOND: env.BELAY_API_RATE_PER_SECOND ?? '50',
        BELAY_API_BURST: env.BELAY_API_BURST ?? '100',
      };
      const api = await startLocalApi({
        port: options.apiPort ?? 0,
        deps: await apiDepsFromEnv(apiEnv, playbooks.registry),
      });
      cleanups.push(() => api.stop());
      apiUrl = api.url;
      env.BELAY_API_URL = api.url;
    }
    await writeFile(
      join(dataDir, 'stack.json'),
      JSON.stringify({
        tableName: LOCAL_TABLE,
        dynamodbEndpoint: dynamodb.endpoint,
        apiUrl,
        pid: process.pid,
      }),
    );

    const resumed: LocalStack['resumed'] = [];
    if (options.resume !== false) {
      for (const job of await unfinishedJobs(doc)) {
        const generation = job.executionName ? generationOf(job.executionName) + 1 : 0;
        const name = await startJobExecution(job.tenantId, job.jobId, Math.max(generation, 0));
        resumed.push({ tenantId: job.tenantId, jobId: job.jobId, executionName: name });
      }
      if (resumed.length) log(`resumed ${resumed.length} unfinished job(s) from the ledger`);
    }

    return {
      dataDir,
      tableName: LOCAL_TABLE,
      doc,
      ledger,
      secrets,
      dynamodb,
      anchor,
      sites,
      s3,
      waitEvents,
      lambdas,
      sfn,
      sfnServer,
      env,
      demoTenant: DEMO_TENANT,
      apiUrl,
      demoApiKey,
      playbooks,
      applications,
      resumed,
      startJobExecution,
      async stop(stopOptions = {}) {
        endSessions = stopOptions.endSessions ?? false;
        await runCleanups(cleanups);
        await writeFile(pidFile, '[]').catch(() => undefined);
      },
    };
  } catch (err) {
    await runCleanups(cleanups);
    throw err;
  }
}

async function runCleanups(cleanups: (() => Promise<void>)[]): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) {
    await cleanup().catch(() => undefined);
  }
}

/** Every job item not in a terminal state (a local-only scan: the local stack resumes them all). */
async function unfinishedJobs(doc: DynamoDBDocumentClient): Promise<Job[]> {
  const jobs: Job[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const res = await doc.send(
      new ScanCommand({
        TableName: LOCAL_TABLE,
        FilterExpression: 'sk = :job',
        ExpressionAttributeValues: { ':job': 'JOB' },
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of res.Items ?? []) {
      const job = item as unknown as Job;
      if (!TERMINAL_STATUSES.includes(job.status)) jobs.push(job);
    }
    startKey = res.LastEvaluatedKey;
  } while (startKey);
  return jobs;
}

/** The demo tenant's key: reused from the data directory while it is valid, else created (and kept there). */
async function demoKey(doc: DynamoDBDocumentClient, file: string): Promise<string> {
  const keys = createApiKeyStore({ doc, tableName: LOCAL_TABLE });
  const existing = await readFile(file, 'utf8').then(
    (k) => k.trim(),
    () => undefined,
  );
  if (existing && (await keys.verify(existing))) return existing;
  const created = await keys.create(DEMO_TENANT, ['submitter', 'approver', 'admin'], {
    label: 'demo',
    plan: 'free',
  });
  await writeFile(file, created.apiKey, { mode: 0o600 });
  return created.apiKey;
}

async function persistentToken(file: string): Promise<string> {
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch {
    const token = (await import('node:crypto')).randomBytes(18).toString('base64url');
    await writeFile(file, token, { mode: 0o600 });
    return token;
  }
}
