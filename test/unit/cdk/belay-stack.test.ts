import { readFileSync } from 'node:fs';
import { Duration, Token } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { configureApp, environmentFrom, STACK_NAME } from '../../../cdk/belay-app.ts';
import { STATE_MACHINE_DEFINITION } from '../../../cdk/paths.ts';
import type { BelayStack } from '../../../cdk/stacks/belay-stack.ts';
import { ROUTES } from '../../../lambdas/lib/api/routes.ts';
import { TASK_TIMEOUT_MARGIN_SECONDS } from '../../../lambdas/lib/engine/functions.ts';
import { cdkJsonContext, fixture, TestApps } from '../../support/cdk.ts';
import { logicalId } from '../../support/cdk-template.ts';

const apps = new TestApps();
afterAll(() => apps.cleanup());

const APPLICATIONS = { shop: { baseUrl: 'https://shop.example.com', allowedDomains: ['*.cdn.example.com'] } };

function synth(context: Record<string, unknown> = {}): { stack: BelayStack; template: Template } {
  const stack = configureApp(
    apps.app({ ...cdkJsonContext(), 'belay:applications': APPLICATIONS, ...context }),
    {},
  );
  return { stack, template: Template.fromStack(stack) };
}

/** Timeout (s) and memory (MB) of every function, and whether it drives a browser. */
const FUNCTIONS: [string, number, number, boolean][] = [
  ['Start', 90, 1024, true],
  ['OpenSession', 60, 1024, true],
  ['RunStep', 150, 1024, true],
  ['Reauthenticate', 100, 1024, true],
  ['Reconcile', 100, 1024, true],
  ['AwaitHuman', 60, 1024, true],
  ['Finish', 150, 1024, true],
  ['RecordFailure', 60, 1024, true],
  ['ApiHandler', 29, 1024, true],
  ['ApiAuthorizer', 10, 256, false],
  ['Notifier', 90, 256, false],
  ['Watchdog', 120, 256, false],
  ['RecoverJobs', 300, 256, true],
];
const ENGINE = FUNCTIONS.slice(0, 8).map(([name]) => name);
/** The engine functions that sign accounts in, so read their credentials. */
const SIGNS_IN = new Set(['RunStep', 'Reauthenticate', 'Finish']);

/** Every `"Resource": "${XFunctionArn}"` task of the ASL with its TimeoutSeconds, found by walking the JSON. */
function aslTasks(): { placeholder: string; timeoutSeconds: number | undefined }[] {
  const out: { placeholder: string; timeoutSeconds: number | undefined }[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      const record = node as Record<string, unknown>;
      const match = typeof record.Resource === 'string' ? /^\$\{(\w+)\}$/.exec(record.Resource) : null;
      if (match?.[1]) out.push({ placeholder: match[1], timeoutSeconds: record.TimeoutSeconds as number });
      Object.values(record).forEach(walk);
    }
  };
  walk(JSON.parse(readFileSync(STATE_MACHINE_DEFINITION, 'utf8')));
  return out;
}

