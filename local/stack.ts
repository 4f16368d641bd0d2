import { readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { LatencyProfile } from '../demo/sites/http/latency.ts';
import { type StartedSites, startSites } from '../demo/sites/index.ts';
import {
  createFileSecretStore,
  type WritableSecretStore,
} from '../lambdas/lib/accounts/file-secret-store.ts';
import { apiDepsFromEnv } from '../lambdas/lib/api/runtime.ts';
import type { ApplicationConfig } from '../lambdas/lib/engine/applications.ts';
import { executionName, generationOf } from '../lambdas/lib/engine/executions.ts';
import {
  STATE_MACHINE_FUNCTIONS,
  type StateMachineFunction,
  substitutionKey,
} from '../lambdas/lib/engine/functions.ts';
import type { JobIdentity } from '../lambdas/lib/engine/job-identity.ts';
import {
  createLedger,
  createLedgerTable,
  type Ledger,
  TERMINAL_STATUSES,
} from '../lambdas/lib/ledger/index.ts';
import { playbookDirs } from '../lambdas/lib/playbooks/discovery/find.ts';
import { type LoadedPlaybooks, loadPlaybooks } from '../lambdas/lib/playbooks/discovery/load.ts';
import { registerSdkResolution } from '../lambdas/lib/playbooks/discovery/register.ts';
import { writeRegistryModule } from '../lambdas/lib/playbooks/discovery/registry-module.ts';
import { RECEIPT_KEY_VARIABLE } from '../lambdas/lib/receipts/config.ts';
import { CONNECT_PAGE_PATH } from './anchor/connect-page.ts';
import { type AnchorService, startAnchorService } from './anchor/service.ts';
import { startLocalApi } from './api/server.ts';
import {
  createDocumentClient,
  createDynamoDbClient,
  type DynamoDbLocal,
  startDynamoDbLocal,
} from './dynamodb.ts';
import { createLocalEventBridge, type LocalEventBridge } from './events/bus.ts';
import { startLocalEventsServer } from './events/http.ts';
import { invokeAsStateMachine, onRefused, type StackPolicies } from './iam/index.ts';
import {
  createLambdaRunner,
  type IamRefusedEvent,
  type LambdaRunner,
  type LambdaRuntime,
} from './lambda/index.ts';
import { killRecorded, recordPid } from './pids.ts';
import { policyHeldSigner } from './receipt-signer.ts';
import { LOCAL_SCREENSHOT_BUCKET, type LocalS3, startLocalS3 } from './s3.ts';
import { DEMO_TENANT, seedDemoTenant } from './seed.ts';
import {
  createLocalStepFunctions,
  ExecutionAlreadyExistsError,
  type HistoryEvent,
  type LocalSfnServer,
  type LocalStepFunctions,
  startLocalSfnServer,
} from './sfn/index.ts';
import { demoKey, jobOfExecution, persistentToken, unfinishedJobs } from './stack-data.ts';
import { putStatusChange, waitSubscriber } from './stack-events.ts';
import {
  LOCAL_AWS,
  LOCAL_FUNCTIONS,
  LOCAL_TABLE,
  localFunctionArn,
  localFunctions,
} from './stack-functions.ts';
import { wireTemplate } from './template-wiring.ts';

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
  /** How often the watchdog looks at every tenant's live jobs, ms (default 60 s; 0: never). */
  watchdogIntervalMs?: number;
  /**
   * The synthesized CloudFormation template whose IAM policies every function is held to,
   * and whose event rules run on the local bus (default: this repository's app, synthesized
   * when `cdk/` changed; see `local/iam/synth.ts`).
   */
  template?: string;
  /**
   * Run the template's scheduled rules (the recovery sweep) every this many ms instead of
   * their own rate, or not at all (`false`: tests fire them with `events.triggerSchedule`).
   */
  scheduleEveryMs?: number | false;
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
  /** Answer times the demo sites imitate (`npm start -- --site-latency p50=300,p95=1200`); default: none. */
  siteLatency?: LatencyProfile;
  /**
   * The Node the functions run on, as Lambda's runtime, and whether they read a compile cache
   * (`ensureLambdaNode()` gives Lambda's Node 22); default: this process's Node, no cache.
   */
  lambdaRuntime?: LambdaRuntime;
}

