/**
 * `npm run bench -- --sections scale`: the load simulation. N `checkout@1` jobs submitted
 * through the HTTP API over T tenants, all open at once (the scripted person approves only
 * after the last is in), run by the real state machine and handler cores on DynamoDB Local, the
 * browser scripted at the adapter (`world.ts`). Measures throughput, ledger writes and their
 * partitions, conditional-write conflicts, the local runner's own limits and the first bottleneck.
 */
import { cpus } from 'node:os';
import { percentile } from '../figures.ts';
import { loadAverage, type SectionResult } from '../report.ts';
import { type Baseline, type Sample, type Saturation, saturations } from './bottleneck.ts';
import {
  type ApiRefusals,
  closed,
  politely,
  setUpTenants,
  submit,
  submitAll,
  type Tenant,
} from './client.ts';
import { collectJobs, type JobResult, partitionWrites, readMetricsFile } from './collect.ts';
import type { ScaleOptions } from './options.ts';
import { startSampler } from './sampler.ts';
import { scaleFigures } from './section.ts';
import { type ScaleStack, startScaleStack } from './stack.ts';

export type { ScaleOptions } from './options.ts';

/** What the run measured, besides the report's figures (the JSON report's `samples.scale`). */
export interface ScaleSamples {
  jobs: JobResult[];
  samples: Sample[];
  baseline: Baseline;
  saturations: Saturation[];
  hotPartitions: { partition: string; writes: number; perSecond: number }[];
  writesByKind: Record<string, number>;
  conflictsByKind: Record<string, number>;
  totals: ScaleStack['probe']['totals'];
  invocations: ScaleStack['invocations'];
  metricsFile: {
    lines: number;
    jobsSucceeded: number;
    stepsCompleted: number;
    ledgerConflicts: Record<string, number>;
  };
  jobItemBytes: { median: number; max: number };
  durationSeconds: number;
}

