import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { configureApp } from '../../../cdk/belay-app.ts';
import { RUNBOOK, RUNBOOK_PAGE, runbookLink } from '../../../cdk/constructs/operations-alarms.ts';
import { REPO_ROOT } from '../../../cdk/paths.ts';
import { METRICS, METRICS_NAMESPACE } from '../../../lambdas/lib/metrics/names.ts';
import { cdkJsonContext, TestApps } from '../../support/cdk.ts';
import { logicalId } from '../../support/cdk-template.ts';

const apps = new TestApps();
afterAll(() => apps.cleanup());

const stack = configureApp(apps.app(cdkJsonContext()), {});
const template = Template.fromStack(stack);
const topic = { Ref: logicalId(stack, stack.alarms.topic) };
const alarmOf = (name: keyof typeof stack.operations.alarms.alarms) =>
  template.findResources('AWS::CloudWatch::Alarm')[logicalId(stack, stack.operations.alarms.alarms[name])]
    ?.Properties as Record<string, unknown>;

/** A metric of a math alarm, by id: its namespace, name, dimensions and statistic. */
function mathMetric(alarm: Record<string, unknown>, id: string): Record<string, unknown> | undefined {
  const metrics = alarm.Metrics as {
    Id: string;
    MetricStat?: { Metric: Record<string, unknown>; Stat: string; Period: number };
  }[];
  const stat = metrics.find((m) => m.Id === id)?.MetricStat;
  if (!stat) return undefined;
  // Dimensions in name order: CloudFormation keeps them in any order.
  const dimensions = [...((stat.Metric.Dimensions as { Name: string }[] | undefined) ?? [])].sort(byName);
  return { ...stat.Metric, Dimensions: dimensions, Stat: stat.Stat, Period: stat.Period };
}

/** Dimensions as CloudFormation writes them, in name order. */
const byName = (a: { Name: string }, b: { Name: string }): number => (a.Name < b.Name ? -1 : 1);
const dims = (d: Record<string, string>) =>
  Object.entries(d)
    .map(([Name, Value]) => ({ Name, Value }))
    .sort(byName);

/** The dashboard body as JSON (its tokens resolved to placeholders). */
function dashboardBody(): { widgets: { type: string; properties: Record<string, unknown> }[] } {
  const [dashboard] = Object.values(template.findResources('AWS::CloudWatch::Dashboard'));
  const body = dashboard?.Properties.DashboardBody as { 'Fn::Join': [string, unknown[]] };
  const text = body['Fn::Join'][1].map((part) => (typeof part === 'string' ? part : '"TOKEN"')).join('');
  return JSON.parse(text.replace(/""TOKEN""/g, '"TOKEN"')) as never;
}