export interface LocalStack {
  dataDir: string;
  tableName: string;
  /** Where every process of the stack appends its metrics, one EMF line each (`<dataDir>/metrics.jsonl`). */
  metricsFile: string;
  doc: DynamoDBDocumentClient;
  ledger: Ledger;
  secrets: WritableSecretStore;
  dynamodb: DynamoDbLocal;
  anchor: AnchorService;
  sites: StartedSites;
  /** The S3-compatible server holding screenshots. */
  s3: LocalS3;
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
  /** The IAM policies the functions are held to, and every call refused so far. */
  iam: { template: string; policies: StackPolicies; refusals: IamRefusedEvent[] };
  /**
   * The local event bus (EventBridge): the template's rules (the recovery function on the
   * machine's dead executions, the sweep's schedule), the wait events, failure injection.
   */
  events: LocalEventBridge;
  /** Starts a new execution for a job (submission or resume), at `generation` or the next free one. */
  startJobExecution(job: JobIdentity, generation: number): Promise<string>;
  /** Stops everything this stack started. Browser sessions live on for a restart unless `endSessions`. */
  stop(options?: { endSessions?: boolean }): Promise<void>;
}

export { LOCAL_TABLE, localFunctionArn } from './stack-functions.ts';

const { REGION, ACCOUNT, STACK_NAME, STATE_MACHINE_ARN } = LOCAL_AWS;

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
  // Every function is held to its IAM policy in the template, as AWS holds it, and the
  // template's event rules run on the local bus. The template is read (or synthesized, when
  // cdk/ changed) while the services start: nothing before the event bus needs it.
  const wiringReady = wireTemplate(options.template ? { template: options.template, log } : { log }, {
    region: REGION,
    account: ACCOUNT,
    stackName: STACK_NAME,
    tableName: LOCAL_TABLE,
    stateMachineArn: STATE_MACHINE_ARN,
    functions: LOCAL_FUNCTIONS,
    bucketName: LOCAL_SCREENSHOT_BUCKET,
  });
  // Awaited below; a failure meanwhile is not unhandled.
  wiringReady.catch(() => undefined);
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

    // With a real Anchor key the jobs' browsers are Anchor's: this service launches none.
    const useRealAnchor = Boolean(process.env.ANCHORBROWSER_API_KEY);
    log('starting the Anchor-compatible browser service');
    const anchor = await startAnchorService({
      requireChromium: !useRealAnchor,
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
      ...(options.siteLatency ? { latency: options.siteLatency } : {}),
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

    const env: Record<string, string> = {
      TABLE_NAME: LOCAL_TABLE,
      DYNAMODB_ENDPOINT: dynamodb.endpoint,
      AWS_REGION: REGION,
      ANCHORBROWSER_API_KEY: useRealAnchor ? (process.env.ANCHORBROWSER_API_KEY as string) : anchor.apiKey,
      ...(useRealAnchor
        ? process.env.ANCHORBROWSER_BASE_URL
          ? { ANCHORBROWSER_BASE_URL: process.env.ANCHORBROWSER_BASE_URL }
          : {}
        : {
            ANCHORBROWSER_BASE_URL: anchor.baseUrl,
            // The hosted sign-in page: the local service's stand-in for Anchor's.
            ANCHOR_CONNECT_PAGE_URL: `${anchor.baseUrl}${CONNECT_PAGE_PATH}`,
          }),
      BELAY_APPLICATIONS: JSON.stringify(applications),
      BELAY_SECRETS: `file:${join(dataDir, 'secrets')}`,
      S3_ENDPOINT: s3.endpoint,
      BELAY_SCREENSHOT_BUCKET: s3.bucket,
      BELAY_WEBHOOK_SIGNING_KEY: await persistentToken(join(dataDir, 'webhook-signing-key')),
      BELAY_WEBHOOK_ALLOW_LOOPBACK: 'true',
      // Receipts are signed with a key file here (KMS in AWS), created on the first receipt, 0600.
      BELAY_RECEIPT_KEY: `file:${join(dataDir, 'receipt-key.pem')}`,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
      // Powertools' EMF lines, as CloudWatch would read them from the functions' logs.
      BELAY_METRICS_FILE: join(dataDir, 'metrics.jsonl'),
      // Node 20 is supported here; the SDK's notice about its future releases is not news to a user.
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ...options.env,
    };

    const wiring = await wiringReady;

    // EventBridge: its API for the workers, its rules' targets in the Lambda runner (made next).
    let lambdas: LambdaRunner | undefined;
    const events = createLocalEventBridge({
      region: REGION,
      account: ACCOUNT,
      buses: wiring.buses,
      invoke: (arn: string, payload: unknown) => {
        if (!lambdas) throw new Error('the local Lambda runner is not started');
        return lambdas.invoke(arn, payload, { timeoutMs: 300_000, signal: new AbortController().signal });
      },
      schedules: options.scheduleEveryMs !== false,
      log,
    });
    cleanups.push(() => events.stop());
    const eventsServer = await startLocalEventsServer(events);
    cleanups.push(() => eventsServer.stop());
    env.EVENTBRIDGE_ENDPOINT = eventsServer.endpoint;

    const functions = localFunctions(wiring, options.provisioned ?? {});
    lambdas = createLambdaRunner({
      functions,
      mode: options.lambdaMode ?? 'warm',
      env,
      output: options.workerOutput ?? 'ignore',
      playbookRegistry,
      ...(options.lambdaRuntime ? { runtime: options.lambdaRuntime } : {}),
    });
    const runner = lambdas;
    cleanups.push(() => runner.stop());
    // Refused calls of the workers (reported by the runner) and of this process (the API).
    const refusals: IamRefusedEvent[] = [];
    const refused = (e: IamRefusedEvent): void => {
      refusals.push(e);
      log(`IAM refused ${e.functionName}: ${e.message}`);
    };
    lambdas.events.on('iam-refused', refused);
    const stopListening = onRefused((r) =>
      refused({
        functionName: r.functionName,
        pid: process.pid,
        action: r.request.action,
        resource: r.request.resource,
        message: r.message,
      }),
    );
    cleanups.push(async () => stopListening());

    const substitutions = Object.fromEntries(
      (Object.keys(STATE_MACHINE_FUNCTIONS) as StateMachineFunction[]).map((n) => [
        substitutionKey(n),
        localFunctionArn(n),
      ]),
    );
    const sfn = createLocalStepFunctions({
      definition: readFileSync(new URL('../statemachine/job.asl.json', import.meta.url), 'utf8'),
      stateMachineArn: STATE_MACHINE_ARN,
      // Execution names stay taken for 90 days and old task tokens stay dead, across restarts.
      stateFile: join(dataDir, 'sfn', 'state.jsonl'),
      substitutions,
      // Step Functions invokes each task as the state machine's role: held to its policy too.
      invoke: wiring.policies.stateMachine
        ? invokeAsStateMachine(wiring.policies.stateMachine, lambdas.invoke)
        : lambdas.invoke,
      // As Step Functions reports them to EventBridge's default bus.
      onStatusChange: (d) => putStatusChange(events, d),
      ...(options.onHistoryEvent ? { onEvent: options.onHistoryEvent } : {}),
      ...(options.retryIntervalMs !== undefined ? { retryIntervalMs: options.retryIntervalMs } : {}),
      ...(options.waitTimeOverrides ? { waitTimeOverrides: options.waitTimeOverrides } : {}),
    });
    cleanups.push(() => sfn.shutdown());
    const sfnServer = await startLocalSfnServer(sfn, { port: ports.sfn });
    cleanups.push(() => sfnServer.stop());
    // The recovery function starts and looks up executions.
    env.SFN_ENDPOINT = sfnServer.endpoint;
    env.STATE_MACHINE_ARN = sfn.stateMachineArn;

    const warnings: string[] = [];
    const watchdogArn = localFunctionArn('Watchdog');
    for (const rule of wiring.rules(new Set(Object.keys(functions)), warnings)) {
      const isWatchdog = rule.targets.some((t) => t.kind === 'lambda' && t.functionArn === watchdogArn);
      if (isWatchdog) {
        // Its own interval locally (a look a minute by default, not five); 0 turns it off.
        const everyMs = options.watchdogIntervalMs ?? 60_000;
        events.addRule({ ...rule, everyMs: everyMs || rule.everyMs, enabled: everyMs !== 0 && rule.enabled });
        continue;
      }
      events.addRule(
        rule.everyMs && typeof options.scheduleEveryMs === 'number'
          ? { ...rule, everyMs: options.scheduleEveryMs }
          : rule,
      );
    }
    for (const w of warnings) log(`event rules: ${w}`);
    events.addRule(waitSubscriber(wiring.variables('AwaitHuman').EVENT_BUS_NAME, env.BELAY_WAIT_WEBHOOK_URL));

    const startJobExecution = async (job: JobIdentity, generation: number): Promise<string> => {
      const input = JSON.stringify({ tenantId: job.tenantId, jobId: job.jobId });
      // A name is taken for 90 days: one an execution took before the job could record it
      // (the stack died in between) is skipped, as the engine's recovery skips it.
      for (let g = generation; ; g++) {
        const name = executionName(job, g);
        try {
          await sfn.startExecution({ name, input });
          return name;
        } catch (err) {
          if (!(err instanceof ExecutionAlreadyExistsError) || g >= generation + 20) throw err;
        }
      }
    };

    const demoApiKey = await demoKey(doc, LOCAL_TABLE, join(dataDir, 'demo-api-key'));
    let apiUrl: string | undefined;
    if (options.apiPort !== false) {
      const apiEnv = {
        ...env,
        BELAY_API_RATE_PER_SECOND: env.BELAY_API_RATE_PER_SECOND ?? '50',
        BELAY_API_BURST: env.BELAY_API_BURST ?? '100',
      };
      const apiDeps = await apiDepsFromEnv(apiEnv, playbooks.registry);
      // The key file signs only as far as the API's policy lets it use the template's KMS key.
      const receiptKey = wiring.variable('ApiHandler', RECEIPT_KEY_VARIABLE);
      apiDeps.receipts = policyHeldSigner(
        apiDeps.receipts,
        wiring.spec('ApiHandler'),
        receiptKey?.startsWith('kms:') ? receiptKey.slice(4) : undefined,
        (r) => refused({ ...r, pid: process.pid }),
      );
      const api = await startLocalApi({
        port: options.apiPort ?? 0,
        deps: apiDeps,
        iam: { handler: wiring.spec('ApiHandler'), authorizer: wiring.spec('ApiAuthorizer') },
      });
      cleanups.push(() => api.stop());
      apiUrl = api.url;
      // Links the API builds name its own address (as BELAY_API_URL does in AWS), and AwaitHuman's too.
      apiDeps.baseUrl ||= api.url;
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
      for (const job of await unfinishedJobs(ledger)) {
        // The one after the recorded execution (a name with no generation: -1, so 0).
        const generation = job.executionName ? generationOf(job.executionName) + 1 : 0;
        const name = await startJobExecution(job, generation);
        resumed.push({ tenantId: job.tenantId, jobId: job.jobId, executionName: name });
      }
      if (resumed.length) log(`resumed ${resumed.length} unfinished job(s) from the ledger`);
    }
    // An execution the last run took down while its job was already finished (killed between
    // Finish's last write and its clean-up) still holds the job's lease and sessions. Its death
    // goes on the bus as Step Functions reports one, and the recovery rule releases them.
    // (Unfinished jobs were resumed above, in a new execution of their own.)
    for (const lost of sfn.lostExecutions()) {
      const job = await jobOfExecution(ledger, lost.input);
      if (job && TERMINAL_STATUSES.includes(job.status)) putStatusChange(events, lost);
    }

    return {
      dataDir,
      tableName: LOCAL_TABLE,
      metricsFile: env.BELAY_METRICS_FILE as string,
      doc,
      ledger,
      secrets,
      dynamodb,
      anchor,
      sites,
      s3,
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
      iam: { template: wiring.file, policies: wiring.policies, refusals },
      events,
      startJobExecution,
      async stop(stopOptions = {}) {
        endSessions = stopOptions.endSessions ?? false;
        await runCleanups(cleanups);
        await writeFile(pidFile, '[]').catch(() => undefined);
      },
    };
  } catch (err) {
    // A start that failed leaves no synthesis running behind it.
    await wiringReady.catch(() => undefined);
    await runCleanups(cleanups);
    throw err;
  }
}

async function runCleanups(cleanups: (() => Promise<void>)[]): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) {
    await cleanup().catch(() => undefined);
  }
}
