/**
 * The load simulation's figures and notes, as the benchmark's report prints them.
 */
import { cpus } from 'node:os';
import { type Figure, percentile } from '../figures.ts';
import { type LoadAverage, loadAverage } from '../report.ts';
import type { Baseline, Sample, Saturation } from './bottleneck.ts';
import type { ApiRefusals } from './client.ts';
import { SUBMITTERS } from './client.ts';
import type { JobResult, MetricsFileSummary, PartitionWrites } from './collect.ts';
import { conflictFigures } from './conflicts.ts';
import type { ScaleOptions } from './options.ts';
import type { ScaleStack } from './stack.ts';

/** What the run measured, for its figures. */
export interface Measured {
  options: ScaleOptions;
  stack: ScaleStack;
  jobs: JobResult[];
  itemBytes: number[];
  samples: Sample[];
  baseline: Baseline;
  found: Saturation[];
  partitions: PartitionWrites;
  metric: MetricsFileSummary;
  refusals: ApiRefusals;
  /** Item writes and condition checks of the run (the warm-up taken out), and of them the job items'. */
  itemWrites: number;
  jobItemWrites: number;
  checks: number;
  submittedSeconds: number;
  runSeconds: number;
  openAtOnce: number;
  peakExecutions: number;
  peakRss: number;
  approvals: number;
  loadStart: LoadAverage;
}

