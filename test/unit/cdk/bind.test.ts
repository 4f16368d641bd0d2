import { Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AttributeType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { DefinitionBody, Pass, StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { afterAll, describe, expect, it } from 'vitest';
import { BelayFunction } from '../../../cdk/constructs/belay-function.ts';
import {
  bindEventBus,
  bindStateMachine,
  bindTable,
  type DynamoDbAction,
  LEDGER_READ,
  LEDGER_WRITE,
  STATE_MACHINE_CALLBACK,
  STATE_MACHINE_START,
  type StatesAction,
} from '../../../cdk/constructs/bind.ts';
import {
  bindSecret,
  bindSecretStore,
  SECRET_MANAGE,
  SECRET_READ,
  type SecretsManagerAction,
} from '../../../cdk/constructs/bind-secrets.ts';
import { LedgerTable } from '../../../cdk/constructs/ledger-table.ts';
import { BindingError } from '../../../cdk/errors.ts';
import { fixture, TestApps } from '../../support/cdk.ts';

const apps = new TestApps();
afterAll(() => apps.cleanup());

function setup(): { stack: Stack; fn: BelayFunction; table: LedgerTable; machine: StateMachine } {
  const stack = new Stack(apps.app(), 'BindTest');
  const fn = new BelayFunction(stack, 'Step', {
    entry: fixture('plain-handler.ts'),
    timeout: Duration.seconds(10),
  });
  const table = new LedgerTable(stack, 'Ledger');
  const machine = new StateMachine(stack, 'Machine', {
    definitionBody: DefinitionBody.fromChainable(new Pass(stack, 'Start')),
  });
  return { stack, fn, table, machine };
}

/** Every Allow statement in the policies attached to the function's role. */
function roleStatements(template: Template, stack: Stack, fn: BelayFunction): Record<string, unknown>[] {
  const roleRef = stack.resolve(fn.executionRole.roleName);
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties.Roles) === JSON.stringify([roleRef]))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Record<string, unknown>[]);
}

function oneOrMany(actions: readonly string[]): string | string[] {
  return actions.length === 1 ? (actions[0] as string) : [...actions];
}

function actionsOf(statements: Record<string, unknown>[], prefix: string): string[] {
  return statements
    .flatMap((s) => [s.Action].flat() as string[])
    .filter((a) => a.startsWith(prefix))
    .sort();
}

describe('Function: bindTable', () => {
  it.each([
    ['LEDGER_READ', LEDGER_READ],
    ['LEDGER_WRITE', LEDGER_WRITE],
  ])('grants exactly %s on the table and its indexes and names the table', (_name, actions) => {
    const { stack, fn, table } = setup();
    bindTable(fn, table, { env: 'LEDGER_TABLE', actions });
    const template = Template.fromStack(stack);
    const tableId = stack.getLogicalId(table.node.defaultChild as never);

    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Effect: 'Allow',
            Action: [...actions],
            Resource: [
              { 'Fn::GetAtt': [tableId, 'Arn'] },
              { 'Fn::Join': ['', [{ 'Fn::GetAtt': [tableId, 'Arn'] }, '/index/*']] },
            ],
          },
        ]),
      },
    });
    // Nothing else on DynamoDB: no dynamodb:*, no Scan, no DeleteItem.
    expect(actionsOf(roleStatements(template, stack, fn), 'dynamodb:')).toEqual([...actions].sort());
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { LEDGER_TABLE: { Ref: tableId } } },
    });
  });

  it.each([
    [LEDGER_READ, ['kms:Decrypt']],
    [LEDGER_WRITE, ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey*', 'kms:ReEncrypt*']],
  ])('with a customer managed key, also allows the key for %j', (actions, keyActions) => {
    const { stack, fn } = setup();
    const table = new Table(stack, 'Encrypted', {
      partitionKey: { name: 'pk', type: AttributeType.STRING },
      encryption: TableEncryption.CUSTOMER_MANAGED,
    });
    bindTable(fn, table, { env: 'OTHER_TABLE', actions });
    const statements = roleStatements(Template.fromStack(stack), stack, fn);
    expect(actionsOf(statements, 'kms:')).toEqual(keyActions);
  });

  it('presets: read is GetItem + Query; write adds conditional writes and no transaction action', () => {
    expect(LEDGER_READ).toEqual(['dynamodb:GetItem', 'dynamodb:Query']);
    expect(LEDGER_WRITE).toEqual([
      'dynamodb:GetItem',
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:ConditionCheckItem',
    ]);
  });

  it.each([
    [{ env: 'LEDGER_TABLE', actions: [] }, /actions must not be empty/],
    [{ env: 'LEDGER_TABLE', actions: ['dynamodb:*'] }, /'dynamodb:\*' is not a single dynamodb:<Action>/],
    [{ env: 'LEDGER_TABLE', actions: ['dynamodb:Get*'] }, /no wildcards/],
    [{ env: 'LEDGER_TABLE', actions: ['s3:GetObject'] }, /'s3:GetObject' is not a single dynamodb/],
    [
      { env: 'ledger-table', actions: LEDGER_READ },
      /'ledger-table' is not a valid environment variable name/,
    ],
    [{ env: 'AWS_TABLE', actions: LEDGER_READ }, /reserved by Lambda/],
  ])('refuses %j', (options, message) => {
    const { fn, table } = setup();
    const bind = (): unknown =>
      bindTable(fn, table, options as { env: string; actions: readonly DynamoDbAction[] });
    expect(bind).toThrow(BindingError);
    expect(bind).toThrow(message);
  });
});

