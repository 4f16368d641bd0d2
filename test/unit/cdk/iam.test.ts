/**
 * Least privilege, per function, read from the synthesized template: each function's role
 * allows exactly what its code calls (see `cdk/engine-functions.ts` for why), and the rules
 * that must hold across the whole stack hold.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { configureApp } from '../../../cdk/belay-app.ts';
import { cdkJsonContext, TestApps } from '../../support/cdk.ts';
import {
  actionsWith,
  flatten,
  logicalId,
  type Permission,
  permissionsOf,
  type Statement,
} from '../../support/cdk-template.ts';

const apps = new TestApps();
afterAll(() => apps.cleanup());

const stack = configureApp(apps.app(cdkJsonContext()), {});
const template = Template.fromStack(stack);
const id = (name: string): string => logicalId(stack, stack.node.findChild(name));
const ref = (construct: Parameters<typeof logicalId>[1]): string =>
  JSON.stringify({ Ref: logicalId(stack, construct) });

const G = 'dynamodb:GetItem';
const Q = 'dynamodb:Query';
const P = 'dynamodb:PutItem';
const U = 'dynamodb:UpdateItem';
const C = 'dynamodb:ConditionCheckItem';
const READ = ['secretsmanager:GetSecretValue'];
const MANAGE = [
  'secretsmanager:CreateSecret',
  'secretsmanager:DeleteSecret',
  'secretsmanager:GetSecretValue',
  'secretsmanager:PutSecretValue',
];

interface Expected {
  /** DynamoDB actions on the table and its indexes, unconditionally. */
  table: string[];
  /** Actions allowed only on items whose partition key matches these patterns. */
  keyed?: { actions: string[]; leadingKeys: string[] };
  /** More actions allowed on other partitions only. */
  keyedToo?: { actions: string[]; leadingKeys: string[] };
  /** Actions on `belay/*` secrets (connected accounts' credentials). */
  credentials?: string[];
  anchorKey?: boolean;
  webhookSecret?: boolean;
  /** Reads the key tenants' webhook secrets are derived from. */
  signingKey?: boolean;
  events?: boolean;
  /** Screenshots: PutObject (RunStep, Reconcile) or GetObject (the API) under `tenants/*`. */
  s3?: 'put' | 'get';
}

/** The whole table: what each function may do. A change here is a change of least privilege. */
const EXPECTED: Record<string, Expected> = {
  Start: {
    table: [G, Q, P, U],
    keyed: { actions: ['dynamodb:DeleteItem'], leadingKeys: ['T#*#CAP'] },
    anchorKey: true,
  },
  OpenSession: { table: [G, P, U], anchorKey: true },
  // Playbook code runs in RunStep: its writes reach its jobs, leases and the action cache only,
  // never an API key, a tenant's item, accounts or webhooks.
  RunStep: {
    table: [G, Q],
    keyed: { actions: [P, U, C], leadingKeys: ['T#*#J#*', 'T#*#CAP', 'T#*#AC#*', 'AC#SHARED#*'] },
    credentials: READ,
    anchorKey: true,
    s3: 'put',
  },
  Reauthenticate: { table: [G, P, U, C], credentials: READ, anchorKey: true },
  Reconcile: { table: [G, Q, P, U, C], anchorKey: true, s3: 'put' },
  AwaitHuman: {
    table: [G, Q, P, U],
    keyed: { actions: ['dynamodb:DeleteItem'], leadingKeys: ['T#*#CAP'] },
    anchorKey: true,
    events: true,
  },
  Finish: {
    table: [G, Q, P, U],
    keyed: { actions: ['dynamodb:DeleteItem'], leadingKeys: ['T#*#CAP'] },
    credentials: READ,
    anchorKey: true,
  },
  RecordFailure: {
    table: [G, Q, P, U],
    keyed: { actions: ['dynamodb:DeleteItem'], leadingKeys: ['T#*#CAP'] },
    anchorKey: true,
    // A drift check that turned red is announced on the bus.
    events: true,
  },
  ApiHandler: {
    table: [G, Q, P, U, C],
    keyed: { actions: ['dynamodb:DeleteItem'], leadingKeys: ['T#*#CAP', 'WEBHOOK#*', 'CONSOLE#*'] },
    credentials: MANAGE,
    anchorKey: true,
    webhookSecret: true,
    signingKey: true,
    s3: 'get',
  },
  Notifier: { table: [], keyed: { actions: [P, Q], leadingKeys: ['T#*'] }, signingKey: true },
  // Read-only: the tenant directory and live statuses (gsi1), leases and tenant plans.
  Watchdog: { table: [G, Q] },
  // Key lookups, and refused keys counted per source address.
  ApiAuthorizer: {
    table: [],
    keyed: { actions: [G], leadingKeys: ['APIKEY#*'] },
    keyedToo: { actions: [U], leadingKeys: ['RATE#ip:*'] },
  },
  // readJob, getJob, the index of unfinished jobs (Query); sessions ended, the failure or the
  // recovery recorded (UpdateItem, PutItem); leases released (DeleteItem on T#*#CAP only).
  RecoverJobs: {
    table: [G, Q, P, U],
    keyed: { actions: ['dynamodb:DeleteItem'], leadingKeys: ['T#*#CAP'] },
    anchorKey: true,
  },
};