export function scaleFigures(m: Measured): { figures: Figure[]; notes: string[] } {
  const { options, stack, jobs, samples, baseline, found, metric, refusals } = m;
  const { itemWrites, jobItemWrites, checks, submittedSeconds, runSeconds, openAtOnce, peakExecutions } = m;
  const { peakRss, approvals, loadStart } = m;
  const sizes = m.itemBytes;
  const hotPartitions = m.partitions.hot;
  const writesByKind = m.partitions.byKind;
  const succeeded = jobs.filter((j) => j.status === 'SUCCEEDED').length;
  const lines = { length: metric.lines };
  const wall = jobs.map((j) => j.wallMs).filter(Number.isFinite);
  const sampleMax = (f: (s: Sample) => number): number => Math.max(0, ...samples.map(f));
  const throughputPerMin = (succeeded / runSeconds) * 60;
  const hottest = hotPartitions[0];

  const figures: Figure[] = [
    {
      label: 'jobs',
      value: options.jobs,
      unit: 'jobs',
      statistic: 'value',
      runs: 1,
      note: `${options.tenants} tenant(s), submitted in ${submittedSeconds.toFixed(1)} s (${SUBMITTERS} requests in flight); approvals answered once all were in`,
    },
    {
      label: 'jobs open at once (executions running)',
      value: Math.max(openAtOnce, peakExecutions),
      unit: 'jobs',
      statistic: 'max',
      runs: samples.length,
      note: `${openAtOnce} when the last was submitted`,
    },
    { label: 'jobs succeeded', value: succeeded, unit: 'jobs', statistic: 'value', runs: 1 },
    {
      label: 'throughput',
      value: throughputPerMin,
      unit: 'jobs/min',
      statistic: 'value',
      runs: 1,
      note: `all ${options.jobs} in ${runSeconds.toFixed(0)} s`,
    },
    {
      label: 'job time p50',
      value: percentile(wall, 0.5),
      unit: 'ms',
      statistic: 'p50',
      runs: wall.length,
    },
    {
      label: 'job time p95',
      value: percentile(wall, 0.95),
      unit: 'ms',
      statistic: 'p95',
      runs: wall.length,
    },
    {
      label: 'ledger item writes',
      value: itemWrites / runSeconds,
      unit: 'writes/s',
      statistic: 'value',
      runs: 1,
      note: `${itemWrites.toLocaleString('en-US')} items (${(itemWrites / options.jobs).toFixed(1)} per job, ${(jobItemWrites / options.jobs).toFixed(1)} of them the job item; and ${(checks / options.jobs).toFixed(1)} condition checks)`,
    },
    {
      label: 'DynamoDB calls, peak second',
      value: sampleMax((s) => s.dynamoCalls),
      unit: 'calls/s',
      statistic: 'max',
      runs: samples.length,
    },
    {
      label: 'hottest partition',
      value: hottest?.perSecond ?? null,
      unit: 'writes/s',
      statistic: 'value',
      runs: 1,
      note: hottest ? `${hottest.partition}: ${hottest.writes.toLocaleString('en-US')} writes` : 'none',
    },
    ...conflictFigures(stack.probe, metric.ledgerConflicts),
    {
      label: 'API requests retried (429, 503, no answer)',
      value: refusals.rateLimited + refusals.unavailable + refusals.unanswered,
      unit: 'requests',
      statistic: 'value',
      runs: 1,
      note: `${refusals.rateLimited} rate limited, ${refusals.unavailable} unavailable, ${refusals.unanswered} unanswered (the local API server's accept backlog); each retried`,
    },
    {
      label: 'queued asks (Start left the job QUEUED)',
      value: stack.invocations.startOutcomes.queued ?? 0,
      unit: 'asks',
      statistic: 'value',
      runs: 1,
      note: `${((stack.invocations.startOutcomes.queued ?? 0) / options.jobs).toFixed(1)} per job; the caps were never full`,
    },
    {
      label: 'runner: task invocations in flight, peak',
      value: stack.invocations.peak,
      unit: 'invocations',
      statistic: 'max',
      runs: samples.length,
      note: `${stack.invocations.total.toLocaleString('en-US')} invocations`,
    },
    {
      label: 'runner: history events per execution, max',
      value: Math.max(0, ...jobs.map((j) => j.historyEvents)),
      unit: 'events',
      statistic: 'max',
      runs: jobs.length,
      note: `median ${percentile(
        jobs.map((j) => j.historyEvents),
        0.5,
      )} (AWS allows 25,000)`,
    },
    {
      label: 'runner: event-loop delay p99, worst second',
      value: sampleMax((s) => s.eventLoopP99Ms),
      unit: 'ms',
      statistic: 'max',
      runs: samples.length,
    },
    {
      label: 'runner: this process CPU, peak second',
      value: sampleMax((s) => s.nodeCores),
      unit: 'cores',
      statistic: 'max',
      runs: samples.length,
      note: `RSS peak ${Math.round(peakRss / 2 ** 20)} MiB`,
    },
    {
      label: 'DynamoDB Local CPU, peak second',
      value: sampleMax((s) => s.dynamoCores),
      unit: 'cores',
      statistic: 'max',
      runs: samples.length,
      note: `p95 latency alone ${baseline.dynamoP95Ms.toFixed(1)} ms, worst second ${sampleMax((s) => s.dynamoP95Ms).toFixed(0)} ms`,
    },
    {
      label: 'job item size, median',
      value: percentile(sizes, 0.5),
      unit: 'bytes',
      statistic: 'p50',
      runs: sizes.length,
      note: `max ${Math.max(0, ...sizes)} bytes`,
    },
  ];
  const first = found[0];
  const firstOwn = found.find((f) => f.scope === 'belay');
  const notes = [
    first
      ? `first bottleneck: ${first.what}, from ${first.at} s (${first.evidence})`
      : 'first bottleneck: none of the thresholds held for 3 s in a row',
    ...(firstOwn && firstOwn !== first
      ? [
          `first bottleneck of Belay's own design (not of a local stand-in): ${firstOwn.what}, from ${firstOwn.at} s (${firstOwn.evidence})`,
        ]
      : []),
    ...found
      .slice(1)
      .filter((s) => s !== firstOwn)
      .map((s) => `then: ${s.what}, from ${s.at} s (${s.evidence})`),
    `hot partitions (writes over the run): ${hotPartitions
      .slice(0, 5)
      .map((h) => `${h.partition} ${h.writes}`)
      .join('; ')}`,
    `writes by kind of partition: ${Object.entries(writesByKind)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${v}`)
      .join('; ')}`,
    `metrics file ${lines.length} EMF lines: ${metric.jobsSucceeded} verified completions, ${metric.stepsCompleted} steps (the warm-up job included)`,
    `the machine's load average went from ${loadStart[0]} to ${loadAverage()[0]} on ${cpus().length} cores: other work shares them, and a thread that is runnable but not running shows as event-loop delay`,
    `the engine's DynamoDB and Step Functions clients had ${options.sockets} sockets each (the SDK's default is 50; in AWS each Lambda environment has its own client)`,
    `${approvals} approvals by the scripted person (after ${options.approveMs} ms each); scripted steps of ${options.stepMs} ms; the machine's pauses (capacity polls, retry backoff) shortened to 200 ms`,
  ];
  return { figures, notes };
}