describe('Function: bindStateMachine', () => {
  it.each([
    ['STATE_MACHINE_START', STATE_MACHINE_START],
    ['STATE_MACHINE_CALLBACK', STATE_MACHINE_CALLBACK],
  ])('grants exactly %s on the machine and names it', (_name, actions) => {
    const { stack, fn, machine } = setup();
    bindStateMachine(fn, machine, { env: 'JOB_STATE_MACHINE_ARN', actions });
    const template = Template.fromStack(stack);
    const machineId = stack.getLogicalId(machine.node.defaultChild as never);

    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        // CDK writes a single action as a string.
        Statement: Match.arrayWith([
          { Effect: 'Allow', Action: oneOrMany(actions), Resource: { Ref: machineId } },
        ]),
      },
    });
    expect(actionsOf(roleStatements(template, stack, fn), 'states:')).toEqual([...actions].sort());
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { JOB_STATE_MACHINE_ARN: { Ref: machineId } } },
    });
  });

  it("grants execution actions on the machine's executions only", () => {
    const { stack, fn, machine } = setup();
    bindStateMachine(fn, machine, { env: 'JOB_STATE_MACHINE_ARN', actions: ['states:DescribeExecution'] });
    const statements = roleStatements(Template.fromStack(stack), stack, fn);
    const statement = statements.find((s) => s.Action === 'states:DescribeExecution');
    const machineId = stack.getLogicalId(machine.node.defaultChild as never);
    const resource = JSON.stringify(statement?.Resource);
    expect(resource).toContain(':execution:');
    expect(resource).toContain(`{"Ref":"${machineId}"}`);
    expect(resource).toMatch(/:\*"\]\]\}$/);
  });

  it.each([
    [['states:CreateStateMachine'], /no known resource for states:CreateStateMachine/],
    [['states:*'], /no wildcards/],
    [['lambda:InvokeFunction'], /'lambda:InvokeFunction' is not a single states/],
  ])('refuses %j', (actions, message) => {
    const { fn, machine } = setup();
    const bind = (): unknown =>
      bindStateMachine(fn, machine, { env: 'JOB_STATE_MACHINE_ARN', actions: actions as StatesAction[] });
    expect(bind).toThrow(BindingError);
    expect(bind).toThrow(message);
  });
});

describe('Function: bindTable with leadingKeys', () => {
  it('allows the actions on the table only, for matching partition keys only, without an index wildcard', () => {
    const { stack, fn, table } = setup();
    bindTable(fn, table, { env: 'TABLE_NAME', actions: ['dynamodb:DeleteItem'], leadingKeys: ['T#*#CAP'] });
    const statements = roleStatements(Template.fromStack(stack), stack, fn);
    const tableId = stack.getLogicalId(table.node.defaultChild as never);
    expect(statements.filter((s) => String(s.Action).startsWith('dynamodb:'))).toEqual([
      {
        Effect: 'Allow',
        Action: 'dynamodb:DeleteItem',
        Resource: { 'Fn::GetAtt': [tableId, 'Arn'] },
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['T#*#CAP'] } },
      },
    ]);
    const acks = fn.executionRole.node.metadata.filter((m) => JSON.stringify(m.data).includes('/index/'));
    expect(acks).toEqual([]);
  });

  it.each([[[]], [['*']], [['  ']]])('refuses leadingKeys %j', (leadingKeys) => {
    const { fn, table } = setup();
    expect(() => bindTable(fn, table, { env: 'TABLE_NAME', actions: LEDGER_READ, leadingKeys })).toThrow(
      /leadingKeys/,
    );
  });
});

