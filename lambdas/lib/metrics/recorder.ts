import { appendFileSync } from 'node:fs';
import { Metrics } from '@aws-lambda-powertools/metrics';
import {
  boundedDimensions,
  type DimensionsOf,
  METRICS,
  METRICS_NAMESPACE,
  METRICS_SERVICE,
  type MetricName,
} from './names.ts';

/**
 * Business metrics in CloudWatch's embedded metric format (EMF), serialized by Powertools for
 * AWS Lambda's Metrics: one JSON line per set of dimensions, which CloudWatch Logs turns into
 * metrics with no API call. Each metric is published with its own dimensions and rolled up to
 * `service` alone (the series the alarms watch).
 */
export interface MetricsRecorder {
  /**
   * Records one value. Dimension values outside their list become `other` (see `names.ts`), so a
   * series count stays bounded whatever the caller passes.
   */
  add<N extends MetricName>(name: N, value: number, dimensions: DimensionsOf<N>): void;
  /** Publishes what was recorded since the last flush (the handlers flush at the end of each invocation). */
  flush(): void;
}

export interface MetricsRecorderOptions {
  /** Where each EMF line goes (default: stdout, where Lambda's log capture picks it up). */
  sink?: (line: string) => void;
  /** Publish at once on every `add` instead of at `flush` (long-lived local processes). */
  immediate?: boolean;
}

/**
 * Powertools publishes a document by itself (to stdout) when a metric reaches 100 values; this
 * recorder publishes before that, so every line goes to its sink.
 */
const MAX_VALUES = 99;

interface Group {
  dimensions: Record<string, string>;
  values: Map<MetricName, number[]>;
}

/**
 * A recorder over Powertools' Metrics (namespace `Belay`, service `belay`).
 *
 * @example
 * const metrics = createMetricsRecorder();
 * metrics.add('JobsFailed', 1, { Playbook: 'checkout@1', Reason: 'queue-timeout' });
 * metrics.flush(); // {"_aws":{...,"Dimensions":[["service","Playbook","Reason"],["service"]]},"JobsFailed":1,...}
 */
export function createMetricsRecorder(options: MetricsRecorderOptions = {}): MetricsRecorder {
  const sink = options.sink ?? ((line: string) => process.stdout.write(`${line}\n`));
  const emf = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: METRICS_SERVICE });
  const groups = new Map<string, Group>();
  // Powertools' own switch, read as its Metrics reads it.
  const disabled = ['true', '1'].includes(process.env.POWERTOOLS_METRICS_DISABLED?.toLowerCase() ?? '');

  const publish = (group: Group): void => {
    if (group.values.size === 0) return;
    try {
      for (const [name, value] of Object.entries(group.dimensions)) emf.addDimension(name, value);
      // The roll-up: the same values under `service` alone.
      emf.addDimensions({});
      for (const [name, values] of group.values) {
        for (const v of values) emf.addMetric(name, METRICS[name].unit, v);
      }
      if (!disabled) sink(JSON.stringify(emf.serializeMetrics()));
    } finally {
      emf.clearMetrics();
      emf.clearDimensions();
      group.values.clear();
    }
  };

  return {
    add(name, value, dimensions) {
      if (!Number.isFinite(value)) return;
      const bounded = boundedDimensions(name, dimensions);
      const key = JSON.stringify(bounded);
      let group = groups.get(key);
      if (!group) {
        group = { dimensions: bounded, values: new Map() };
        groups.set(key, group);
      }
      const values = group.values.get(name) ?? [];
      values.push(value);
      group.values.set(name, values);
      if (options.immediate || values.length >= MAX_VALUES) publish(group);
    },
    flush() {
      for (const group of groups.values()) publish(group);
      groups.clear();
    },
  };
}

/** A recorder that records nothing (tests that do not look at metrics). */
export const noMetrics: MetricsRecorder = Object.freeze({
  add: () => undefined,
  flush: () => undefined,
});

let processRecorder: MetricsRecorder | undefined;

/**
 * The process's recorder. In Lambda, EMF lines go to stdout and are flushed at the end of each
 * invocation; with `BELAY_METRICS_FILE` set (the local stack: `<dataDir>/metrics.jsonl`) each
 * line is appended to that file as it is recorded, for the benchmark and for people to read.
 * `POWERTOOLS_METRICS_DISABLED=true` turns publishing off.
 */
export function processMetrics(env: NodeJS.ProcessEnv = process.env): MetricsRecorder {
  if (processRecorder) return processRecorder;
  const file = env.BELAY_METRICS_FILE?.trim();
  processRecorder = file
    ? createMetricsRecorder({ immediate: true, sink: (line) => appendFileSync(file, `${line}\n`) })
    : createMetricsRecorder();
  return processRecorder;
}
