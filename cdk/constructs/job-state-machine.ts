/**
 * The job state machine: `statemachine/job.asl.json` deployed unchanged (Standard, JSONPath),
 * its `${<Name>FunctionArn}` placeholders substituted with the task functions' ARNs.
 */
import { readFileSync } from 'node:fs';
import { RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import {
  STATE_MACHINE_FUNCTIONS,
  type StateMachineFunction,
  substitutionKey,
} from '../../lambdas/lib/engine/functions.ts';
import { BindingError } from '../errors.ts';
import { STATE_MACHINE_DEFINITION } from '../paths.ts';

/** Props of {@link JobStateMachine}. */
export interface JobStateMachineProps {
  /** The task function of every entry of `STATE_MACHINE_FUNCTIONS`. */
  readonly functions: Readonly<Record<StateMachineFunction, IFunction>>;
  /**
   * The ASL file.
   * @default STATE_MACHINE_DEFINITION (`statemachine/job.asl.json`)
   */
  readonly definitionFile?: string;
  /**
   * Retention of the execution log group.
   * @default RetentionDays.ONE_MONTH
   */
  readonly logRetention?: RetentionDays;
  /**
   * Removal policy of the execution log group.
   * @default RemovalPolicy.RETAIN
   */
  readonly logRemovalPolicy?: RemovalPolicy;
}

/** The `${Name}` placeholders of an ASL text, sorted. */
export function placeholdersOf(asl: string): string[] {
  return [...new Set([...asl.matchAll(/\$\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1] as string))].sort();
}

/**
 * A Standard state machine from the job ASL, with:
 * - `definitionSubstitutions` for exactly the placeholders of the file (a placeholder without
 *   a function, or a function without a placeholder, fails the synth);
 * - a role that may invoke exactly the task functions, by the ARN each placeholder gets (a
 *   function's unqualified ARN, or an alias's when one is given, as for provisioned RunSteps;
 *   never `:*`), nothing else of Lambda;
 * - errors logged to its own log group without execution data (inputs and outputs carry
 *   evidence from the target applications), and X-Ray tracing.
 *
 * @example
 * const machine = new JobStateMachine(this, 'Jobs', { functions });
 * machine.stateMachine.metricFailed();
 */
export class JobStateMachine extends Construct {
  /** The state machine. */
  readonly stateMachine: StateMachine;
  /** Where it logs errors. */
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: JobStateMachineProps) {
    super(scope, id);
    const asl = readFileSync(props.definitionFile ?? STATE_MACHINE_DEFINITION, 'utf8');
    const names = Object.keys(STATE_MACHINE_FUNCTIONS) as StateMachineFunction[];
    const substitutions = Object.fromEntries(
      names.map((name) => [substitutionKey(name), props.functions[name].functionArn]),
    );
    const placeholders = placeholdersOf(asl);
    const missing = placeholders.filter((p) => !(p in substitutions));
    const unused = Object.keys(substitutions).filter((k) => !placeholders.includes(k));
    if (missing.length > 0 || unused.length > 0) {
      throw new BindingError(
        this.node.path,
        `the ASL's placeholders and the task functions differ: no function for [${missing.join(', ')}], ` +
          `no placeholder for [${unused.join(', ')}]`,
      );
    }

    // Under /aws/vendedlogs/: Step Functions' log delivery then needs no resource policy per group.
    this.logGroup = new LogGroup(this, 'Logs', {
      logGroupName: `/aws/vendedlogs/states/${Stack.of(this).stackName}-${id}`,
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: props.logRemovalPolicy ?? RemovalPolicy.RETAIN,
    });
    this.stateMachine = new StateMachine(this, 'Machine', {
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromString(asl),
      definitionSubstitutions: substitutions,
      tracingEnabled: true,
      logs: { destination: this.logGroup, level: LogLevel.ERROR, includeExecutionData: false },
    });
    this.stateMachine.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['lambda:InvokeFunction'],
        resources: names.map((name) => props.functions[name].functionArn),
      }),
    );

    const role = this.stateMachine.role;
    Validations.of(this.stateMachine).acknowledge({
      id: 'AwsSolutions-SF1',
      reason:
        'Logs ERROR only, without execution data: inputs, outputs and task results carry evidence read ' +
        "from customers' applications. The job ledger records every step; the history is in Step Functions.",
    });
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'CDK-generated statements for X-Ray (PutTraceSegments, PutTelemetryRecords, GetSampling*) and for ' +
        'CloudWatch Logs delivery (logs:*LogDelivery*, DescribeLogGroups, *ResourcePolic*), which support ' +
        'no resource-level permissions.',
    });
  }
}