describe('Function: bindEventBus', () => {
  it('names the bus and allows events:PutEvents on it only', () => {
    const { stack, fn } = setup();
    const bus = new EventBus(stack, 'Bus');
    bindEventBus(fn, bus, { env: 'EVENT_BUS_NAME' });
    const template = Template.fromStack(stack);
    const busId = stack.getLogicalId(bus.node.defaultChild as never);
    expect(roleStatements(template, stack, fn).filter((s) => String(s.Action).startsWith('events:'))).toEqual(
      [{ Effect: 'Allow', Action: 'events:PutEvents', Resource: { 'Fn::GetAtt': [busId, 'Arn'] } }],
    );
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { EVENT_BUS_NAME: { Ref: busId } } },
    });
  });
});

describe('Function: bindSecret', () => {
  it("passes the secret's ARN, never its value, and allows reading that secret only", () => {
    const { stack, fn } = setup();
    const secret = new Secret(stack, 'ApiKey');
    bindSecret(fn, secret, { env: 'API_KEY_SECRET_ARN' });
    const template = Template.fromStack(stack);
    const secretId = stack.getLogicalId(secret.node.defaultChild as never);
    expect(
      roleStatements(template, stack, fn).filter((s) => String(s.Action).startsWith('secretsmanager:')),
    ).toEqual([{ Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: { Ref: secretId } }]);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { API_KEY_SECRET_ARN: { Ref: secretId } } },
    });
  });

  it("may decrypt with the secret's customer managed key", () => {
    const { stack, fn } = setup();
    const secret = new Secret(stack, 'ApiKey', { encryptionKey: new Key(stack, 'Key') });
    bindSecret(fn, secret, { env: 'API_KEY_SECRET_ARN' });
    const statements = roleStatements(Template.fromStack(stack), stack, fn);
    expect(actionsOf(statements, 'kms:')).toEqual(['kms:Decrypt']);
  });
});

describe('Function: bindSecretStore', () => {
  const prefixArn = {
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
  };

  it.each([
    ['SECRET_READ', SECRET_READ],
    ['SECRET_MANAGE', SECRET_MANAGE],
  ])('names the store and allows exactly %s on <prefix>/*', (_name, actions) => {
    const { stack, fn } = setup();
    bindSecretStore(fn, { env: 'BELAY_SECRETS', prefix: 'belay', actions });
    const template = Template.fromStack(stack);
    const statements = roleStatements(template, stack, fn).filter((s) =>
      String(s.Action).startsWith('secretsmanager:'),
    );
    expect(statements).toEqual([{ Effect: 'Allow', Action: oneOrMany(actions), Resource: prefixArn }]);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { BELAY_SECRETS: 'secretsmanager:belay' } },
    });
  });

  it('with no actions, names the store and grants nothing', () => {
    const { stack, fn } = setup();
    expect(bindSecretStore(fn, { env: 'BELAY_SECRETS', prefix: 'belay', actions: [] })).toBeUndefined();
    const template = Template.fromStack(stack);
    expect(actionsOf(roleStatements(template, stack, fn), 'secretsmanager:')).toEqual([]);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { BELAY_SECRETS: 'secretsmanager:belay' } },
    });
  });

  it.each([
    [{ prefix: 'belay/*', actions: SECRET_READ }, /is not a secret name prefix/],
    [{ prefix: '', actions: SECRET_READ }, /is not a secret name prefix/],
    [{ prefix: 'belay', actions: ['secretsmanager:*'] }, /no wildcards/],
    [{ prefix: 'belay', actions: ['kms:Decrypt'] }, /is not a single secretsmanager/],
  ])('refuses %j', (options, message) => {
    const { fn } = setup();
    const bind = (): unknown =>
      bindSecretStore(fn, {
        env: 'BELAY_SECRETS',
        ...(options as { prefix: string; actions: readonly SecretsManagerAction[] }),
      });
    expect(bind).toThrow(BindingError);
    expect(bind).toThrow(message);
  });
});
