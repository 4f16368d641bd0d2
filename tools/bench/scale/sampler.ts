/**
 * The load simulation's clock: one `Sample` a second of this process, DynamoDB Local's JVM and
 * the engine (see `bottleneck.ts`), and the peaks of memory and open executions.
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { percentile } from '../figures.ts';
import type { Sample } from './bottleneck.ts';
import type { ScaleStack } from './stack.ts';

const CLK_TCK = 100;

/** CPU seconds a process has used (user + system), from /proc/<pid>/stat. */
export function cpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return 0;
  }
}

export interface Sampler {
  samples: Sample[];
  /** Stops sampling; the peaks seen. */
  stop(): { peakRss: number; peakExecutions: number };
}

/** Samples every second from now (t = 0). */
export function startSampler(stack: ScaleStack): Sampler {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  const samples: Sample[] = [];
  const capConflicts = (): number => stack.probe.conflictsByPartition.get('T#<tenant>#CAP') ?? 0;
  let last = {
    node: process.cpuUsage(),
    java: cpuSecondsOf(stack.dynamodb.pid),
    queued: stack.invocations.startOutcomes.queued ?? 0,
    ready: stack.invocations.startOutcomes.ready ?? 0,
    conflicts: capConflicts(),
    at: performance.now(),
  };
  let peakRss = 0;
  let peakExecutions = 0;
  const t0 = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    const seconds = (now - last.at) / 1000;
    const node = process.cpuUsage();
    const java = cpuSecondsOf(stack.dynamodb.pid);
    const window = stack.probe.takeWindow();
    const queued = stack.invocations.startOutcomes.queued ?? 0;
    const ready = stack.invocations.startOutcomes.ready ?? 0;
    const conflicts = capConflicts();
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
  return {
    samples,
    stop() {
      clearInterval(timer);
      histogram.disable();
      return { peakRss, peakExecutions };
    },
  };
}
