/**
 * `npm run bench -- --sections scale`: the load simulation. N `checkout@1` jobs submitted at once
 * through the HTTP API, over T tenants, run by the real state machine and handler cores on
 * DynamoDB Local, the browser scripted at the adapter (`world.ts`), a scripted person approving
 * each `place-order` through the API. Measures throughput, ledger writes and their partitions,
 * conditional-write conflicts, the local runner's own limits and the first bottleneck.
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { executionName } from '../../../lambdas/lib/engine/executions.ts';
import { jobKey } from '../../../lambdas/lib/ledger/keys.ts';
import type { Figure } from '../figures.ts';
import { percentile } from '../figures.ts';
import { loadAverage, type SectionResult } from '../report.ts';
import { type Baseline, type Sample, type Saturation, saturations } from './bottleneck.ts';
import { partitionKind } from './probe.ts';
import { type ScaleStack, startScaleStack } from './stack.ts';

export interface ScaleOptions {
  jobs: number;
  tenants: number;
  /** Scripted work of one step, ms. */
  stepMs: number;
  /** How long the scripted person takes to approve, ms. */
  approveMs: number;
  /** The whole run is given up after this long. */
  timeoutMs: number;
  /** Sockets of the engine's DynamoDB and Step Functions clients (the SDK's default: 50). */
  sockets: number;
  dataDir: string;
  log(line: string): void;
  /** PIDs the run started (DynamoDB Local), checked gone at the end. */
  pids: Set<number>;
}

/** What the run measured, besides the report's figures (the JSON report's `samples.scale`). */
export interface ScaleSamples {
  jobs: { jobId: string; tenantId: string; status: string; wallMs: number; historyEvents: number }[];
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

const CLK_TCK = 100;
/** Submissions in flight at once. */
const SUBMITTERS = 100;

/** CPU seconds a process has used (user + system), from /proc/<pid>/stat. */
function cpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return 0;
  }
}

const INPUTS = JSON.parse(
  readFileSync(new URL('../../../demo/jobs/checkout.json', import.meta.url), 'utf8'),
).inputs;

interface Tenant {
  tenantId: string;
  apiKey: string;
  accountId: string;
}