describe('Stack: BelayStack', () => {
  const { stack, template } = synth();
  const fnId = (name: string): string => logicalId(stack, stack.node.findChild(name));

  it('holds the ledger, 8 engine functions + API + authorizer + notifier + watchdog + recovery, one machine, one API, three secrets, one bus and its rule, the screenshot bucket', () => {
    expect(stack.stackName).toBe(STACK_NAME);
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.resourceCountIs('AWS::Lambda::Function', 13);
    template.resourceCountIs('AWS::StepFunctions::StateMachine', 1);
    template.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
    template.resourceCountIs('AWS::ApiGatewayV2::Route', ROUTES.length);
    template.resourceCountIs('AWS::SecretsManager::Secret', 3);
    template.resourceCountIs('AWS::Events::EventBus', 1);
    template.resourceCountIs('AWS::S3::Bucket', 1);
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: { source: ['belay'], 'detail-type': ['Belay Job Waiting', 'Belay Check Failed'] },
      Targets: [{ RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 } }],
    });
    expect(Object.keys(stack.engineFunctions).sort()).toEqual([...ENGINE].sort());
  });

  it.each(FUNCTIONS)('%s runs Node 22 on arm64 with a %i s timeout and %i MB', (name, timeout, memory) => {
    const fn = template.findResources('AWS::Lambda::Function')[fnId(name)];
    expect(fn?.Properties).toMatchObject({
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      Timeout: timeout,
      MemorySize: memory,
    });
  });

  it("recovers dead executions: a rule on the machine's FAILED, TIMED_OUT and ABORTED status changes, and a sweep", () => {
    const recover = { 'Fn::GetAtt': [fnId('RecoverJobs'), 'Arn'] };
    const machine = { Ref: logicalId(stack, stack.jobs.stateMachine) };
    // These two, the wait bus's rule to the notifier and the watchdog's schedule.
    template.resourceCountIs('AWS::Events::Rule', 4);
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.states'],
        'detail-type': ['Step Functions Execution Status Change'],
        detail: { status: ['FAILED', 'TIMED_OUT', 'ABORTED'], stateMachineArn: [machine] },
      },
      State: 'ENABLED',
      Targets: [
        Match.objectLike({
          Arn: recover,
          RetryPolicy: { MaximumRetryAttempts: 8, MaximumEventAgeInSeconds: 86_400 },
        }),
      ],
    });
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(5 minutes)',
      Targets: [Match.objectLike({ Arn: recover })],
    });
    // EventBridge may invoke it, for each rule.
    const permissions = Object.values(template.findResources('AWS::Lambda::Permission')).filter(
      (p) => JSON.stringify(p.Properties.FunctionName) === JSON.stringify(recover),
    );
    expect(permissions.map((p) => p.Properties.Principal)).toEqual([
      'events.amazonaws.com',
      'events.amazonaws.com',
    ]);
    const vars =
      template.findResources('AWS::Lambda::Function')[fnId('RecoverJobs')]?.Properties.Environment.Variables;
    expect(vars).toMatchObject({ STATE_MACHINE_ARN: machine, BELAY_SECRETS: 'none' });
  });

  it('every function has a timeout, and runs Node 22 on arm64', () => {
    for (const fn of Object.values(template.findResources('AWS::Lambda::Function'))) {
      expect(fn.Properties.Timeout).toBeGreaterThan(3);
      expect(fn.Properties.Runtime).toBe('nodejs22.x');
      expect(fn.Properties.Architectures).toEqual(['arm64']);
    }
  });

  it.each(FUNCTIONS)(
    '%s: the Anchor key only as a secret ARN, only where a browser is driven',
    (name, _timeout, _memory, browser) => {
      const vars =
        template.findResources('AWS::Lambda::Function')[fnId(name)]?.Properties.Environment.Variables;
      expect(vars.ANCHORBROWSER_API_KEY).toBeUndefined();
      expect(vars.ANCHOR_WEBHOOK_SECRET).toBeUndefined();
      if (browser) {
        expect(vars.ANCHORBROWSER_API_KEY_SECRET_ARN).toEqual({ Ref: logicalId(stack, stack.anchorApiKey) });
        expect(vars.BELAY_BROWSER_ACCESS).toBeUndefined();
      } else {
        expect(vars.ANCHORBROWSER_API_KEY_SECRET_ARN).toBeUndefined();
        if (name !== 'ApiAuthorizer') expect(vars.BELAY_BROWSER_ACCESS).toBe('none');
      }
    },
  );

  it.each(ENGINE)('%s gets the engine environment', (name) => {
    const vars =
      template.findResources('AWS::Lambda::Function')[fnId(name)]?.Properties.Environment.Variables;
    expect(vars).toMatchObject({
      TABLE_NAME: { Ref: logicalId(stack, stack.ledger) },
      // The credential store only where the function signs in; no store at all elsewhere.
      BELAY_SECRETS: SIGNS_IN.has(name) ? 'secretsmanager:belay' : 'none',
      BELAY_DEFAULT_PLAN: 'free',
    });
    expect(JSON.parse(vars.BELAY_APPLICATIONS)).toEqual(APPLICATIONS);
    // AwaitHuman announces waits; RecordFailure, a drift check that turned red.
    expect('EVENT_BUS_NAME' in vars).toBe(name === 'AwaitHuman' || name === 'RecordFailure');
    expect('STATE_MACHINE_ARN' in vars).toBe(false);
  });

  it('gives the API the machine, the webhook secret, the credential store and its own URL', () => {
    const vars =
      template.findResources('AWS::Lambda::Function')[fnId('ApiHandler')]?.Properties.Environment.Variables;
    expect(vars).toMatchObject({
      TABLE_NAME: { Ref: logicalId(stack, stack.ledger) },
      STATE_MACHINE_ARN: { Ref: logicalId(stack, stack.jobs.stateMachine) },
      ANCHOR_WEBHOOK_SECRET_ARN: { Ref: logicalId(stack, stack.anchorWebhookSecret) },
      BELAY_SECRETS: 'secretsmanager:belay',
    });
    expect(JSON.stringify(vars.BELAY_API_URL)).toContain(logicalId(stack, stack.api.httpApi));
    // People answer every approval, code and review unless belay:mcpAnswerTenants names a tenant.
    expect(vars.BELAY_MCP_ANSWER_TENANTS).toBeUndefined();
    const authorizerVars =
      template.findResources('AWS::Lambda::Function')[fnId('ApiAuthorizer')]?.Properties.Environment
        .Variables;
    expect(Object.keys(authorizerVars).sort()).toEqual(['BELAY_TRACING', 'TABLE_NAME']);
  });

  it('deploys the ASL file unchanged, with exactly its placeholders substituted by the task functions', () => {
    const asl = readFileSync(STATE_MACHINE_DEFINITION, 'utf8');
    const placeholders = [...new Set([...asl.matchAll(/\$\{(\w+)\}/g)].map((m) => m[1]))].sort();
    expect(placeholders).toHaveLength(8);
    const [machine] = Object.values(template.findResources('AWS::StepFunctions::StateMachine'));
    expect(machine?.Properties.DefinitionString).toBe(asl);
    const substitutions = machine?.Properties.DefinitionSubstitutions as Record<string, unknown>;
    expect(Object.keys(substitutions).sort()).toEqual(placeholders);
    for (const name of ENGINE) {
      expect(substitutions[`${name}FunctionArn`]).toEqual({ 'Fn::GetAtt': [fnId(name), 'Arn'] });
    }
  });

  it('invokes RunStep through a live alias with provisioned concurrency when belay:provisionedRunSteps is set', () => {
    const provisioned = synth({ 'belay:provisionedRunSteps': '2' });
    const alias = provisioned.stack.runStepAlias;
    expect(alias).toBeDefined();
    const aliasId = logicalId(provisioned.stack, alias as never);
    provisioned.template.hasResourceProperties('AWS::Lambda::Alias', {
      Name: 'live',
      ProvisionedConcurrencyConfig: { ProvisionedConcurrentExecutions: 2 },
    });
    const [machine] = Object.values(provisioned.template.findResources('AWS::StepFunctions::StateMachine'));
    const substitutions = machine?.Properties.DefinitionSubstitutions as Record<string, unknown>;
    expect(substitutions.RunStepFunctionArn).toEqual({ Ref: aliasId });
    // Every other task still invokes its function itself.
    const startId = logicalId(provisioned.stack, provisioned.stack.engineFunctions.Start);
    expect(substitutions.StartFunctionArn).toEqual({ 'Fn::GetAtt': [startId, 'Arn'] });
    // And nothing of it without the flag.
    expect(stack.runStepAlias).toBeUndefined();
    template.resourceCountIs('AWS::Lambda::Alias', 0);
  });

  it('schedules a drift check per playbook of belay:checks, and nothing without it', () => {
    const check = { schedule: 'rate(1 day)', tenant: 'acme', accounts: { shop: 'acct_1' } };
    const scheduled = synth({ 'belay:checks': { 'checkout@1': check } });
    const rules = Object.values(scheduled.template.findResources('AWS::Events::Rule')).filter(
      (r) => r.Properties.ScheduleExpression === 'rate(1 day)',
    );
    expect(rules).toHaveLength(1);
    const target = rules[0]?.Properties.Targets[0];
    expect(JSON.parse(target.Input)).toEqual({ playbook: 'checkout@1', ...check });
    const fns = Object.entries(scheduled.template.findResources('AWS::Lambda::Function')).filter(([, f]) =>
      String(f.Properties.Description).startsWith('Submits a scheduled drift check'),
    );
    expect(fns).toHaveLength(1);
    expect(target.Arn).toEqual({ 'Fn::GetAtt': [fns[0]?.[0], 'Arn'] });
    // Off by default: no such function, no schedule of a check.
    expect(
      Object.values(template.findResources('AWS::Lambda::Function')).some((f) =>
        String(f.Properties.Description).startsWith('Submits a scheduled drift check'),
      ),
    ).toBe(false);
    expect(() => synth({ 'belay:checks': { 'checkout@1': { ...check, schedule: 'daily' } } })).toThrow(
      /belay:checks\.checkout@1/,
    );
  });

  it('is a Standard machine, traced, logging errors without execution data to its own log group', () => {
    template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      StateMachineType: 'STANDARD',
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: {
        Level: 'ERROR',
        IncludeExecutionData: false,
        Destinations: [
          {
            CloudWatchLogsLogGroup: {
              LogGroupArn: { 'Fn::GetAtt': [logicalId(stack, stack.jobs.logGroup), 'Arn'] },
            },
          },
        ],
      },
    });
  });

  it("gives every task state TASK_TIMEOUT_MARGIN_SECONDS more than its Lambda's timeout, so a timed-out attempt has ended before its retry", () => {
    const tasks = aslTasks();
    expect(tasks.length).toBeGreaterThanOrEqual(8);
    const functions = template.findResources('AWS::Lambda::Function');
    for (const { placeholder, timeoutSeconds } of tasks) {
      const name = placeholder.replace(/FunctionArn$/, '');
      expect(timeoutSeconds, `${name} has no TimeoutSeconds`).toBeTypeOf('number');
      expect(
        (functions[fnId(name)]?.Properties.Timeout as number) + TASK_TIMEOUT_MARGIN_SECONDS,
        name,
      ).toBeLessThanOrEqual(timeoutSeconds as number);
    }
  });

  it.each([['ExecutionsFailed'], ['ExecutionsTimedOut'], ['ExecutionsAborted'], ['ExecutionThrottled']])(
    'alarms on %s > 0 in 5 minutes, to the alarm topic',
    (metric) => {
      const topic = { Ref: logicalId(stack, stack.alarms.topic) };
      // And the five of the operations alarms (test/unit/cdk/operations.test.ts).
      template.resourceCountIs('AWS::CloudWatch::Alarm', 9);
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/States',
        MetricName: metric,
        Dimensions: [{ Name: 'StateMachineArn', Value: { Ref: logicalId(stack, stack.jobs.stateMachine) } }],
        Statistic: 'Sum',
        Period: 300,
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        TreatMissingData: 'notBreaching',
        AlarmActions: [topic],
      });
    },
  );

  it('encrypts the alarm topic with a rotated key that CloudWatch may use, and outputs it', () => {
    const keyId = logicalId(stack, stack.alarms.node.findChild('TopicKey'));
    template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: { 'Fn::GetAtt': [keyId, 'Arn'] } });
    template.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
          }),
        ]),
      },
    });
    template.hasOutput('AlarmTopicArn', { Value: { Ref: logicalId(stack, stack.alarms.topic) } });
  });

  it('outputs the API URL, the machine, the table, the bus and the secrets to fill in', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(Object.keys(outputs).sort()).toEqual(
      [
        'AlarmTopicArn',
        'AnchorApiKeySecretArn',
        'AnchorWebhookSecretArn',
        'ApiUrl',
        'ConsoleUrl',
        'ScreenshotBucketName',
        'LedgerTableName',
        'OperationsDashboardName',
        'StateMachineArn',
        'WaitEventBusName',
      ].sort(),
    );
    expect(JSON.stringify(outputs.ApiUrl?.Value)).toContain(logicalId(stack, stack.api.httpApi));
    template.hasOutput('LedgerTableName', { Value: { Ref: logicalId(stack, stack.ledger) } });
    expect(JSON.stringify(outputs.ConsoleUrl?.Value)).toContain('/console');
  });

  it('keeps screenshots encrypted, private, TLS-only and expiring with the jobs', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      },
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      LifecycleConfiguration: {
        Rules: [Match.objectLike({ ExpirationInDays: 37, Prefix: 'tenants/', Status: 'Enabled' })],
      },
    });
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  it('serves the console from the same API, its routes open at the gateway and authenticated by the handler', () => {
    for (const path of ['/console', '/console/jobs', '/console/inbox', '/console/jobs/{jobId}']) {
      template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
        RouteKey: `GET ${path}`,
        AuthorizationType: 'NONE',
      });
    }
  });

  it('warns when no application is configured, and not otherwise', () => {
    const warning = Match.stringLikeRegexp("Context 'belay:applications' is not set");
    Annotations.fromStack(stack).hasNoWarning('*', warning);
    const bare = configureApp(apps.app(cdkJsonContext()), {});
    Annotations.fromStack(bare).hasWarning(`/${STACK_NAME}`, warning);
  });
});

