import { describe, expect, it } from 'vitest';
import {
  DIMENSIONS,
  FAILURE_REASONS,
  METRICS,
  METRICS_NAMESPACE,
  metricDimensions,
} from '../../../lambdas/lib/metrics/names.ts';
import { countWebhookFailures } from '../../../lambdas/lib/metrics/notifier-metrics.ts';
import { createMetricsRecorder } from '../../../lambdas/lib/metrics/recorder.ts';
import { countRecovery } from '../../../lambdas/lib/metrics/recovery-metrics.ts';
import { describeFailure } from '../../../lambdas/record-failure/record-failure.ts';

interface Emf {
  _aws: {
    Timestamp: number;
    CloudWatchMetrics: {
      Namespace: string;
      Dimensions: string[][];
      Metrics: { Name: string; Unit: string }[];
    }[];
  };
  [key: string]: unknown;
}

function recorder() {
  const lines: string[] = [];
  const metrics = createMetricsRecorder({ sink: (line) => lines.push(line) });
  return { metrics, lines, docs: () => lines.map((l) => JSON.parse(l) as Emf) };
}

describe('Function: createMetricsRecorder', () => {
  it("writes a line in embedded metric format with the metric's own dimensions and the service roll-up", () => {
    const { metrics, lines, docs } = recorder();
    metrics.add('JobsFailed', 1, { Playbook: 'checkout@1', Reason: 'queue-timeout' });
    metrics.add('JobsFailed', 1, { Playbook: 'checkout@1', Reason: 'queue-timeout' });
    expect(lines).toHaveLength(0);
    metrics.flush();
    expect(lines).toHaveLength(1);
    const [doc] = docs();
    const directive = doc?._aws.CloudWatchMetrics[0];
    expect(directive).toEqual({
      Namespace: METRICS_NAMESPACE,
      Dimensions: [['service', 'Playbook', 'Reason'], ['service']],
      Metrics: [{ Name: 'JobsFailed', Unit: 'Count' }],
    });
    expect(typeof doc?._aws.Timestamp).toBe('number');
    expect(doc).toMatchObject({
      service: 'belay',
      Playbook: 'checkout@1',
      Reason: 'queue-timeout',
      JobsFailed: [1, 1],
    });
    for (const set of directive?.Dimensions ?? []) {
      expect(set).not.toContain('jobId');
      expect(set).not.toContain('tenantId');
    }
    metrics.flush();
    expect(lines).toHaveLength(1);
  });

  it('keeps dimensions bounded: a value outside its list is published as other', () => {
    const { metrics, docs } = recorder();
    metrics.add('JobsFailed', 1, { Playbook: 'checkout@1', Reason: 'job-7f3a went wrong at 12:00' });
    metrics.add('HumanWaitsRequested', 1, { Kind: 'telepathy' });
    metrics.add('ReSignIns', 1, { Application: 'shop.example.com/with spaces and a very long name' });
    metrics.flush();
    const values = docs().map((d) => ({ Reason: d.Reason, Kind: d.Kind, Application: d.Application }));
    expect(values).toContainEqual({ Reason: 'other', Kind: undefined, Application: undefined });
    expect(values).toContainEqual({ Reason: undefined, Kind: 'other', Application: undefined });
    expect(values).toContainEqual({ Reason: undefined, Kind: undefined, Application: 'other' });
  });

  it('takes only the dimensions a metric declares (a job id is not one of them)', () => {
    const { metrics, docs } = recorder();
    // @ts-expect-error JobsSucceeded has no JobId dimension
    metrics.add('JobsSucceeded', 1, { Playbook: 'checkout@1', JobId: 'job-1' });
    metrics.flush();
    const [doc] = docs();
    expect(doc?._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([['service', 'Playbook'], ['service']]);
    expect(doc).not.toHaveProperty('JobId');
  });

  it('writes one line per set of dimensions, and publishes at once in immediate mode', () => {
    const lines: string[] = [];
    const metrics = createMetricsRecorder({ sink: (l) => lines.push(l), immediate: true });
    metrics.add('StepsCompleted', 1, { Playbook: 'checkout@1' });
    expect(lines).toHaveLength(1);
    metrics.add('StepsCompleted', 1, { Playbook: 'crm-billing-sync@1' });
    metrics.add('JobsParked', 1, {});
    expect(lines).toHaveLength(3);
    const parked = JSON.parse(lines[2] as string) as Emf;
    expect(parked._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([['service']]);
  });

  it('publishes before a metric holds more values than one EMF document may', () => {
    const { metrics, lines } = recorder();
    for (let i = 0; i < 250; i++) metrics.add('StepDuration', i, { Playbook: 'checkout@1' });
    expect(lines).toHaveLength(2);
    metrics.flush();
    expect(lines).toHaveLength(3);
    const counts = lines.map((l) => ((JSON.parse(l) as Emf).StepDuration as number[]).length);
    expect(counts).toEqual([99, 99, 52]);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(250);
  });
});

describe('Metric names', () => {
  it('every dimension a metric names is declared, and every closed one has values', () => {
    for (const [name, spec] of Object.entries(METRICS)) {
      for (const d of spec.dimensions) expect(DIMENSIONS, `${name}.${d}`).toHaveProperty(d);
    }
    for (const [name, spec] of Object.entries(DIMENSIONS)) {
      if (!spec.open) expect(spec.values.length, name).toBeGreaterThan(0);
    }
  });

  it.each([
    'AccountRevokedError',
    'RetryBudgetExhaustedError',
    'OutcomeNotVerifiedError',
    'DeadlineExceededError',
    'QueueTimeoutError',
    'JobConfigurationError',
    'UnknownPlaybookError',
    'States.Timeout',
    'Belay.Rejected',
    'SomethingElse',
  ])('the reason RecordFailure records for %s is a Reason value', (error) => {
    const { reason } = describeFailure({ tenantId: 't', jobId: 'j', state: { error: { Error: error } } });
    expect(FAILURE_REASONS).toContain(reason);
  });

  it('gives the dashboard the dimensions the code publishes', () => {
    expect(metricDimensions('JobsFailed', { Playbook: 'checkout@1', Reason: 'nonsense' })).toEqual({
      service: 'belay',
      Playbook: 'checkout@1',
      Reason: 'other',
    });
  });
});

describe('Function: countWebhookFailures', () => {
  it("counts the notifier's failed deliveries on the webhook channel, and nothing when all were delivered", () => {
    const { metrics, docs } = recorder();
    countWebhookFailures(metrics, { failed: 0 });
    countWebhookFailures(metrics, undefined);
    metrics.flush();
    expect(docs()).toHaveLength(0);
    countWebhookFailures(metrics, { failed: 2 });
    metrics.flush();
    const [doc] = docs();
    expect(doc?.NotificationFailures).toBe(2);
    expect(doc?.Channel).toBe('webhook');
  });
});

describe('Function: countRecovery', () => {
  it('counts what the recovery function did with each job, and an invocation that threw as an error', () => {
    const { metrics, docs } = recorder();
    countRecovery(metrics, { action: 'restarted' }, undefined);
    countRecovery(
      metrics,
      { outcomes: [{ action: 'failed' }, { action: 'none' }, { action: 'restarted' }] },
      undefined,
    );
    countRecovery(metrics, undefined, new Error('boom'));
    metrics.flush();
    // EMF lists several values of one metric in one line.
    const byAction = (action: string): number =>
      [docs().find((d) => d.Action === action && 'RecoveryActions' in d)?.RecoveryActions]
        .flat()
        .reduce((sum: number, v) => sum + Number(v ?? 0), 0);
    expect(byAction('resumed')).toBe(2);
    expect(byAction('failed')).toBe(1);
    expect(byAction('skipped')).toBe(1);
    expect(docs().find((d) => 'RecoveryErrors' in d)?.RecoveryErrors).toBe(1);
  });
});
