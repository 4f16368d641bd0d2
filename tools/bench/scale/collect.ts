/**
 * What the load simulation reads back when the jobs are done: each job as the ledger and the
 * execution history have it, the writes per partition, and the metrics file.
 */
import { readFileSync } from 'node:fs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { executionName } from '../../../lambdas/lib/engine/executions.ts';
import { jobKey } from '../../../lambdas/lib/ledger/keys.ts';
import type { Tenant } from './client.ts';
import { partitionKind } from './probe.ts';
import type { ScaleStack } from './stack.ts';

export interface JobResult {
  jobId: string;
  tenantId: string;
  status: string;
  /** Submission to the end of the job, ms (NaN when it did not end). */
  wallMs: number;
  historyEvents: number;
}

/** Each job: its status and times from the ledger, its item's size, its execution's history length. */
export async function collectJobs(
  stack: ScaleStack,
  jobIds: readonly string[],
  tenantOf: (jobId: string) => Tenant,
): Promise<{ jobs: JobResult[]; itemBytes: number[] }> {
  const jobs: JobResult[] = [];
  const itemBytes: number[] = [];
  const executionArn = (name: string): string =>
    `${stack.sfn.stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
  for (const jobId of jobIds) {
    const { tenantId } = tenantOf(jobId);
    const job = await stack.engine.ledger.getJob(tenantId, jobId).catch(() => undefined);
    if (!job) {
      jobs.push({ jobId, tenantId, status: 'NOT SUBMITTED', wallMs: Number.NaN, historyEvents: 0 });
      continue;
    }
    const item = await stack.deps.doc.send(
      new GetCommand({ TableName: stack.tableName, Key: jobKey(tenantId, jobId) }),
    );
    itemBytes.push(Buffer.byteLength(JSON.stringify(item.Item ?? {})));
    let historyEvents = 0;
    try {
      historyEvents = stack.sfn.getExecutionHistory(
        executionArn(job.executionName ?? executionName(job, 0)),
      ).length;
    } catch {
      historyEvents = 0;
    }
    jobs.push({
      jobId,
      tenantId,
      status: job.status,
      wallMs: job.finishedAt ? Date.parse(job.finishedAt) - Date.parse(job.createdAt) : Number.NaN,
      historyEvents,
    });
  }
  return { jobs, itemBytes };
}

export interface PartitionWrites {
  /** The most written partitions of the run. */
  hot: { partition: string; writes: number; perSecond: number }[];
  /** Writes by kind of partition (ids reduced: `T#<tenant>#J#<job>`, `gsi2:T#<tenant>`...). */
  byKind: Record<string, number>;
}

/** The writes of the run per partition: the probe's counts now, less those of `before`. */
export function partitionWrites(
  now: ReadonlyMap<string, number>,
  before: ReadonlyMap<string, number>,
  seconds: number,
): PartitionWrites {
  const writes = new Map<string, number>();
  for (const [k, v] of now) {
    const d = v - (before.get(k) ?? 0);
    if (d > 0) writes.set(k, d);
  }
  const hot = [...writes.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([partition, n]) => ({ partition, writes: n, perSecond: n / seconds }));
  const byKind: Record<string, number> = {};
  for (const [k, v] of writes) {
    const kind = k.startsWith('gsi') ? k.replace(/T#[^#]+/, 'T#<tenant>') : partitionKind(k);
    byKind[kind] = (byKind[kind] ?? 0) + v;
  }
  return { hot, byKind };
}

export interface MetricsFileSummary {
  lines: number;
  jobsSucceeded: number;
  stepsCompleted: number;
  /** `LedgerConflicts` by operation. */
  ledgerConflicts: Record<string, number>;
}

/** The EMF lines of the metrics file, summed: the bench reads the same metrics CloudWatch would. */
export function readMetricsFile(path: string): MetricsFileSummary {
  const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
  const out: MetricsFileSummary = {
    lines: lines.length,
    jobsSucceeded: 0,
    stepsCompleted: 0,
    ledgerConflicts: {},
  };
  for (const line of lines) {
    const doc = JSON.parse(line) as Record<string, unknown>;
    const sum = (name: string): number => {
      const v = doc[name];
      if (Array.isArray(v)) return v.reduce((a: number, b: number) => a + b, 0);
      return typeof v === 'number' ? v : 0;
    };
    out.jobsSucceeded += sum('JobsSucceeded');
    out.stepsCompleted += sum('StepsCompleted');
    const op = String(doc.Operation ?? '');
    if (op) out.ledgerConflicts[op] = (out.ledgerConflicts[op] ?? 0) + sum('LedgerConflicts');
  }
  return out;
}