describe('Stack: BelayStack configuration', () => {
  it('is environment-agnostic unless the CLI names an account or region', () => {
    expect(environmentFrom({})).toBeUndefined();
    expect(environmentFrom({ CDK_DEFAULT_ACCOUNT: '', CDK_DEFAULT_REGION: '' })).toBeUndefined();
    expect(environmentFrom({ CDK_DEFAULT_ACCOUNT: '123456789012', CDK_DEFAULT_REGION: 'eu-west-1' })).toEqual(
      { account: '123456789012', region: 'eu-west-1' },
    );
    const agnostic = configureApp(apps.app(), {});
    expect(Token.isUnresolved(agnostic.account)).toBe(true);
    const pinned = configureApp(apps.app(), { env: { account: '123456789012', region: 'eu-west-1' } });
    expect(pinned.region).toBe('eu-west-1');
  });

  it('takes the throttle, Anchor base URL, default plan and log settings from context', () => {
    const { stack, template } = synth({
      'belay:apiRateLimit': '7',
      'belay:apiBurstLimit': 9,
      'belay:anchorBaseUrl': 'https://anchor.example.net',
      'belay:defaultPlan': 'growth',
      'belay:logRetentionDays': '7',
      'belay:removalPolicy': 'destroy',
      'belay:mcpAnswerTenants': 'acme, globex',
    });
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      DefaultRouteSettings: { ThrottlingRateLimit: 7, ThrottlingBurstLimit: 9 },
    });
    const vars = (name: string): Record<string, unknown> =>
      template.findResources('AWS::Lambda::Function')[logicalId(stack, stack.node.findChild(name))]
        ?.Properties.Environment.Variables;
    expect(vars('RunStep')).toMatchObject({
      ANCHORBROWSER_BASE_URL: 'https://anchor.example.net',
      BELAY_DEFAULT_PLAN: 'growth',
    });
    expect(vars('ApiAuthorizer').ANCHORBROWSER_BASE_URL).toBeUndefined();
    expect(vars('ApiHandler').BELAY_MCP_ANSWER_TENANTS).toBe('acme,globex');
    expect(vars('RunStep').BELAY_MCP_ANSWER_TENANTS).toBeUndefined();
    const logGroups = Object.values(template.findResources('AWS::Logs::LogGroup'));
    expect(logGroups).toHaveLength(15); // 13 functions, the machine, the API's access logs
    for (const group of logGroups) {
      expect(group).toMatchObject({ Properties: { RetentionInDays: 7 }, DeletionPolicy: 'Delete' });
    }
  });

  it.each([
    [{}, 30, 'Retain'],
    [{ 'belay:logRetentionDays': '7', 'belay:removalPolicy': 'destroy' }, 7, 'Delete'],
  ])('addFunction gives log groups the configured retention and removal (%j)', (context, days, policy) => {
    const stack = configureApp(apps.app(context), {});
    const fn = stack.addFunction('Extra', {
      entry: fixture('plain-handler.ts'),
      timeout: Duration.seconds(5),
    });
    const template = Template.fromStack(stack);
    const logGroupId = logicalId(stack, stack.node.findChild('ExtraLogGroup'));
    expect(template.findResources('AWS::Logs::LogGroup')[logGroupId]).toMatchObject({
      Properties: { RetentionInDays: days },
      DeletionPolicy: policy,
    });
    expect(fn.timeout?.toSeconds()).toBe(5);
  });
});
