/**
 * Operating Belay: the watchdog's schedule, the alarms that say what to do, and the dashboard.
 */
import { Duration } from 'aws-cdk-lib';
import type { IAlarm, IAlarmAction } from 'aws-cdk-lib/aws-cloudwatch';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { OperationsAlarms, type OperationsAlarmsProps } from './operations-alarms.ts';
import { OperationsDashboard } from './operations-dashboard.ts';

/** Props of {@link Operations}. */
export interface OperationsProps extends Omit<OperationsAlarmsProps, 'action'> {
  /** The watchdog function (`lambdas/watchdog/`), run on a schedule. */
  readonly watchdog: IFunction;
  /** Where the alarms publish. */
  readonly alarmAction: IAlarmAction;
  /** Alarms defined elsewhere (the execution alarms), shown on the dashboard too. */
  readonly otherAlarms: readonly IAlarm[];
  readonly stateMachine: IStateMachine;
  /** Functions whose errors and throttles the dashboard graphs, by name. */
  readonly functions: Readonly<Record<string, IFunction>>;
  /**
   * How often the watchdog looks.
   * @default Duration.minutes(5)
   */
  readonly watchEvery?: Duration;
}

/**
 * The watchdog on an EventBridge schedule (its metrics feed the stuck-jobs and queue-age
 * alarms), {@link OperationsAlarms} and {@link OperationsDashboard}.
 *
 * @example
 * new Operations(this, 'Operations', { watchdog, alarmAction: new SnsAction(topic), otherAlarms, stateMachine, functions });
 */
export class Operations extends Construct {
  readonly alarms: OperationsAlarms;
  readonly dashboard: OperationsDashboard;
  readonly schedule: Rule;

  constructor(scope: Construct, id: string, props: OperationsProps) {
    super(scope, id);
    this.schedule = new Rule(this, 'WatchdogSchedule', {
      description:
        "Belay: the watchdog's look at every tenant's live jobs (stuck jobs, queues, waits, browsers)",
      schedule: Schedule.rate(props.watchEvery ?? Duration.minutes(5)),
      targets: [new LambdaFunction(props.watchdog, { retryAttempts: 0 })],
    });
    this.alarms = new OperationsAlarms(this, 'Alarms', {
      action: props.alarmAction,
      ...(props.failureRatePercent !== undefined ? { failureRatePercent: props.failureRatePercent } : {}),
      ...(props.minimumEndedJobs !== undefined ? { minimumEndedJobs: props.minimumEndedJobs } : {}),
      ...(props.queueAge !== undefined ? { queueAge: props.queueAge } : {}),
    });
    this.dashboard = new OperationsDashboard(this, 'Dashboard', {
      alarms: [...Object.values(this.alarms.alarms), ...props.otherAlarms],
      stateMachine: props.stateMachine,
      functions: props.functions,
    });
  }
}
