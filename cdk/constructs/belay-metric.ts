/**
 * CloudWatch metrics of Belay's own namespace, as the code publishes them
 * (`lambdas/lib/metrics/names.ts`): the dashboard and the alarms read no other names.
 */
import type { Duration } from 'aws-cdk-lib';
import { MathExpression, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import {
  type DimensionName,
  type DimensionsOf,
  METRICS,
  METRICS_NAMESPACE,
  METRICS_SERVICE,
  type MetricName,
  metricDimensions,
} from '../../lambdas/lib/metrics/names.ts';

/** How a metric is read: its statistic, period and label. */
export interface ReadAs {
  readonly statistic: string;
  readonly period: Duration;
  readonly label?: string;
}

/**
 * One series of a Belay metric: with its own dimensions, or (no `dimensions`) the roll-up to
 * `service` alone that every metric is also published under.
 *
 * @example
 * belayMetric('JobsFailed', { statistic: 'Sum', period: Duration.minutes(5) }); // every playbook and reason
 * belayMetric('StuckJobs', { statistic: 'Maximum', period }, { Status: 'RUNNING' });
 */
export function belayMetric<N extends MetricName>(
  name: N,
  read: ReadAs,
  dimensions?: DimensionsOf<N>,
): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: dimensions ? metricDimensions(name, dimensions) : { service: METRICS_SERVICE },
    statistic: read.statistic,
    period: read.period,
    ...(read.label ? { label: read.label } : {}),
  });
}

/**
 * Every series of a metric split by its dimensions (a CloudWatch SEARCH expression): one line per
 * value that was published (a failure reason, a wait kind...). For dashboards; alarms cannot use it.
 */
export function belaySearch(name: MetricName, read: ReadAs): MathExpression {
  const dimensions = ['service', ...(METRICS[name].dimensions as readonly DimensionName[])];
  return new MathExpression({
    expression: `SEARCH('{${METRICS_NAMESPACE},${dimensions.join(',')}} MetricName="${name}"', '${read.statistic}', ${read.period.toSeconds()})`,
    usingMetrics: {},
    period: read.period,
    ...(read.label ? { label: read.label } : {}),
  });
}