describe('Construct: Operations (alarms, dashboard, watchdog schedule)', () => {
  it('every alarm names its runbook section, and the runbook page has that section', () => {
    const runbook = readFileSync(join(REPO_ROOT, RUNBOOK_PAGE), 'utf8');
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm'));
    expect(alarms).toHaveLength(9);
    for (const alarm of alarms) {
      const description = alarm.Properties.AlarmDescription as string;
      const section = Object.entries(RUNBOOK).find(([, title]) => description.includes(`"${title}"`));
      expect(section, description).toBeDefined();
      expect(description).toContain(
        runbookLink(section?.[0] as keyof typeof RUNBOOK).replace(RUNBOOK_PAGE, ''),
      );
      expect(alarm.Properties.AlarmActions).toEqual([topic]);
      expect(alarm.Properties.OKActions).toEqual([topic]);
    }
    for (const title of Object.values(RUNBOOK)) {
      expect(runbook, `runbook section "## ${title}"`).toMatch(
        new RegExp(`^## ${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'),
      );
    }
  });

  it('alarms on the failure rate: failed / ended over 15 minutes, above 10%, with at least 5 ended', () => {
    const alarm = alarmOf('failureRate');
    expect(alarm).toMatchObject({
      Threshold: 10,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
    });
    const metrics = alarm.Metrics as { Id: string; Expression?: string }[];
    const expression = metrics.find((m) => m.Expression)?.Expression;
    expect(expression).toBe('IF((failed + succeeded) >= 5, 100 * failed / (failed + succeeded), 0)');
    for (const [id, name] of [
      ['failed', 'JobsFailed'],
      ['succeeded', 'JobsSucceeded'],
    ]) {
      expect(mathMetric(alarm, id as string)).toEqual({
        Namespace: METRICS_NAMESPACE,
        MetricName: name,
        Dimensions: dims({ service: 'belay' }),
        Stat: 'Sum',
        Period: 900,
      });
    }
  });

  it('alarms on any stuck job of any live status, and when the watchdog stops reporting', () => {
    const alarm = alarmOf('stuckJobs');
    expect(alarm).toMatchObject({ Threshold: 0, TreatMissingData: 'breaching' });
    const metrics = alarm.Metrics as { Id: string; Expression?: string }[];
    expect(metrics.find((m) => m.Expression)?.Expression).toBe(
      'queued + running + waiting_approval + waiting_mfa + waiting_review + waiting_takeover',
    );
    expect(mathMetric(alarm, 'waiting_mfa')).toEqual({
      Namespace: 'Belay',
      MetricName: 'StuckJobs',
      Dimensions: dims({ Status: 'WAITING_MFA', service: 'belay' }),
      Stat: 'Maximum',
      Period: 600,
    });
  });

  it.each([
    ['queueAge', 'OldestQueuedAge', 'Maximum', 600, 900],
    ['recoveryErrors', 'RecoveryErrors', 'Sum', 300, 0],
    ['notificationFailures', 'NotificationFailures', 'Sum', 300, 0],
  ] as const)('alarms on %s: %s (%s over %i s) above %i', (name, metric, statistic, period, threshold) => {
    expect(METRICS).toHaveProperty(metric);
    expect(alarmOf(name)).toMatchObject({
      Namespace: 'Belay',
      MetricName: metric,
      Dimensions: dims({ service: 'belay' }),
      Statistic: statistic,
      Period: period,
      Threshold: threshold,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
      EvaluationPeriods: 1,
    });
  });

  it('runs the watchdog every five minutes, read-only', () => {
    const watchdog = logicalId(stack, stack.watchdog);
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(5 minutes)',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [watchdog, 'Arn'] } })],
    });
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      FunctionName: { 'Fn::GetAtt': [watchdog, 'Arn'] },
      Principal: 'events.amazonaws.com',
    });
    const vars = template.findResources('AWS::Lambda::Function')[watchdog]?.Properties.Environment.Variables;
    expect(vars).toMatchObject({
      TABLE_NAME: { Ref: logicalId(stack, stack.ledger) },
      BELAY_BROWSER_ACCESS: 'none',
    });
  });

  it('has a dashboard with every view the on-call engineer needs', () => {
    const { widgets } = dashboardBody();
    const titles = widgets.map((w) => w.properties.title).filter(Boolean);
    expect(titles).toEqual([
      'Alarms',
      'Jobs by outcome',
      'Failures by reason',
      'Cost per verified completion (USD, rates in lambdas/lib/cost/rates.ts)',
      'Job time: submission to verified completion',
      'Step time: the RunStep that verified it',
      'Queue wait: submission to first browser',
      'Retries and re-sign-ins',
      'Ledger write conflicts by operation',
      'Browser time',
      'Human waits by kind',
      'Human wait time by kind (requested to answered)',
      'Oldest open wait by kind (s)',
      'Queue depth and age',
      'Browser concurrency against the plan caps',
      'Stuck jobs by status (watchdog)',
      'Recovery-function actions',
      'Notification failures by channel',
      'Executions',
      'Lambda errors by function',
      'Lambda throttles and concurrency',
      'Agent steps: model calls and actions served by the action cache',
    ]);
    const text = JSON.stringify(widgets);
    // Every metric the code publishes (but the task outcomes, a breakdown for Logs Insights) is on
    // the dashboard.
    const shown = Object.keys(METRICS).filter(
      (name) => text.includes(`"${name}"`) || text.includes(`MetricName=\\"${name}\\"`),
    );
    expect(
      Object.keys(METRICS)
        .filter((name) => !shown.includes(name))
        .sort(),
    ).toEqual(['LiveJobs', 'TaskOutcomes']);
    // p50 and p95 of job and step time.
    expect(text).toMatch(/"JobDuration".*"stat":"p50"/);
    expect(text).toMatch(/"StepDuration".*"stat":"p95"/);
    // Failures broken down by reason with a SEARCH over the Reason dimension.
    expect(text).toContain(
      `SEARCH('{Belay,service,Playbook,Reason} MetricName=\\"JobsFailed\\"', 'Sum', 300)`,
    );
    // Cost per verified completion: dollars recorded / verified completions.
    expect(text).toContain('IF(succeeded > 0, cost / succeeded, 0)');
    // The alarm widget lists all nine.
    const alarmWidget = widgets.find((w) => w.properties.title === 'Alarms');
    expect(alarmWidget?.properties.alarms).toHaveLength(9);
  });
});
