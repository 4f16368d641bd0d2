/**
 * The alarms an on-call engineer acts on, each with a description that names its runbook
 * section in the docs (`docs/operate/runbooks.md`) (what it means and the first three things to look at). They publish to the
 * alarm topic of `JobAlarms` (alarm and OK), next to the execution alarms.
 */
import { Duration } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  type IAlarmAction,
  MathExpression,
  type Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import { LIVE_STATUSES } from '../../lambdas/lib/metrics/names.ts';
import { belayMetric } from './belay-metric.ts';

/** The runbook's sections, by alarm (headings `## <title>` of `docs/operate/runbooks.md`). */
export const RUNBOOK = Object.freeze({
  failureRate: 'Runbook: job failure rate',
  stuckJobs: 'Runbook: stuck jobs',
  queueAge: 'Runbook: queue age',
  recoveryErrors: 'Runbook: recovery-function errors',
  notificationFailures: 'Runbook: notification failures',
  executions: 'Runbook: executions failed, timed out, aborted or throttled',
});

export type RunbookSection = keyof typeof RUNBOOK;

/** The runbook's page in the repository (the docs site serves it at /operate/runbooks). */
export const RUNBOOK_PAGE = 'docs/operate/runbooks.md';

/** A runbook section as a link into the runbook's page (the heading anchors of GitHub and the docs site). */
export function runbookLink(section: RunbookSection): string {
  const anchor = RUNBOOK[section]
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replace(/ /g, '-');
  return `${RUNBOOK_PAGE}#${anchor}`;
}

/** What an alarm's description ends with: the runbook section to open. */
export function runbookNote(section: RunbookSection): string {
  return `See ${RUNBOOK_PAGE}, section "${RUNBOOK[section]}" (${runbookLink(section).slice(RUNBOOK_PAGE.length)}).`;
}

/** Props of {@link OperationsAlarms}. */
export interface OperationsAlarmsProps {
  /** Where the alarms publish (and recover). */
  readonly action: IAlarmAction;
  /**
   * Failed jobs, in percent of jobs that ended (failed + succeeded) in 15 minutes, above which
   * the failure-rate alarm fires (with at least `minimumEndedJobs` ended).
   * @default 10
   */
  readonly failureRatePercent?: number;
  /**
   * Ended jobs in 15 minutes below which the failure rate is not judged (two failures of three
   * jobs are not a trend).
   * @default 5
   */
  readonly minimumEndedJobs?: number;
  /**
   * How long the longest-queued job may wait for a browser before the queue-age alarm fires.
   * @default Duration.minutes(15)
   */
  readonly queueAge?: Duration;
}

const FIFTEEN_MINUTES = Duration.minutes(15);
const TEN_MINUTES = Duration.minutes(10);
const FIVE_MINUTES = Duration.minutes(5);

/**
 * Five alarms over Belay's own metrics (`lambdas/lib/metrics/names.ts`):
 * - **failure rate**: failed / ended jobs over 15 minutes (with a minimum volume);
 * - **stuck jobs**: any non-terminal job without progress for longer than its status allows,
 *   as the watchdog counts them every five minutes; missing data is breaching (the watchdog
 *   itself stopped reporting);
 * - **queue age**: the longest-queued job has waited longer than `queueAge`;
 * - **recovery-function errors** and **notification failures**: any in five minutes.
 */
export class OperationsAlarms extends Construct {
  /** The alarms, by runbook section. */
  readonly alarms: Readonly<Record<Exclude<RunbookSection, 'executions'>, Alarm>>;

  constructor(scope: Construct, id: string, props: OperationsAlarmsProps) {
    super(scope, id);
    const rate = props.failureRatePercent ?? 10;
    const minimum = props.minimumEndedJobs ?? 5;
    const queueAge = props.queueAge ?? Duration.minutes(15);

    const alarm = (
      name: string,
      section: Exclude<RunbookSection, 'executions'>,
      what: string,
      options: {
        metric: Metric | MathExpression;
        threshold: number;
        comparison?: ComparisonOperator;
        missing?: TreatMissingData;
      },
    ): Alarm => {
      const created = new Alarm(this, name, {
        alarmDescription: `Belay: ${what}. ${runbookNote(section)}`,
        metric: options.metric,
        threshold: options.threshold,
        comparisonOperator: options.comparison ?? ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: options.missing ?? TreatMissingData.NOT_BREACHING,
      });
      created.addAlarmAction(props.action);
      created.addOkAction(props.action);
      return created;
    };

    const sum = { statistic: 'Sum', period: FIFTEEN_MINUTES };
    const failureRate = new MathExpression({
      expression: `IF((failed + succeeded) >= ${minimum}, 100 * failed / (failed + succeeded), 0)`,
      usingMetrics: {
        failed: belayMetric('JobsFailed', sum),
        succeeded: belayMetric('JobsSucceeded', sum),
      },
      period: FIFTEEN_MINUTES,
      label: 'failed jobs, % of jobs ended',
    });

    // One series per status; the watchdog publishes each once a run (Maximum: one run or two in a period).
    const stuckByStatus = Object.fromEntries(
      LIVE_STATUSES.map((status) => [
        status.toLowerCase(),
        belayMetric('StuckJobs', { statistic: 'Maximum', period: TEN_MINUTES }, { Status: status }),
      ]),
    );
    const stuck = new MathExpression({
      expression: Object.keys(stuckByStatus).join(' + '),
      usingMetrics: stuckByStatus,
      period: TEN_MINUTES,
      label: 'stuck jobs',
    });

    this.alarms = {
      failureRate: alarm(
        'JobFailureRate',
        'failureRate',
        `more than ${rate}% of jobs ended failed in 15 minutes`,
        {
          metric: failureRate,
          threshold: rate,
        },
      ),
      stuckJobs: alarm(
        'StuckJobs',
        'stuckJobs',
        'jobs made no progress for longer than their status allows (or the watchdog stopped reporting)',
        { metric: stuck, threshold: 0, missing: TreatMissingData.BREACHING },
      ),
      queueAge: alarm(
        'QueueAge',
        'queueAge',
        `a job has waited more than ${queueAge.toMinutes()} minutes for a browser`,
        {
          metric: belayMetric('OldestQueuedAge', { statistic: 'Maximum', period: TEN_MINUTES }),
          threshold: queueAge.toSeconds(),
        },
      ),
      recoveryErrors: alarm(
        'RecoveryErrors',
        'recoveryErrors',
        'the recovery function failed on a job whose execution died, in the last 5 minutes',
        {
          metric: belayMetric('RecoveryErrors', { statistic: 'Sum', period: FIVE_MINUTES }),
          threshold: 0,
        },
      ),
      notificationFailures: alarm(
        'NotificationFailures',
        'notificationFailures',
        'people could not be told that a job waits for them, in the last 5 minutes',
        {
          metric: belayMetric('NotificationFailures', { statistic: 'Sum', period: FIVE_MINUTES }),
          threshold: 0,
        },
      ),
    };
  }
}
