/**
 * Which limit the load simulation hit first: every second the run samples the engine and the
 * machine; each candidate bottleneck has a threshold that, held for `sustain` samples in a row,
 * says it is saturated. The first to saturate is the first bottleneck. Pure, so that it can be
 * checked on made-up samples (`test/unit/bench/bottleneck.test.ts`).
 */

/** One second of the run. */
export interface Sample {
  /** Seconds since the jobs were submitted. */
  t: number;
  /** CPU of this process (the local Step Functions runner, the handler cores, the API), in cores. */
  nodeCores: number;
  /** CPU of DynamoDB Local's JVM, in cores. */
  dynamoCores: number;
  /** DynamoDB calls in the second and their p95 latency, ms. */
  dynamoCalls: number;
  dynamoP95Ms: number;
  /** Event-loop delay, p99 over the second, ms. */
  eventLoopP99Ms: number;
  /** Start invocations that left a job QUEUED, and that took a lease, in the second. */
  queuedAsks: number;
  starts: number;
  /** Lease transactions cancelled by a rival's version (the capacity STATE item), in the second. */
  leaseConflicts: number;
}

export interface Baseline {
  /** p95 DynamoDB latency with one job alone, ms. */
  dynamoP95Ms: number;
}

/** Whose limit a rule is: this machine's, the local stand-ins' (they are not AWS), or Belay's own design. */
export type Scope = 'machine' | 'local' | 'belay';

export interface BottleneckRule {
  id: string;
  scope: Scope;
  /** What saturated, for people. */
  what: string;
  saturated(s: Sample, baseline: Baseline, cores: number): boolean;
  /** The figure that shows it, for the report. */
  evidence(s: Sample, baseline: Baseline): string;
}

/** Thresholds of saturation. */
export const RULES: readonly BottleneckRule[] = [
  {
    id: 'machine-cpu',
    scope: 'machine',
    what: 'the machine: every core busy (this process and DynamoDB Local together)',
    saturated: (s, _b, cores) => s.nodeCores + s.dynamoCores >= 0.9 * cores,
    evidence: (s) => `${(s.nodeCores + s.dynamoCores).toFixed(2)} cores busy`,
  },
  {
    id: 'node-thread',
    scope: 'local',
    what: "this process's one JavaScript thread (the local Step Functions runner, every handler core and the API)",
    // CPU-bound: a long event-loop delay at low CPU is the machine starving the process, not its thread.
    saturated: (s) => s.nodeCores >= 0.8,
    evidence: (s) =>
      `${s.nodeCores.toFixed(2)} cores, event-loop delay p99 ${Math.round(s.eventLoopP99Ms)} ms`,
  },
  {
    id: 'dynamodb-local',
    scope: 'local',
    what: 'DynamoDB Local: its latency grew past 5 x its latency with one job alone',
    saturated: (s, b) => s.dynamoCalls > 0 && s.dynamoP95Ms >= 5 * Math.max(b.dynamoP95Ms, 1),
    evidence: (s, b) =>
      `p95 ${Math.round(s.dynamoP95Ms)} ms against ${Math.round(b.dynamoP95Ms)} ms alone, ${s.dynamoCalls} calls/s, ${s.dynamoCores.toFixed(2)} cores`,
  },
  {
    id: 'queue-order',
    scope: 'belay',
    what: "the tenant queue's strict order: jobs that could take a lease wait for the jobs submitted before them",
    saturated: (s) => s.queuedAsks >= 2 * Math.max(s.starts, 1),
    evidence: (s) => `${s.queuedAsks} asks left QUEUED for ${s.starts} jobs started`,
  },
  {
    id: 'lease-state-item',
    scope: 'belay',
    what: "the tenant's capacity STATE item: lease transactions lose the version race",
    saturated: (s) => s.leaseConflicts >= Math.max(s.starts, 1),
    evidence: (s) => `${s.leaseConflicts} lease transactions cancelled for ${s.starts} leases taken`,
  },
];

export interface Saturation {
  id: string;
  scope: Scope;
  what: string;
  /** When it first held for `sustain` samples (seconds since submission), and what showed it. */
  at: number;
  evidence: string;
}

/**
 * Every rule that saturated (held for `sustain` consecutive samples), earliest first; the first
 * element is the first bottleneck.
 */
export function saturations(
  samples: readonly Sample[],
  baseline: Baseline,
  options: { cores: number; sustain?: number },
): Saturation[] {
  const sustain = options.sustain ?? 3;
  const out: Saturation[] = [];
  for (const rule of RULES) {
    let run = 0;
    for (const [i, s] of samples.entries()) {
      run = rule.saturated(s, baseline, options.cores) ? run + 1 : 0;
      if (run === sustain) {
        const first = samples[i - sustain + 1] as Sample;
        out.push({
          id: rule.id,
          scope: rule.scope,
          what: rule.what,
          at: first.t,
          evidence: rule.evidence(s, baseline),
        });
        break;
      }
    }
  }
  return out.sort(
    (a, b) => a.at - b.at || RULES.findIndex((r) => r.id === a.id) - RULES.findIndex((r) => r.id === b.id),
  );
}
