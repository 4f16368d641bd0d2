/**
 * Binding a function to a resource sets the environment variable that names the resource
 * and grants the access that implies, in one call (Powertools' `bindTable` idea), so a
 * handler never has a table name without the right to use it, or the reverse.
 */
import { Arn, ArnFormat, Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { BindingError } from '../errors.ts';
import { acknowledgeWildcardResource } from '../nag.ts';

/** A DynamoDB IAM action, e.g. `dynamodb:GetItem`. */
export type DynamoDbAction = `dynamodb:${string}`;
/** A Step Functions IAM action, e.g. `states:StartExecution`. */
export type StatesAction = `states:${string}`;

/** Read a job and its ledger: one GetItem or one Query (on the table or a GSI). */
export const LEDGER_READ = Object.freeze(['dynamodb:GetItem', 'dynamodb:Query'] as const);

/**
 * Read, and write with conditions. `TransactWriteItems` needs no action of its own: IAM
 * authorizes each item of a transaction by its underlying action (PutItem, UpdateItem,
 * ConditionCheckItem), see "Using IAM with DynamoDB transactions" in the DynamoDB guide.
 * No DeleteItem: the ledger is append-only and expiry is TTL's job.
 */
export const LEDGER_WRITE = Object.freeze([
  ...LEDGER_READ,
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:ConditionCheckItem',
] as const);

/** Start an execution of the machine (the API submits a job). */
export const STATE_MACHINE_START = Object.freeze(['states:StartExecution'] as const);

/** Resume a wait-for-task-token step (the API relays a person's decision). */
export const STATE_MACHINE_CALLBACK = Object.freeze([
  'states:SendTaskSuccess',
  'states:SendTaskFailure',
  'states:SendTaskHeartbeat',
] as const);

/** DynamoDB actions that only read items (for the key grant of a customer managed key). */
const DYNAMODB_READ_ACTIONS: ReadonlySet<string> = new Set([
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:Scan',
  'dynamodb:ConditionCheckItem',
]);

/** Actions on the state machine's ARN. */
const MACHINE_ACTIONS: ReadonlySet<string> = new Set([
  'states:StartExecution',
  'states:StartSyncExecution',
  'states:SendTaskSuccess',
  'states:SendTaskFailure',
  'states:SendTaskHeartbeat',
  'states:DescribeStateMachine',
  'states:ListExecutions',
]);

/** Actions on the machine's executions (`execution:<name>:*`). */
const EXECUTION_ACTIONS: ReadonlySet<string> = new Set([
  'states:DescribeExecution',
  'states:StopExecution',
  'states:GetExecutionHistory',
  'states:RedriveExecution',
]);

/** Options of {@link bindTable}. */
export interface BindTableOptions {
  /** The environment variable that receives the table name, e.g. `LEDGER_TABLE`. */
  readonly env: string;
  /** Exactly the DynamoDB actions to allow; no wildcards. See {@link LEDGER_READ}, {@link LEDGER_WRITE}. */
  readonly actions: readonly DynamoDbAction[];
  /**
   * Allow the actions only on items whose partition key matches one of these `StringLike`
   * patterns (IAM's `dynamodb:LeadingKeys`), and on the table only, not its indexes.
   * For actions that must not reach every item, e.g. deleting capacity leases (`T#*#CAP`)
   * from an otherwise append-only ledger.
   * @default - every item of the table and its indexes
   * @example
   * bindTable(finish, ledger, { env: 'TABLE_NAME', actions: ['dynamodb:DeleteItem'], leadingKeys: ['T#*#CAP'] });
   */
  readonly leadingKeys?: readonly string[];
}

/** Options of {@link bindEventBus}. */
export interface BindEventBusOptions {
  /** The environment variable that receives the bus name, e.g. `EVENT_BUS_NAME`. */
  readonly env: string;
}

/** Options of {@link bindStateMachine}. */
export interface BindStateMachineOptions {
  /** The environment variable that receives the state machine ARN, e.g. `JOB_STATE_MACHINE_ARN`. */
  readonly env: string;
  /**
   * Exactly the Step Functions actions to allow. Machine actions are granted on the
   * machine's ARN, execution actions (Describe/Stop/GetExecutionHistory/Redrive) on its
   * executions. See {@link STATE_MACHINE_START}, {@link STATE_MACHINE_CALLBACK}.
   */
  readonly actions: readonly StatesAction[];
}

/**
 * Sets `options.env` to the table's name and allows exactly `options.actions` on the table
 * and its indexes (`<table>/index/*`). If the table has a customer managed key, the
 * function may also use the key (decrypt; encrypt too if any action writes).
 *
 * @example
 * bindTable(runStep, ledger, { env: 'LEDGER_TABLE', actions: LEDGER_WRITE });
 * @throws BindingError for an invalid variable name or a wildcard/empty action list
 */
export function bindTable(fn: LambdaFunction, table: ITable, options: BindTableOptions): iam.Grant {
  const actions = checkActions(fn, 'dynamodb', options.actions);
  const leadingKeys =
    options.leadingKeys === undefined ? undefined : checkLeadingKeys(fn, options.leadingKeys);
  fn.addEnvironment(checkEnvName(fn, options.env), table.tableName);
  const indexArn = `${table.tableArn}/index/*`;
  const grant = leadingKeys
    ? iam.Grant.addToPrincipal({
        grantee: fn,
        actions,
        resourceArns: [table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': leadingKeys } },
      })
    : iam.Grant.addToPrincipal({ grantee: fn, actions, resourceArns: [table.tableArn, indexArn] });
  if (table.encryptionKey) {
    const writes = actions.some((a) => !DYNAMODB_READ_ACTIONS.has(a));
    if (writes) table.encryptionKey.grantEncryptDecrypt(fn);
    else table.encryptionKey.grantDecrypt(fn);
  }
  if (!leadingKeys) {
    acknowledgeWildcardResource(
      fn.role ?? fn,
      indexArn,
      `Indexes of a bound table: the listed actions only (${actions.join(', ')}), on the table's own GSIs.`,
    );
  }
  return grant;
}

/**
 * Sets `options.env` to the bus's name and allows `events:PutEvents` on that bus only.
 *
 * @example
 * bindEventBus(awaitHuman, waitEvents, { env: 'EVENT_BUS_NAME' });
 * @throws BindingError for an invalid variable name
 */
export function bindEventBus(fn: LambdaFunction, bus: IEventBus, options: BindEventBusOptions): iam.Grant {
  fn.addEnvironment(checkEnvName(fn, options.env), bus.eventBusName);
  return iam.Grant.addToPrincipal({
    grantee: fn,
    actions: ['events:PutEvents'],
    resourceArns: [bus.eventBusArn],
  });
}

/**
 * Sets `options.env` to the state machine's ARN and allows exactly `options.actions`:
 * machine actions on the machine, execution actions on its executions.
 *
 * @example
 * bindStateMachine(submitJob, machine, { env: 'JOB_STATE_MACHINE_ARN', actions: STATE_MACHINE_START });
 * bindStateMachine(decide, machine, { env: 'JOB_STATE_MACHINE_ARN', actions: STATE_MACHINE_CALLBACK });
 * @throws BindingError for an invalid variable name, a wildcard, or an action it does not know the resource of
 */
export function bindStateMachine(
  fn: LambdaFunction,
  stateMachine: IStateMachine,
  options: BindStateMachineOptions,
): iam.Grant[] {
  const actions = checkActions(fn, 'states', options.actions);
  const unknown = actions.filter((a) => !MACHINE_ACTIONS.has(a) && !EXECUTION_ACTIONS.has(a));
  if (unknown.length > 0) {
    throw new BindingError(
      fn.node.path,
      `no known resource for ${unknown.join(', ')}; supported: ${[...MACHINE_ACTIONS, ...EXECUTION_ACTIONS].join(', ')}`,
    );
  }
  fn.addEnvironment(checkEnvName(fn, options.env), stateMachine.stateMachineArn);
  const grants: iam.Grant[] = [];
  const onMachine = actions.filter((a) => MACHINE_ACTIONS.has(a));
  if (onMachine.length > 0) {
    grants.push(
      iam.Grant.addToPrincipal({
        grantee: fn,
        actions: onMachine,
        resourceArns: [stateMachine.stateMachineArn],
      }),
    );
  }
  const onExecutions = actions.filter((a) => EXECUTION_ACTIONS.has(a));
  if (onExecutions.length > 0) {
    // arn:<partition>:states:<region>:<account>:execution:<machine name>:<execution name>
    const machine = Arn.split(stateMachine.stateMachineArn, ArnFormat.COLON_RESOURCE_NAME);
    const executions = Arn.format(
      { ...machine, resource: 'execution', resourceName: `${machine.resourceName}:*` },
      Stack.of(stateMachine),
    );
    grants.push(iam.Grant.addToPrincipal({ grantee: fn, actions: onExecutions, resourceArns: [executions] }));
    acknowledgeWildcardResource(
      fn.role ?? fn,
      executions,
      `Executions of one state machine: execution names are job ids, known only at run time (${onExecutions.join(', ')}).`,
    );
  }
  return grants;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A valid environment variable name Lambda does not reserve, or a BindingError.
 * @internal shared by the bind helpers
 */
export function checkEnvName(fn: LambdaFunction, name: string): string {
  if (!ENV_NAME.test(name)) {
    throw new BindingError(fn.node.path, `'${name}' is not a valid environment variable name`);
  }
  if (name.startsWith('AWS_')) {
    throw new BindingError(fn.node.path, `'${name}': names starting with AWS_ are reserved by Lambda`);
  }
  return name;
}

/** Partition key patterns: non-empty, and not a bare `*` (which would make the condition pointless). */
function checkLeadingKeys(fn: LambdaFunction, patterns: readonly string[]): string[] {
  if (patterns.length === 0) throw new BindingError(fn.node.path, 'leadingKeys must not be empty');
  for (const pattern of patterns) {
    if (pattern.trim() === '' || /^\**$/.test(pattern)) {
      throw new BindingError(fn.node.path, `leadingKeys pattern '${pattern}' would match every item`);
    }
  }
  return [...new Set(patterns)];
}

/**
 * Non-empty, de-duplicated `<service>:<Action>` names without wildcards, or a BindingError.
 * @internal shared by the bind helpers
 */
export function checkActions(fn: LambdaFunction, service: string, actions: readonly string[]): string[] {
  if (actions.length === 0) throw new BindingError(fn.node.path, 'actions must not be empty');
  for (const action of actions) {
    if (!action.startsWith(`${service}:`) || action.includes('*')) {
      throw new BindingError(
        fn.node.path,
        `'${action}' is not a single ${service}:<Action>; list the exact actions (no wildcards)`,
      );
    }
  }
  return [...new Set(actions)];
}
