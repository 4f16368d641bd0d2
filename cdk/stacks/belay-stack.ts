/**
 * The Belay stack: the checkpoint ledger, one function per state machine task, the job state
 * machine from the ASL file, the HTTP API and what they share (secrets, the wait event bus,
 * alarms), and what it is operated with (the watchdog, the alarms with their runbook, the dashboard). Declarative: constructs and bindings; what each function may do is in
 * `cdk/engine-functions.ts`.
 */
import { Annotations, CfnOutput, Duration, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { EventBus, Rule, RuleTargetInput, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction as LambdaTarget } from 'aws-cdk-lib/aws-events-targets';
import type { Key } from 'aws-cdk-lib/aws-kms';
import { Alias } from 'aws-cdk-lib/aws-lambda';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { parseModelSpec } from '../../lambdas/lib/agent/model-spec.ts';
import { ROUTES } from '../../lambdas/lib/api/routes.ts';
import { BROWSER_ACCESS_VARIABLE, SECRET_ARN_VARIABLES } from '../../lambdas/lib/browser/secret-key.ts';
import { STATE_MACHINE_FUNCTIONS, type StateMachineFunction } from '../../lambdas/lib/engine/functions.ts';
import { playbookDirs } from '../../lambdas/lib/playbooks/discovery/find.ts';
import { registryModuleForDirs } from '../../lambdas/lib/playbooks/discovery/registry-module.ts';
import { type BelayConfig, CONTEXT_KEYS, readConfig } from '../config.ts';
import {
  BelayFunction,
  type BelayFunctionProps,
  PLAYWRIGHT_RUNTIME_MODULES,
} from '../constructs/belay-function.ts';
import {
  bindEventBus,
  bindStateMachine,
  bindTable,
  LEDGER_WRITE,
  STATE_MACHINE_START,
} from '../constructs/bind.ts';
import { bindAgentModels } from '../constructs/bind-models.ts';
import { bindSecret, bindSecretStore, SECRET_MANAGE, SECRET_READ } from '../constructs/bind-secrets.ts';
import { JobAlarms } from '../constructs/job-alarms.ts';
import { JobApi } from '../constructs/job-api.ts';
import { JobRecovery } from '../constructs/job-recovery.ts';
import { JobStateMachine } from '../constructs/job-state-machine.ts';
import { LedgerTable } from '../constructs/ledger-table.ts';
import { Operations } from '../constructs/operations.ts';
import { bindReceiptKey, ReceiptKey } from '../constructs/receipt-key.ts';
import { bindScreenshots, ScreenshotBucket } from '../constructs/screenshot-bucket.ts';
import {
  BROWSER_MEMORY_MB,
  CREDENTIALS_SECRET_PREFIX,
  ENGINE_FUNCTIONS,
  LEASE_PARTITIONS,
  PLAIN_MEMORY_MB,
} from '../engine-functions.ts';
import { handlerEntry } from '../paths.ts';

/** Props of {@link BelayStack}. */
export interface BelayStackProps extends StackProps {
  /**
   * The app's settings.
   * @default - read from the `belay:*` context visible from the stack (see `cdk/config.ts`)
   */
  readonly config?: BelayConfig;
}

/** Partition keys the API may delete: capacity leases (cancel) and webhook receipts (a failed delivery is forgotten). */
const API_DELETABLE_PARTITIONS: readonly string[] = Object.freeze([
  ...LEASE_PARTITIONS,
  'WEBHOOK#*',
  'CONSOLE#*',
]);

/**
 * Everything Belay deploys, in one stack.
 *
 * After deploying, put Anchor's API key and webhook signing secret into the two secrets the
 * stack outputs (`aws secretsmanager put-secret-value --secret-id <arn> --secret-string ...`);
 * the functions read them at cold start.
 */
export class BelayStack extends Stack {
  /** The settings this stack was built with. */
  readonly config: BelayConfig;
  /** The checkpoint ledger table. */
  readonly ledger: LedgerTable;
  /** The task functions of the state machine, by name. */
  readonly engineFunctions: Readonly<Record<StateMachineFunction, BelayFunction>>;
  /** RunStep's `live` alias with provisioned concurrency, when `belay:provisionedRunSteps` > 0. */
  readonly runStepAlias?: Alias;
  /** The job state machine. */
  readonly jobs: JobStateMachine;
  /** Alarms on failed, timed-out, aborted and throttled executions. */
  readonly alarms: JobAlarms;
  /** The recovery function: resumes (or fails) a job whose execution died outside its handlers. */
  readonly recoverJobs: BelayFunction;
  /** Its rule on the machine's dead executions and its scheduled sweep. */
  readonly recovery: JobRecovery;
  /** The function behind every API route. */
  readonly apiHandler: BelayFunction;
  /** The KMS key job receipts are signed with (the API's only). */
  readonly receiptKey: Key;
  /** The API's Lambda authorizer. */
  readonly apiAuthorizer: BelayFunction;
  /** The HTTP API. */
  readonly api: JobApi;
  /** Where AwaitHuman announces waits (`Belay Job Waiting` events, source `belay`). */
  readonly waitEvents: EventBus;
  /** Anchor's API key (its value is put after deploying). */
  readonly anchorApiKey: Secret;
  /** Anchor's webhook signing secret (its value is put after deploying). */
  readonly anchorWebhookSecret: Secret;
  /** Screenshots of jobs' pages (evidence), under `tenants/<tenant>/jobs/<job>/`. */
  readonly screenshots: ScreenshotBucket;
  /** The key tenants' outgoing webhook secrets are derived from (generated; never leaves AWS). */
  readonly webhookSigningKey: Secret;
  /** Sends `Belay Job Waiting` events to tenants' webhooks. */
  readonly notifier: BelayFunction;
  /** The watchdog: every five minutes, every tenant's live jobs and leases as metrics (read-only). */
  readonly watchdog: BelayFunction;
  /** The watchdog's schedule, the alarms that name their runbook, and the operations dashboard. */
  readonly operations: Operations;
  /**
   * The registry module generated from the playbook folders (`playbooks/`, `BELAY_PLAYBOOKS_DIRS`,
   * `belay:playbooks`), bundled into every function as `#belay/playbooks`.
   */
  readonly playbookRegistry: string;

  constructor(scope: Construct, id: string, props: BelayStackProps = {}) {
    super(scope, id, props);
    const config = props.config ?? readConfig(this);
    this.config = config;
    // Found here without importing any TypeScript playbook; `cdk/app.ts` has loaded and checked
    // them all before the stack is built (a bad one fails the synth with its file named).
    this.playbookRegistry = registryModuleForDirs(playbookDirs(config.playbookDirs));

    this.ledger = new LedgerTable(this, 'Ledger', { removalPolicy: config.removalPolicy });
    this.anchorApiKey = this.providerSecret('AnchorApiKey', "Anchor Browser's API key");
    this.anchorWebhookSecret = this.providerSecret(
      'AnchorWebhookSecret',
      "Anchor Browser's webhook signing secret(s), comma-separated while rotating",
    );
    this.screenshots = new ScreenshotBucket(this, 'Screenshots', { removalPolicy: config.removalPolicy });
    this.webhookSigningKey = new Secret(this, 'WebhookSigningKey', {
      description: "Belay: the key tenants' outgoing webhook secrets are derived from (HMAC-SHA256).",
      generateSecretString: { passwordLength: 48, excludePunctuation: true },
      removalPolicy: config.removalPolicy,
    });
    Validations.of(this.webhookSigningKey).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'Rotating it changes every webhook secret at once (receivers would refuse deliveries until updated); tenants rotate their own by registering a new webhook.',
    });
    this.waitEvents = new EventBus(this, 'WaitEvents', {
      description: 'Belay: a job waits for a person (approval, MFA, review)',
    });

    const shared: Record<string, string> = {
      BELAY_APPLICATIONS: JSON.stringify(config.applications),
      BELAY_DEFAULT_PLAN: config.defaultPlan,
    };
    const browserEnv: Record<string, string> = config.anchorBaseUrl
      ? { ANCHORBROWSER_BASE_URL: config.anchorBaseUrl }
      : {};
    if (Object.keys(config.applications).length === 0) {
      Annotations.of(this).addWarningV2(
        'belay:no-applications',
        `Context '${CONTEXT_KEYS.applications}' is not set: every job will fail at Start (misconfigured). ` +
          `Set it to {"<app>": {"baseUrl": "https://..."}}.`,
      );
    }

    const engine = {} as Record<StateMachineFunction, BelayFunction>;
    for (const name of Object.keys(STATE_MACHINE_FUNCTIONS) as StateMachineFunction[]) {
      const spec = ENGINE_FUNCTIONS[name];
      const fn = this.addFunction(name, {
        entry: handlerEntry(STATE_MACHINE_FUNCTIONS[name]),
        description: spec.description,
        timeout: spec.timeout,
        memorySize: spec.browser ? BROWSER_MEMORY_MB : PLAIN_MEMORY_MB,
        // The browser adapter loads playwright-core on first use (a dynamic import), so a
        // function that never drives a browser neither ships nor loads it.
        runtimeModules: spec.browser ? PLAYWRIGHT_RUNTIME_MODULES : [],
        environment: { ...shared, ...(spec.browser ? browserEnv : { [BROWSER_ACCESS_VARIABLE]: 'none' }) },
      });
      if (spec.writePartitions) {
        const isRead = (a: string): boolean => a === 'dynamodb:GetItem' || a === 'dynamodb:Query';
        bindTable(fn, this.ledger, { env: 'TABLE_NAME', actions: spec.table.filter(isRead) });
        bindTable(fn, this.ledger, {
          env: 'TABLE_NAME',
          actions: spec.table.filter((a) => !isRead(a)),
          leadingKeys: spec.writePartitions,
        });
      } else {
        bindTable(fn, this.ledger, { env: 'TABLE_NAME', actions: spec.table });
      }
      if (spec.releasesLeases) {
        bindTable(fn, this.ledger, {
          env: 'TABLE_NAME',
          actions: ['dynamodb:DeleteItem'],
          leadingKeys: LEASE_PARTITIONS,
        });
      }
      // A function that never signs in gets no store at all: a read is refused in the code, at once.
      if (spec.readsCredentials) {
        bindSecretStore(fn, {
          env: 'BELAY_SECRETS',
          prefix: CREDENTIALS_SECRET_PREFIX,
          actions: SECRET_READ,
        });
      } else {
        fn.addEnvironment('BELAY_SECRETS', 'none');
      }
      if (spec.browser)
        bindSecret(fn, this.anchorApiKey, { env: SECRET_ARN_VARIABLES.ANCHORBROWSER_API_KEY });
      if (spec.putsEvents) bindEventBus(fn, this.waitEvents, { env: 'EVENT_BUS_NAME' });
      engine[name] = fn;
    }
    this.engineFunctions = engine;
    // Screenshots as evidence: RunStep (and Reconcile, for a review) keeps the page; nothing else writes.
    for (const fn of [engine.RunStep, engine.Reconcile]) {
      bindScreenshots(fn, this.screenshots.bucket, { env: 'BELAY_SCREENSHOT_BUCKET', access: 'put' });
    }

    // Agent steps decide in RunStep only: it alone may invoke the configured Bedrock models, and
    // it alone reads the API key of each other provider the configured models use (a secret the
    // stack makes for it; the value is put after deploying, as Anchor's key is).
    bindAgentModels(engine.RunStep, config.agentModels);
    for (const [provider, what, variable] of [
      ['anthropic', "Anthropic's API key (agent steps)", SECRET_ARN_VARIABLES.BELAY_AGENT_ANTHROPIC_API_KEY],
      ['openai', "OpenAI's API key (agent steps)", SECRET_ARN_VARIABLES.BELAY_AGENT_OPENAI_API_KEY],
    ] as const) {
      if (!config.agentModels.some((spec) => parseModelSpec(spec)?.provider === provider)) continue;
      const id = provider === 'anthropic' ? 'AnthropicApiKey' : 'OpenAiApiKey';
      const secret = this.providerSecret(id, what);
      bindSecret(engine.RunStep, secret, { env: variable });
      new CfnOutput(this, `${id}SecretArn`, {
        value: secret.secretArn,
        description: `Put ${what} here after deploying.`,
      });
    }

    // With provisioned RunSteps the machine invokes an alias whose environments Lambda keeps
    // initialized (the handler loads playwright-core at their init): a retried step starts warm.
    if (config.provisionedRunSteps > 0) {
      this.runStepAlias = new Alias(this, 'RunStepLive', {
        aliasName: 'live',
        version: engine.RunStep.currentVersion,
        provisionedConcurrentExecutions: config.provisionedRunSteps,
        description: 'RunStep with provisioned concurrency (belay:provisionedRunSteps)',
      });
    }
    this.jobs = new JobStateMachine(this, 'Jobs', {
      functions: this.runStepAlias ? { ...engine, RunStep: this.runStepAlias } : engine,
      logRetention: config.logRetention,
      logRemovalPolicy: config.removalPolicy,
    });
    this.alarms = new JobAlarms(this, 'Alarms', {
      stateMachine: this.jobs.stateMachine,
      keyRemovalPolicy: config.removalPolicy,
    });

    this.addScheduledChecks(config, shared);

    this.recoverJobs = this.addRecovery(shared, browserEnv);
    this.recovery = new JobRecovery(this, 'Recovery', {
      handler: this.recoverJobs,
      stateMachine: this.jobs.stateMachine,
    });

    // API Gateway gives an integration at most 30 s; the MFA route drives the job's browser.
    this.apiHandler = this.addFunction('ApiHandler', {
      entry: handlerEntry('api'),
      description: 'Serves every route of the Belay HTTP API.',
      timeout: Duration.seconds(29),
      memorySize: BROWSER_MEMORY_MB,
      runtimeModules: PLAYWRIGHT_RUNTIME_MODULES,
      environment: {
        ...shared,
        ...browserEnv,
        // Where agents (MCP) may answer people's waits; unset, people answer them all.
        ...(config.mcpAnswerTenants.length > 0
          ? { BELAY_MCP_ANSWER_TENANTS: config.mcpAnswerTenants.join(',') }
          : {}),
      },
    });
    bindTable(this.apiHandler, this.ledger, { env: 'TABLE_NAME', actions: LEDGER_WRITE });
    bindTable(this.apiHandler, this.ledger, {
      env: 'TABLE_NAME',
      actions: ['dynamodb:DeleteItem'],
      leadingKeys: API_DELETABLE_PARTITIONS,
    });
    bindStateMachine(this.apiHandler, this.jobs.stateMachine, {
      env: 'STATE_MACHINE_ARN',
      actions: [
        ...STATE_MACHINE_START,
        'states:SendTaskSuccess',
        'states:SendTaskFailure',
        'states:StopExecution',
      ],
    });
    bindSecretStore(this.apiHandler, {
      env: 'BELAY_SECRETS',
      prefix: CREDENTIALS_SECRET_PREFIX,
      actions: SECRET_MANAGE,
    });
    bindSecret(this.apiHandler, this.anchorApiKey, { env: SECRET_ARN_VARIABLES.ANCHORBROWSER_API_KEY });
    bindSecret(this.apiHandler, this.anchorWebhookSecret, {
      env: SECRET_ARN_VARIABLES.ANCHOR_WEBHOOK_SECRET,
    });

    bindScreenshots(this.apiHandler, this.screenshots.bucket, {
      env: 'BELAY_SCREENSHOT_BUCKET',
      access: 'get',
    });
    bindSecret(this.apiHandler, this.webhookSigningKey, {
      env: SECRET_ARN_VARIABLES.BELAY_WEBHOOK_SIGNING_KEY,
    });
    // Receipts: only the API signs them (GET /jobs/{jobId}/receipt); the engine never holds the key.
    this.receiptKey = new ReceiptKey(this, 'Receipts', { removalPolicy: config.removalPolicy }).key;
    bindReceiptKey(this.apiHandler, this.receiptKey);

    // Tenants' webhooks: a rule sends each wait event to the notifier, invoked asynchronously
    // (Lambda retries it twice), so a receiver's failure or slowness never touches the job.
    this.notifier = this.addFunction('Notifier', {
      entry: handlerEntry('notify'),
      description:
        "Sends 'Belay Job Waiting' and 'Belay Check Failed' events to tenants' webhooks (signed, retried, logged).",
      timeout: Duration.seconds(90),
      memorySize: PLAIN_MEMORY_MB,
      environment: { BELAY_SECRETS: 'none', [BROWSER_ACCESS_VARIABLE]: 'none' },
    });
    // The tenant's webhooks (Query) and their delivery log (PutItem), in tenant partitions only.
    bindTable(this.notifier, this.ledger, {
      env: 'TABLE_NAME',
      actions: ['dynamodb:Query', 'dynamodb:PutItem'],
      leadingKeys: ['T#*'],
    });
    bindSecret(this.notifier, this.webhookSigningKey, {
      env: SECRET_ARN_VARIABLES.BELAY_WEBHOOK_SIGNING_KEY,
    });
    new Rule(this, 'WaitEventsToWebhooks', {
      eventBus: this.waitEvents,
      description: "A job waits for a person, or a drift check turned red: tell the tenant's webhooks.",
      eventPattern: { source: ['belay'], detailType: ['Belay Job Waiting', 'Belay Check Failed'] },
      targets: [new LambdaTarget(this.notifier, { retryAttempts: 2, maxEventAge: Duration.hours(1) })],
    });

    this.apiAuthorizer = this.addFunction('ApiAuthorizer', {
      entry: handlerEntry('authorizer'),
      description: 'Lambda authorizer of the Belay HTTP API: API key -> tenant and roles.',
      timeout: Duration.seconds(10),
      memorySize: PLAIN_MEMORY_MB,
    });
    // Key lookups only (`APIKEY#<sha256>` items): the authorizer cannot read jobs or ledgers.
    bindTable(this.apiAuthorizer, this.ledger, {
      env: 'TABLE_NAME',
      actions: ['dynamodb:GetItem'],
      leadingKeys: ['APIKEY#*'],
    });
    // Refused keys counted per source address (`RATE#ip:<address>` buckets), nothing else.
    bindTable(this.apiAuthorizer, this.ledger, {
      env: 'TABLE_NAME',
      actions: ['dynamodb:UpdateItem'],
      leadingKeys: ['RATE#ip:*'],
    });

    this.api = new JobApi(this, 'Api', {
      handler: this.apiHandler,
      authorizer: this.apiAuthorizer,
      routes: ROUTES,
      throttle: config.apiThrottle,
      logRetention: config.logRetention,
      logRemovalPolicy: config.removalPolicy,
    });
    for (const fn of [this.apiHandler, engine.AwaitHuman, this.notifier])
      fn.addEnvironment('BELAY_API_URL', this.api.url);

    // Read-only: the tenant directory and live statuses on gsi1, leases and tenant plans on the table.
    this.watchdog = this.addFunction('Watchdog', {
      entry: handlerEntry('watchdog'),
      description: "Publishes every tenant's stuck jobs, queues, open waits and browser use as metrics.",
      timeout: Duration.seconds(120),
      memorySize: PLAIN_MEMORY_MB,
      environment: { ...shared, [BROWSER_ACCESS_VARIABLE]: 'none' },
    });
    bindTable(this.watchdog, this.ledger, {
      env: 'TABLE_NAME',
      actions: ['dynamodb:GetItem', 'dynamodb:Query'],
    });
    this.operations = new Operations(this, 'Operations', {
      watchdog: this.watchdog,
      alarmAction: new SnsAction(this.alarms.topic),
      otherAlarms: Object.values(this.alarms.alarms),
      stateMachine: this.jobs.stateMachine,
      functions: {
        ...engine,
        ApiHandler: this.apiHandler,
        ApiAuthorizer: this.apiAuthorizer,
        Watchdog: this.watchdog,
      },
    });

    this.outputs();
  }

  /**
   * Adds a handler as a {@link BelayFunction} whose log group follows the stack's config
   * (retention, removal policy) unless `props` says otherwise.
   */
  addFunction(id: string, props: BelayFunctionProps): BelayFunction {
    return new BelayFunction(this, id, {
      logRetention: this.config.logRetention,
      logRemovalPolicy: this.config.removalPolicy,
      playbookRegistry: this.playbookRegistry,
      sourceMaps: this.config.sourceMaps,
      ...(this.config.lambdaNode ? { lambdaNode: this.config.lambdaNode } : {}),
      ...(this.config.lambdaRuntimeVersion ? { lambdaRuntimeVersion: this.config.lambdaRuntimeVersion } : {}),
      ...props,
    });
  }

  /**
   * Scheduled drift checks (`belay:checks`, none by default): one rule per playbook on its
   * schedule, each sending its check to one small function that submits it as the API would.
   * Without any, neither the function nor a rule exists.
   */
  private addScheduledChecks(config: BelayConfig, shared: Record<string, string>): void {
    if (config.checks.length === 0) return;
    const startCheck = this.addFunction('StartCheck', {
      entry: handlerEntry('start-check'),
      description: 'Submits a scheduled drift check of a playbook (belay:checks).',
      timeout: Duration.seconds(30),
      memorySize: PLAIN_MEMORY_MB,
      environment: { ...shared, BELAY_SECRETS: 'none', [BROWSER_ACCESS_VARIABLE]: 'none' },
    });
    // Submitting a job: the tenant's accounts and the playbook's checks read, the job written, its execution started.
    bindTable(startCheck, this.ledger, { env: 'TABLE_NAME', actions: LEDGER_WRITE });
    bindStateMachine(startCheck, this.jobs.stateMachine, {
      env: 'STATE_MACHINE_ARN',
      actions: STATE_MACHINE_START,
    });
    for (const [i, check] of config.checks.entries()) {
      new Rule(this, `Check${i + 1}`, {
        description: `Drift check of ${check.playbook} for tenant ${check.tenant} (${check.schedule})`,
        schedule: Schedule.expression(check.schedule),
        targets: [
          new LambdaTarget(startCheck, { event: RuleTargetInput.fromObject(check), retryAttempts: 2 }),
        ],
      });
    }
  }

  /**
   * The recovery function (`lambdas/recover/`): for a job whose execution died it reads the
   * ledger (Query, GetItem), ends the job's sessions (the Anchor key; a `session-ended` entry
   * each: UpdateItem, PutItem) and releases its lease (Query, DeleteItem on lease partitions,
   * UpdateItem), then records a `recovered` entry and starts the next execution
   * (states:StartExecution), or fails the job (UpdateItem, PutItem); the sweep reads the index
   * of unfinished jobs (Query on gsi3), lists running executions (states:ListExecutions) and
   * looks one up (states:DescribeExecution). It never signs in: no credentials.
   */
  private addRecovery(shared: Record<string, string>, browserEnv: Record<string, string>): BelayFunction {
    const fn = this.addFunction('RecoverJobs', {
      entry: handlerEntry('recover'),
      description:
        'Resumes from its checkpoint (or fails) a job whose execution died; sweeps for jobs with no execution.',
      timeout: Duration.minutes(5),
      memorySize: PLAIN_MEMORY_MB,
      environment: { ...shared, ...browserEnv, BELAY_SECRETS: 'none' },
    });
    bindTable(fn, this.ledger, {
      env: 'TABLE_NAME',
      actions: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
    });
    bindTable(fn, this.ledger, {
      env: 'TABLE_NAME',
      actions: ['dynamodb:DeleteItem'],
      leadingKeys: LEASE_PARTITIONS,
    });
    bindSecret(fn, this.anchorApiKey, { env: SECRET_ARN_VARIABLES.ANCHORBROWSER_API_KEY });
    bindStateMachine(fn, this.jobs.stateMachine, {
      env: 'STATE_MACHINE_ARN',
      actions: [...STATE_MACHINE_START, 'states:ListExecutions', 'states:DescribeExecution'],
    });
    return fn;
  }

  /** A secret whose value a provider issues: created with a random placeholder, put by an operator. */
  private providerSecret(id: string, what: string): Secret {
    const secret = new Secret(this, id, {
      description: `${what}. Put the value after deploying; read by Belay functions at cold start.`,
      generateSecretString: { passwordLength: 32, excludePunctuation: true },
      removalPolicy: this.config.removalPolicy,
    });
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        `${what} is issued by its provider and rotated in the provider's dashboard, not by a rotation Lambda; ` +
        'the new value is put into this secret and functions pick it up at their next cold start.',
    });
    return secret;
  }

  private outputs(): void {
    const out = (id: string, value: string, description: string): void => {
      new CfnOutput(this, id, { value, description });
    };
    out(
      'LedgerTableName',
      this.ledger.tableName,
      'The checkpoint ledger table (TABLE_NAME of the handlers).',
    );
    out('StateMachineArn', this.jobs.stateMachine.stateMachineArn, 'The job state machine.');
    out('ApiUrl', this.api.url, 'Base URL of the Belay HTTP API.');
    out('ConsoleUrl', `${this.api.url}/console`, 'The web console (sign in with an API key).');
    out(
      'ScreenshotBucketName',
      this.screenshots.bucket.bucketName,
      "Screenshots of jobs' pages (private; served through the API).",
    );
    out(
      'AlarmTopicArn',
      this.alarms.topic.topicArn,
      'Subscribe to this SNS topic for the alarms (each names its runbook section).',
    );
    out(
      'OperationsDashboardName',
      this.operations.dashboard.dashboard.dashboardName,
      'The CloudWatch dashboard an on-call engineer starts from.',
    );
    out(
      'WaitEventBusName',
      this.waitEvents.eventBusName,
      'Rules on this bus tell people a job waits for them.',
    );
    out('AnchorApiKeySecretArn', this.anchorApiKey.secretArn, "Put Anchor's API key here after deploying.");
    out(
      'AnchorWebhookSecretArn',
      this.anchorWebhookSecret.secretArn,
      "Put Anchor's webhook signing secret here after deploying.",
    );
  }
}