export async function runScale(
  options: ScaleOptions,
): Promise<{ result: SectionResult; samples: ScaleSamples }> {
  const started = performance.now();
  const loadStart = loadAverage();
  const tenantsByJob = new Map<string, Tenant>();
  let approvals = 0;
  // The person answers once every job of the burst is in, so that all of them are open at once.
  let gate: Promise<void> = Promise.resolve();
  let openGate: () => void = () => undefined;
  const refusals: ApiRefusals = { rateLimited: 0, unavailable: 0, unanswered: 0 };
  const stack = await startScaleStack({
    dataDir: options.dataDir,
    stepMs: options.stepMs,
    openSessionMs: 20,
    waitMs: 200,
    sockets: options.sockets,
    // The person is told, and answers through the API after a while.
    onWaiting: (event) => {
      const tenant = tenantsByJob.get(event.jobId);
      if (!tenant || event.kind !== 'approval') return;
      void gate.then(() =>
        setTimeout(() => {
          void politely(stack, refusals, tenant.apiKey, 'POST', `/jobs/${event.jobId}/decisions`, {
            step: event.step,
            decision: 'approve',
          }).then((r) => {
            if (r.status < 300) approvals += 1;
            else options.log(`approval of ${event.jobId} answered ${r.status}`);
          });
        }, options.approveMs),
      );
    },
  });
  options.pids.add(stack.dynamodb.pid);
  const violations: string[] = [];
  try {
    const runId = Date.now().toString(36);
    const tenants = await setUpTenants(stack, options.tenants, runId);

    // Baseline: one job alone, for the latencies an unloaded DynamoDB Local answers with.
    const warm = tenants[0] as Tenant;
    tenantsByJob.set(`scale-${runId}-warm`, warm);
    const warmName = await submit(stack, refusals, warm, `scale-${runId}-warm`);
    stack.probe.takeWindow();
    await closed(stack, new Set([warmName]), Date.now() + 120_000);
    const alone = stack.probe.takeWindow().latencies;
    const baseline: Baseline = { dynamoP95Ms: percentile(alone, 0.95) };
    options.log(
      `scale: one job alone, DynamoDB p95 ${baseline.dynamoP95Ms.toFixed(1)} ms over ${alone.length} calls`,
    );

    const totalsBefore = { ...stack.probe.totals };
    const writesBefore = new Map(stack.probe.writesByPartition);
    const sampler = startSampler(stack);
    const t0 = performance.now();
    gate = new Promise<void>((resolve) => {
      openGate = resolve;
    });
    options.log(`scale: submitting ${options.jobs} jobs over ${options.tenants} tenant(s)`);
    const { names, jobIds, refused } = await submitAll(
      stack,
      refusals,
      tenants,
      options.jobs,
      (i) => `scale-${runId}-${i}`,
      (jobId, tenant) => tenantsByJob.set(jobId, tenant),
    );
    openGate();
    if (refused.length > 0)
      violations.push(`${refused.length} submissions failed, e.g. ${String(refused[0])}`);
    const running = (): number =>
      stack.sfn.listExecutions({ statusFilter: 'RUNNING' }).filter((e) => names.has(e.name)).length;
    const openAtOnce = running();
    const submittedSeconds = (performance.now() - t0) / 1000;
    options.log(
      `scale: ${options.jobs} jobs submitted in ${submittedSeconds.toFixed(1)} s; waiting for them`,
    );
    const progress = setInterval(() => {
      options.log(
        `scale: ${options.jobs - running()}/${options.jobs} done, ${stack.invocations.inFlight} invocations in flight`,
      );
    }, 15_000);
    const stillRunning = await closed(stack, names, Date.now() + options.timeoutMs);
    clearInterval(progress);
    const { peakRss, peakExecutions } = sampler.stop();
    const runSeconds = (performance.now() - t0) / 1000;
    if (stillRunning.length > 0) {
      violations.push(
        `${stillRunning.length} of ${options.jobs} jobs had not finished after ${options.timeoutMs / 1000} s`,
      );
    }

    const { jobs, itemBytes } = await collectJobs(stack, jobIds, (id) => tenantsByJob.get(id) as Tenant);
    const succeeded = jobs.filter((j) => j.status === 'SUCCEEDED').length;
    if (succeeded !== options.jobs) violations.push(`${options.jobs - succeeded} jobs did not succeed`);
    const duplicated = [...stack.world.orders.values()].filter((n) => n > 1).length;
    if (duplicated > 0) violations.push(`${duplicated} orders placed more than once`);
    const partitions = partitionWrites(stack.probe.writesByPartition, writesBefore, runSeconds);
    const totals = stack.probe.totals;
    // The metrics file, as the bench reads it, tells the ledger's story (the warm-up job is in it too).
    const metric = readMetricsFile(stack.metricsFile);
    if (metric.jobsSucceeded !== succeeded + 1) {
      violations.push(
        `the metrics file counts ${metric.jobsSucceeded} verified completions, the ledger ${succeeded + 1}`,
      );
    }
    const found = saturations(sampler.samples, baseline, { cores: cpus().length });
    const { figures, notes } = scaleFigures({
      options,
      stack,
      jobs,
      itemBytes,
      samples: sampler.samples,
      baseline,
      found,
      partitions,
      metric,
      refusals,
      itemWrites: totals.itemWrites - totalsBefore.itemWrites,
      jobItemWrites: totals.jobItemWrites - totalsBefore.jobItemWrites,
      checks: totals.conditionChecks - totalsBefore.conditionChecks,
      submittedSeconds,
      runSeconds,
      openAtOnce,
      peakExecutions,
      peakRss,
      approvals,
      loadStart,
    });
    return {
      result: {
        section: 'scale',
        title: `Load simulation: ${options.jobs} checkout@1 jobs at once, browser scripted at the adapter`,
        loadAverage: { start: loadStart, end: loadAverage() },
        figures,
        notes,
        violations,
        durationSeconds: (performance.now() - started) / 1000,
      },
      samples: {
        jobs,
        samples: sampler.samples,
        baseline,
        saturations: found,
        hotPartitions: partitions.hot,
        writesByKind: partitions.byKind,
        conflictsByKind: Object.fromEntries(stack.probe.conflictsByPartition),
        totals,
        invocations: stack.invocations,
        metricsFile: metric,
        jobItemBytes: { median: percentile(itemBytes, 0.5), max: Math.max(0, ...itemBytes) },
        durationSeconds: runSeconds,
      },
    };
  } finally {
    await stack.stop();
  }
}