async function call(
  stack: ScaleStack,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${stack.api.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
}

async function setUpTenants(stack: ScaleStack, count: number, runId: string): Promise<Tenant[]> {
  const tenants: Tenant[] = [];
  for (let i = 0; i < count; i++) {
    const tenantId = `scale-${runId}-t${i}`;
    const created = await stack.deps.keys.create(tenantId, ['submitter', 'approver'], {
      label: 'scale',
      plan: 'enterprise',
    });
    const accountId = `acct_scale_${i}`;
    await stack.deps.accounts.create({ tenantId, application: 'shop', label: 'Shop', accountId });
    tenants.push({ tenantId, apiKey: created.apiKey, accountId });
  }
  return tenants;
}

/** What the API answered the driver, besides success: refusals it retried, as a client does. */
interface ApiRefusals {
  rateLimited: number;
  unavailable: number;
  /** Requests that got no answer (the connection refused or timed out). */
  unanswered: number;
}

/**
 * A request as a well-behaved client makes it: a 429 or 503 is retried after its `Retry-After`,
 * a request that got no answer after a second or two (every request here is idempotent: a job
 * id, a decision on a wait), at most 20 times; anything else is the answer.
 */
async function politely(
  stack: ScaleStack,
  refusals: ApiRefusals,
  ...args: Parameters<typeof call> extends [ScaleStack, ...infer R] ? R : never
): Promise<{ status: number; body: Record<string, unknown> }> {
  for (let attempt = 0; ; attempt++) {
    let res: { status: number; body: Record<string, unknown> };
    try {
      res = await call(stack, ...args);
    } catch (err) {
      if (attempt >= 20) throw err;
      refusals.unanswered += 1;
      await sleep(1000 + 1000 * Math.random());
      continue;
    }
    if ((res.status !== 429 && res.status !== 503) || attempt >= 20) return res;
    if (res.status === 429) refusals.rateLimited += 1;
    else refusals.unavailable += 1;
    const details = (res.body.error as { details?: { retryAfterSeconds?: number } } | undefined)?.details;
    await sleep(1000 * (details?.retryAfterSeconds ?? 1) * (0.5 + Math.random()));
  }
}

/** Submits one job; its execution's name, for waiting on it. */
async function submit(
  stack: ScaleStack,
  refusals: ApiRefusals,
  tenant: Tenant,
  jobId: string,
): Promise<string> {
  const res = await politely(stack, refusals, tenant.apiKey, 'POST', '/jobs', {
    jobId,
    playbook: 'checkout@1',
    inputs: INPUTS,
    accounts: { shop: tenant.accountId },
  });
  if (res.status !== 202 && res.status !== 200) {
    throw new Error(`submitting ${jobId} answered ${res.status}: ${JSON.stringify(res.body)}`);
  }
  return executionName(tenant.tenantId, jobId, 0);
}

/** Waits until every named execution is closed (or the deadline passes); the names still running. */
async function closed(stack: ScaleStack, names: Set<string>, deadline: number): Promise<string[]> {
  for (;;) {
    const running = stack.sfn
      .listExecutions({ statusFilter: 'RUNNING' })
      .map((e) => e.name)
      .filter((n) => names.has(n));
    if (running.length === 0 || Date.now() > deadline) return running;
    await sleep(500);
  }
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
    const histogram = monitorEventLoopDelay({ resolution: 10 });
    histogram.enable();
    const samples: Sample[] = [];
    let last = {
      node: process.cpuUsage(),
      java: cpuSecondsOf(stack.dynamodb.pid),
      queued: stack.invocations.startOutcomes.queued ?? 0,
      ready: stack.invocations.startOutcomes.ready ?? 0,
      conflicts: stack.probe.conflictsByPartition.get('T#<tenant>#CAP') ?? 0,
      at: performance.now(),
    };
    let peakRss = 0;
    let peakExecutions = 0;
    const t0 = performance.now();
    const sampler = setInterval(() => {
      const now = performance.now();
      const seconds = (now - last.at) / 1000;
      const node = process.cpuUsage();
      const java = cpuSecondsOf(stack.dynamodb.pid);
      const window = stack.probe.takeWindow();
      const queued = stack.invocations.startOutcomes.queued ?? 0;
      const ready = stack.invocations.startOutcomes.ready ?? 0;
      const conflicts = stack.probe.conflictsByPartition.get('T#<tenant>#CAP') ?? 0;
      samples.push({
        t: Math.round((now - t0) / 100) / 10,
        nodeCores: (node.user - last.node.user + node.system - last.node.system) / 1e6 / seconds,
        dynamoCores: (java - last.java) / seconds,
        dynamoCalls: Math.round(window.latencies.length / seconds),
        dynamoP95Ms: window.latencies.length ? percentile(window.latencies, 0.95) : 0,
        eventLoopP99Ms: histogram.percentile(99) / 1e6,
        queuedAsks: queued - last.queued,
        starts: ready - last.ready,
        leaseConflicts: conflicts - last.conflicts,
      });
      histogram.reset();
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
      peakExecutions = Math.max(peakExecutions, stack.sfn.listExecutions({ statusFilter: 'RUNNING' }).length);
      last = { node, java, queued, ready, conflicts, at: now };
    }, 1000);

    gate = new Promise<void>((resolve) => {
      openGate = resolve;
    });
    // Every job at once, spread over the tenants.
    const names = new Set<string>();
    const jobIds: string[] = [];
    options.log(`scale: submitting ${options.jobs} jobs over ${options.tenants} tenant(s)`);
    // A client with SUBMITTERS requests in flight: a thousand connections at once overflow the
    // local API server's accept backlog (and are no client's way to submit).
    const refused: unknown[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(SUBMITTERS, options.jobs) }, async () => {
        for (let i = next++; i < options.jobs; i = next++) {
          const tenant = tenants[i % tenants.length] as Tenant;
          const jobId = `scale-${runId}-${i}`;
          tenantsByJob.set(jobId, tenant);
          jobIds.push(jobId);
          try {
            names.add(await submit(stack, refusals, tenant, jobId));
          } catch (err) {
            refused.push(err);
          }
        }
      }),
    );
    openGate();
    if (refused.length > 0)
      violations.push(`${refused.length} submissions failed, e.g. ${String(refused[0])}`);
    const openAtOnce = stack.sfn
      .listExecutions({ statusFilter: 'RUNNING' })
      .filter((e) => names.has(e.name)).length;
    const submittedSeconds = (performance.now() - t0) / 1000;
    options.log(
      `scale: ${options.jobs} jobs submitted in ${submittedSeconds.toFixed(1)} s; waiting for them`,
    );
    const progress = setInterval(() => {
      const running = stack.sfn
        .listExecutions({ statusFilter: 'RUNNING' })
        .filter((e) => names.has(e.name)).length;
      options.log(
        `scale: ${options.jobs - running}/${options.jobs} done, ${stack.invocations.inFlight} invocations in flight`,
      );
    }, 15_000);
    const stillRunning = await closed(stack, names, Date.now() + options.timeoutMs);
    clearInterval(progress);
    clearInterval(sampler);
    histogram.disable();
    const runSeconds = (performance.now() - t0) / 1000;
    if (stillRunning.length > 0) {
      violations.push(
        `${stillRunning.length} of ${options.jobs} jobs had not finished after ${options.timeoutMs / 1000} s`,
      );
    }

    // Each job as the ledger and the history have it.
    const jobs: ScaleSamples['jobs'] = [];
    const sizes: number[] = [];
    for (const jobId of jobIds) {
      const tenant = tenantsByJob.get(jobId) as Tenant;
      const job = await stack.engine.ledger.getJob(tenant.tenantId, jobId).catch(() => undefined);
      if (!job) {
        jobs.push({
          jobId,
          tenantId: tenant.tenantId,
          status: 'NOT SUBMITTED',
          wallMs: Number.NaN,
          historyEvents: 0,
        });
        continue;
      }
      const item = await stack.deps.doc.send(
        new GetCommand({ TableName: stack.tableName, Key: jobKey(tenant.tenantId, jobId) }),
      );
      sizes.push(Buffer.byteLength(JSON.stringify(item.Item ?? {})));
      const arn = `${stack.sfn.stateMachineArn.replace(':stateMachine:', ':execution:')}:${executionName(tenant.tenantId, jobId, 0)}`;
      let historyEvents = 0;
      try {
        historyEvents = stack.sfn.getExecutionHistory(arn).length;
      } catch {
        historyEvents = 0;
      }
      jobs.push({
        jobId,
        tenantId: tenant.tenantId,
        status: job.status,
        wallMs: job.finishedAt ? Date.parse(job.finishedAt) - Date.parse(job.createdAt) : Number.NaN,
        historyEvents,
      });
    }
    const succeeded = jobs.filter((j) => j.status === 'SUCCEEDED').length;
    if (succeeded !== options.jobs) violations.push(`${options.jobs - succeeded} jobs did not succeed`);
    const duplicated = [...stack.world.orders.values()].filter((n) => n > 1).length;
    if (duplicated > 0) violations.push(`${duplicated} orders placed more than once`);

    // What the run wrote, per partition (the warm-up job's writes taken out).
    const writes = new Map<string, number>();
    for (const [k, v] of stack.probe.writesByPartition) {
      const d = v - (writesBefore.get(k) ?? 0);
      if (d > 0) writes.set(k, d);
    }
    const hotPartitions = [...writes.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 8)
      .map(([partition, n]) => ({ partition, writes: n, perSecond: n / runSeconds }));
    const writesByKind: Record<string, number> = {};
    for (const [k, v] of writes) {
      const kind = k.startsWith('gsi') ? k.replace(/T#[^#]+/, 'T#<tenant>') : partitionKind(k);
      writesByKind[kind] = (writesByKind[kind] ?? 0) + v;
    }
    const totals = stack.probe.totals;
    const itemWrites = totals.itemWrites - totalsBefore.itemWrites;
    const jobItemWrites = totals.jobItemWrites - totalsBefore.jobItemWrites;
    const checks = totals.conditionChecks - totalsBefore.conditionChecks;

    // The metrics file, as the bench reads it: the same story as the ledger?
    const lines = readFileSync(stack.metricsFile, 'utf8').split('\n').filter(Boolean);
    const metric = {
      lines: lines.length,
      jobsSucceeded: 0,
      stepsCompleted: 0,
      ledgerConflicts: {} as Record<string, number>,
    };
    for (const line of lines) {
      const doc = JSON.parse(line) as Record<string, unknown>;
      const sum = (name: string): number => {
        const v = doc[name];
        return Array.isArray(v)
          ? v.reduce((a: number, b: number) => a + b, 0)
          : typeof v === 'number'
            ? v
            : 0;
      };
      metric.jobsSucceeded += sum('JobsSucceeded');
      metric.stepsCompleted += sum('StepsCompleted');
      const op = String(doc.Operation ?? '');
      if (op) metric.ledgerConflicts[op] = (metric.ledgerConflicts[op] ?? 0) + sum('LedgerConflicts');
    }
    // The warm-up job is in the file too.
    if (metric.jobsSucceeded !== succeeded + 1) {
      violations.push(
        `the metrics file counts ${metric.jobsSucceeded} verified completions, the ledger ${succeeded + 1}`,
      );
    }

    const found = saturations(samples, baseline, { cores: cpus().length });
    const wall = jobs.map((j) => j.wallMs).filter(Number.isFinite);
    const conflictsByKind = Object.fromEntries(stack.probe.conflictsByPartition);
    const staleCheckpoints = Object.values(metric.ledgerConflicts).reduce((a, b) => a + b, 0);
    const cancelled = totals.transactionsCancelled;
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
      {
        label: 'conflicts: StaleCheckpointError',
        value: staleCheckpoints,
        unit: 'writes',
        statistic: 'value',
        runs: 1,
        note:
          Object.entries(metric.ledgerConflicts)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ') || 'none',
      },
      {
        label: 'conflicts: TransactionCanceled',
        value: Object.values(cancelled).reduce((a, b) => a + b, 0),
        unit: 'transactions',
        statistic: 'value',
        runs: 1,
        note:
          Object.entries(cancelled)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ') || 'none',
      },
      {
        label: 'conflicts: ConditionalCheckFailed',
        value: totals.conditionalCheckFailed,
        unit: 'writes',
        statistic: 'value',
        runs: 1,
        note: `by partition: ${
          Object.entries(conflictsByKind)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ') || 'none'
        }`,
      },
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
      ...found.slice(1).map((s) => `then: ${s.what}, from ${s.at} s (${s.evidence})`),
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
    const samplesOut: ScaleSamples = {
      jobs,
      samples,
      baseline,
      saturations: found,
      hotPartitions,
      writesByKind,
      conflictsByKind,
      totals,
      invocations: stack.invocations,
      metricsFile: metric,
      jobItemBytes: { median: percentile(sizes, 0.5), max: Math.max(0, ...sizes) },
      durationSeconds: runSeconds,
    };
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
      samples: samplesOut,
    };
  } finally {
    await stack.stop();
  }
}