const tableArn = JSON.stringify({ 'Fn::GetAtt': [logicalId(stack, stack.ledger), 'Arn'] });
const indexArn = JSON.stringify({
  'Fn::Join': ['', [{ 'Fn::GetAtt': [logicalId(stack, stack.ledger), 'Arn'] }, '/index/*']],
});
const credentialArn = JSON.stringify({
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      ':secretsmanager:',
      { Ref: 'AWS::Region' },
      ':',
      { Ref: 'AWS::AccountId' },
      ':secret:belay/*',
    ],
  ],
});

function sorted(values: Iterable<string>): string[] {
  return [...new Set(values)].sort();
}

function allPermissions(): Permission[] {
  return flatten(
    Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
      (p) => p.Properties.PolicyDocument.Statement as Statement[],
    ),
  );
}

describe('IAM: per function', () => {
  it('covers every function of the stack', () => {
    expect(Object.keys(template.findResources('AWS::Lambda::Function')).sort()).toEqual(
      Object.keys(EXPECTED).map(id).sort(),
    );
  });

  it.each(Object.entries(EXPECTED))('%s: DynamoDB exactly as its code uses it', (name, expected) => {
    const dynamo = permissionsOf(template, id(name)).filter((p) => p.action.startsWith('dynamodb:'));
    const open = dynamo.filter((p) => !p.condition);
    expect(sorted(open.map((p) => p.action))).toEqual([...expected.table].sort());
    for (const p of open) expect([tableArn, indexArn]).toContain(p.resource);
    // Both the table and its indexes for every unconditional action (Query on gsi1 needs the index ARN).
    expect(open).toHaveLength(expected.table.length * 2);

    const keyed = dynamo.filter((p) => p.condition);
    const groups = [expected.keyed, expected.keyedToo].filter((g) => g !== undefined);
    expect(sorted(keyed.map((p) => p.action))).toEqual(sorted(groups.flatMap((g) => g.actions)));
    for (const p of keyed) {
      const group = groups.find((g) => g.actions.includes(p.action));
      expect(p.resource).toBe(tableArn);
      expect(p.condition).toEqual({
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': group?.leadingKeys },
      });
    }
  });

  it.each(Object.entries(EXPECTED))('%s: secrets exactly as its code reads them', (name, expected) => {
    const secrets = permissionsOf(template, id(name)).filter((p) => p.action.startsWith('secretsmanager:'));
    const onCredentials = secrets.filter((p) => p.resource === credentialArn).map((p) => p.action);
    expect(sorted(onCredentials)).toEqual(expected.credentials ?? []);
    const onResource = (resource: string): string[] =>
      secrets.filter((p) => p.resource === resource).map((p) => p.action);
    expect(onResource(ref(stack.anchorApiKey))).toEqual(expected.anchorKey ? READ : []);
    expect(onResource(ref(stack.anchorWebhookSecret))).toEqual(expected.webhookSecret ? READ : []);
    expect(onResource(ref(stack.webhookSigningKey))).toEqual(expected.signingKey ? READ : []);
    // Nothing else: every secrets permission is one of the four above.
    const known = [
      credentialArn,
      ref(stack.anchorApiKey),
      ref(stack.anchorWebhookSecret),
      ref(stack.webhookSigningKey),
    ];
    for (const p of secrets) expect(known, `${name}: ${p.action} on ${p.resource}`).toContain(p.resource);
  });

  it.each(Object.entries(EXPECTED))(
    '%s: events:PutEvents only if it announces waits or red checks',
    (name, expected) => {
      const events = permissionsOf(template, id(name)).filter((p) => p.action.startsWith('events:'));
      expect(events).toEqual(
        expected.events
          ? [
              {
                action: 'events:PutEvents',
                resource: JSON.stringify({ 'Fn::GetAtt': [id('WaitEvents'), 'Arn'] }),
              },
            ]
          : [],
      );
    },
  );

  it.each(Object.entries(EXPECTED))('%s: screenshots only as its code uses them', (name, expected) => {
    const s3 = permissionsOf(template, id(name)).filter((p) => p.action.startsWith('s3:'));
    const objects = JSON.stringify({
      'Fn::Join': ['', [{ 'Fn::GetAtt': [logicalId(stack, stack.screenshots.bucket), 'Arn'] }, '/tenants/*']],
    });
    expect(s3).toEqual(
      expected.s3
        ? [{ action: expected.s3 === 'put' ? 's3:PutObject' : 's3:GetObject', resource: objects }]
        : [],
    );
  });

  it.each(Object.keys(EXPECTED))(
    '%s: no service beyond logs, X-Ray, DynamoDB, secrets, events, states, S3 (and KMS for the API, which signs receipts)',
    (name) => {
      const services = sorted(permissionsOf(template, id(name)).map((p) => p.action.split(':')[0] as string));
      const allowed = ['dynamodb', 'events', 'logs', 's3', 'secretsmanager', 'states', 'xray'];
      for (const service of services) {
        expect(name === 'ApiHandler' ? [...allowed, 'kms'] : allowed).toContain(service);
      }
    },
  );

  it('only the API signs receipts: kms:Sign and kms:GetPublicKey on the receipt key, nothing else of KMS', () => {
    const key = JSON.stringify({ 'Fn::GetAtt': [logicalId(stack, stack.receiptKey), 'Arn'] });
    const kms = Object.keys(EXPECTED).flatMap((name) =>
      permissionsOf(template, id(name))
        .filter((p) => p.action.startsWith('kms:'))
        .map((p) => ({ name, ...p })),
    );
    expect(sorted(kms.map((p) => `${p.name} ${p.action} ${p.resource}`))).toEqual([
      `ApiHandler kms:GetPublicKey ${key}`,
      `ApiHandler kms:Sign ${key}`,
    ]);
    template.hasResourceProperties('AWS::KMS::Key', { KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' });
    const api = template.findResources('AWS::Lambda::Function')[id('ApiHandler')]?.Properties;
    expect(JSON.stringify(api?.Environment?.Variables?.BELAY_RECEIPT_KEY)).toContain(
      logicalId(stack, stack.receiptKey),
    );
  });
});

describe('IAM: Step Functions access', () => {
  const machine = logicalId(stack, stack.jobs.stateMachine);

  it('only the API and the recovery function may start executions, only the API answer task tokens, on this machine only', () => {
    const states = allPermissions().filter((p) => p.action.startsWith('states:'));
    const apiRole = JSON.stringify(
      template.findResources('AWS::Lambda::Function')[id('ApiHandler')]?.Properties.Role,
    );
    expect(apiRole).toContain('ApiHandlerRole');
    const api = permissionsOf(template, id('ApiHandler')).filter((p) => p.action.startsWith('states:'));
    const recovery = permissionsOf(template, id('RecoverJobs')).filter((p) => p.action.startsWith('states:'));
    expect(sorted(states.map((p) => JSON.stringify(p)))).toEqual(
      sorted([...api, ...recovery].map((p) => JSON.stringify(p))),
    );
    expect(
      recovery
        .filter((p) => p.resource === JSON.stringify({ Ref: machine }))
        .map((p) => p.action)
        .sort(),
    ).toEqual(['states:ListExecutions', 'states:StartExecution']);
    const recoveryOnExecutions = recovery.filter((p) => p.resource !== JSON.stringify({ Ref: machine }));
    expect(recoveryOnExecutions.map((p) => p.action)).toEqual(['states:DescribeExecution']);
    expect(recoveryOnExecutions[0]?.resource).toContain(machine);
    const onMachine = api.filter((p) => p.resource === JSON.stringify({ Ref: machine }));
    expect(sorted(onMachine.map((p) => p.action))).toEqual([
      'states:SendTaskFailure',
      'states:SendTaskSuccess',
      'states:StartExecution',
    ]);
    const onExecutions = api.filter((p) => p.resource !== JSON.stringify({ Ref: machine }));
    expect(onExecutions.map((p) => p.action)).toEqual(['states:StopExecution']);
    expect(onExecutions[0]?.resource).toContain(':execution:');
    expect(onExecutions[0]?.resource).toContain(machine);
  });

  it('the machine role may invoke exactly the 8 task functions, by unqualified ARN', () => {
    const role = JSON.stringify(
      template.findResources('AWS::StepFunctions::StateMachine')[machine]?.Properties.RoleArn,
    );
    const roleId = (JSON.parse(role) as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((p) =>
      JSON.stringify(p.Properties.Roles).includes(roleId),
    );
    const lambda = flatten(
      policies.flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]),
    ).filter((p) => p.action.startsWith('lambda:'));
    const engine = Object.keys(stack.engineFunctions);
    expect(engine).toHaveLength(8);
    expect(sorted(lambda.map((p) => p.action))).toEqual(['lambda:InvokeFunction']);
    expect(sorted(lambda.map((p) => p.resource))).toEqual(
      sorted(engine.map((name) => JSON.stringify({ 'Fn::GetAtt': [id(name), 'Arn'] }))),
    );
    // And nobody else may invoke a function (API Gateway's invoke permissions are resource policies).
    const invokers = allPermissions().filter((p) => p.action.startsWith('lambda:'));
    expect(invokers).toEqual(lambda);
  });
});

describe('IAM: the whole stack', () => {
  const permissions = allPermissions();

  it('has no service wildcard, no Scan, no table-wide delete', () => {
    expect(permissions.filter((p) => p.action.includes('*'))).toEqual([]);
    expect(actionsWith(permissions, 'dynamodb:')).not.toContain('dynamodb:Scan');
    const deletes = permissions.filter((p) => p.action === 'dynamodb:DeleteItem');
    expect(deletes.length).toBeGreaterThan(0);
    for (const p of deletes) expect(p.condition).toBeDefined();
    expect(actionsWith(permissions, 'dynamodb:')).not.toContain('dynamodb:BatchWriteItem');
  });

  it('lets only the API handler write or delete credentials, and scopes every grant on them to belay/*', () => {
    const writers = Object.keys(EXPECTED).filter((name) =>
      permissionsOf(template, id(name)).some((p) =>
        [
          'secretsmanager:PutSecretValue',
          'secretsmanager:CreateSecret',
          'secretsmanager:DeleteSecret',
        ].includes(p.action),
      ),
    );
    expect(writers).toEqual(['ApiHandler']);
    for (const p of permissions.filter((x) => x.action.startsWith('secretsmanager:'))) {
      expect(p.resource).not.toBe('"*"');
    }
  });

  it("allows Resource '*' only for X-Ray and Step Functions' log delivery", () => {
    const star = permissions.filter((p) => p.resource === '"*"');
    expect(sorted(star.map((p) => p.action.split(':')[0] as string))).toEqual(['logs', 'xray']);
    for (const p of star.filter((x) => x.action.startsWith('logs:'))) {
      expect(p.action).toMatch(/LogDeliver|ResourcePolic|DescribeLogGroups/);
    }
  });
});
