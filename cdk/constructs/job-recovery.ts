/**
 * Recovery of jobs whose execution died outside its handlers: an EventBridge rule on the job
 * state machine's execution status changes (FAILED, TIMED_OUT, ABORTED) and a scheduled sweep,
 * both invoking the recovery function (`lambdas/recover/`).
 */
import { Duration } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';

/** The statuses of an execution that ended without its job's handlers ending the job. */
export const DEAD_EXECUTION_STATUSES: readonly string[] = Object.freeze(['FAILED', 'TIMED_OUT', 'ABORTED']);

/** Props of {@link JobRecovery}. */
export interface JobRecoveryProps {
  /** The recovery function. */
  readonly handler: IFunction;
  /** The machine whose executions are watched. */
  readonly stateMachine: IStateMachine;
  /**
   * How often the sweep runs (it finds unfinished jobs with no running execution).
   * @default Duration.minutes(5)
   */
  readonly sweepEvery?: Duration;
}

/**
 * The two ways into the recovery function. Step Functions sends every status change of a
 * Standard execution to the account's default bus; the rule takes this machine's dead ones.
 * EventBridge retries a delivery the function's service refuses (throttling) for up to a day;
 * an event lost anyway is found by the sweep.
 */
export class JobRecovery extends Construct {
  /** The rule on the machine's dead executions. */
  readonly deadExecutions: Rule;
  /** The scheduled sweep. */
  readonly sweep: Rule;

  constructor(scope: Construct, id: string, props: JobRecoveryProps) {
    super(scope, id);
    this.deadExecutions = new Rule(this, 'DeadExecutions', {
      description:
        'Belay: a job execution ended FAILED, TIMED_OUT or ABORTED; the recovery function resumes or fails its job.',
      eventPattern: {
        source: ['aws.states'],
        detailType: ['Step Functions Execution Status Change'],
        detail: {
          status: [...DEAD_EXECUTION_STATUSES],
          stateMachineArn: [props.stateMachine.stateMachineArn],
        },
      },
      targets: [new LambdaFunction(props.handler, { retryAttempts: 8, maxEventAge: Duration.hours(24) })],
    });
    this.sweep = new Rule(this, 'Sweep', {
      description: 'Belay: the sweep for unfinished jobs whose execution is gone.',
      schedule: Schedule.rate(props.sweepEvery ?? Duration.minutes(5)),
      targets: [new LambdaFunction(props.handler, { retryAttempts: 2, maxEventAge: Duration.hours(1) })],
    });
  }
}
