/**
 * Alarms on the job state machine, published to an encrypted SNS topic that operators
 * subscribe to (email, chat, paging) outside the stack.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, type Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { runbookNote } from './operations-alarms.ts';

/** Props of {@link JobAlarms}. */
export interface JobAlarmsProps {
  /** The machine whose executions are watched. */
  readonly stateMachine: IStateMachine;
  /**
   * Removal policy of the topic's KMS key.
   * @default RemovalPolicy.RETAIN
   */
  readonly keyRemovalPolicy?: RemovalPolicy;
}

/**
 * One alarm per way an execution ends badly (failed, timed out, aborted) and for throttled
 * executions, each firing on any occurrence in five minutes. A failed execution is already a
 * job that its RecordFailure catch-all could not handle, so one is worth a look.
 *
 * The topic is encrypted with a customer managed key (rotated): CloudWatch cannot publish to a
 * topic encrypted with the AWS managed `aws/sns` key, so the key's policy lets CloudWatch use it.
 */
export class JobAlarms extends Construct {
  /** Where the alarms publish (and recover). */
  readonly topic: Topic;
  /** The alarms, by metric. */
  readonly alarms: Readonly<Record<'failed' | 'timedOut' | 'aborted' | 'throttled', Alarm>>;

  constructor(scope: Construct, id: string, props: JobAlarmsProps) {
    super(scope, id);
    const key = new Key(this, 'TopicKey', {
      description: 'Encrypts the Belay alarm topic',
      enableKeyRotation: true,
      removalPolicy: props.keyRemovalPolicy ?? RemovalPolicy.RETAIN,
    });
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
      }),
    );
    this.topic = new Topic(this, 'Topic', {
      displayName: 'Belay job alarms',
      masterKey: key,
      enforceSSL: true,
    });
    const action = new SnsAction(this.topic);
    const machine = props.stateMachine;
    const watch = (name: string, metric: Metric, what: string): Alarm => {
      const alarm = new Alarm(this, name, {
        alarmDescription: `Belay: ${what} in the last 5 minutes. ${runbookNote('executions')}`,
        metric: metric.with({ period: Duration.minutes(5), statistic: 'Sum' }),
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
      return alarm;
    };
    this.alarms = {
      failed: watch('ExecutionsFailed', machine.metricFailed(), 'job executions failed'),
      timedOut: watch('ExecutionsTimedOut', machine.metricTimedOut(), 'job executions timed out'),
      aborted: watch('ExecutionsAborted', machine.metricAborted(), 'job executions were aborted'),
      throttled: watch('ExecutionThrottled', machine.metricThrottled(), 'state transitions were throttled'),
    };
  }
}
