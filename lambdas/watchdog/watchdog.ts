/**
 * The watchdog: every few minutes (an EventBridge schedule), looks at every tenant's live jobs
 * and browser leases and publishes what no handler can see from inside one job: how many jobs
 * are stuck (no progress for longer than their status allows), how deep and how old the queues
 * are, how long people have left waits open, and how full each tenant's browser cap is.
 *
 * A stuck job invokes nothing, so nothing it runs can report it: only a look from outside can.
 * The look is cheap at scale: it reads the tenant directory (one partition) and, per tenant,
 * the gsi1 partitions of its live statuses, which hold only non-terminal jobs.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { LeaseCapacity } from '../lib/capacity/leases.ts';
import { queryAll } from '../lib/dynamo/query.ts';
import { TABLE_KEYS, TENANT_DIRECTORY_PK } from '../lib/ledger/schema.ts';
import { type JobStatus, type PendingWait, WAIT_KINDS, type WaitKind } from '../lib/ledger/types.ts';
import { LIVE_STATUSES, type LiveStatus } from '../lib/metrics/names.ts';
import type { MetricsRecorder } from '../lib/metrics/recorder.ts';
import type { Logger } from '../lib/playbooks/contract.ts';

/** How long each status may go without progress before a job counts as stuck. */
export interface StuckAllowance {
  /** RUNNING: no write to the job for a whole lease TTL (its holder would have renewed or written). */
  runningSeconds: number;
  /** QUEUED: no ask for a lease for this long (its execution is gone: the queue's own grace). */
  queuedSeconds: number;
  /** WAITING_*: this long past the wait's expiry (the state machine's timeout should have ended it). */
  waitGraceSeconds: number;
}

export interface WatchdogDeps {
  doc: DynamoDBDocumentClient;
  tableName: string;
  capacity: Pick<LeaseCapacity, 'status'>;
  metrics: MetricsRecorder;
  log: Logger;
  clock: () => Date;
  allowance: StuckAllowance;
  /** Tenants looked at in parallel (default 4). */
  concurrency?: number;
}

/** A live job as the watchdog reads it (a projection of the job item). */
interface LiveJob {
  tenantId: string;
  jobId: string;
  status: LiveStatus;
  playbook?: string;
  createdAt?: string;
  updatedAt?: string;
  queuedSince?: string;
  capacityAskedAt?: string;
  wait?: Pick<PendingWait, 'kind' | 'expiresAt' | 'requestedAt'>;
}

/** A job that made no progress for longer than its status allows. */
export interface StuckJob {
  tenantId: string;
  jobId: string;
  status: LiveStatus;
  /** Seconds since its last sign of progress. */
  idleSeconds: number;
  /** What it was allowed, in seconds. */
  allowedSeconds: number;
}

export interface WatchReport {
  tenants: number;
  live: Record<LiveStatus, number>;
  stuck: StuckJob[];
  queueDepth: number;
  oldestQueuedSeconds: number;
  oldestWaitSeconds: Record<WaitKind, number>;
  browsersInUse: number;
  browserCap: number;
  /** The fullest tenant's leases / cap, in percent. */
  maxUtilizationPercent: number;
}

/** Stuck jobs logged one line each, at most this many per run (the count is always exact). */
const MAX_STUCK_LINES = 50;

/** Seconds from `iso` to `now`, or undefined without a time. */
function since(iso: string | undefined, now: Date): number | undefined {
  if (!iso) return undefined;
  const s = (now.getTime() - Date.parse(iso)) / 1000;
  return Number.isFinite(s) ? Math.max(0, s) : undefined;
}

/** Every item of a gsi1 partition (following pages), projected to `attributes`. */
async function queryIndex(
  deps: WatchdogDeps,
  pk: string,
  attributes: string[],
): Promise<Record<string, unknown>[]> {
  const names = Object.fromEntries(attributes.map((a, i) => [`#a${i}`, a]));
  return queryAll(deps.doc, {
    TableName: deps.tableName,
    IndexName: TABLE_KEYS.gsi1.name,
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': pk },
    ProjectionExpression: Object.keys(names).join(', '),
    ExpressionAttributeNames: names,
  });
}

/** The tenants in the directory. */
export async function listTenants(deps: WatchdogDeps): Promise<string[]> {
  const items = await queryIndex(deps, TENANT_DIRECTORY_PK, ['tenantId']);
  return items.map((i) => i.tenantId).filter((t): t is string => typeof t === 'string');
}

const JOB_ATTRIBUTES = [
  'tenantId',
  'jobId',
  'status',
  'playbook',
  'createdAt',
  'updatedAt',
  'queuedSince',
  'capacityAskedAt',
  'wait',
];

async function liveJobsOf(deps: WatchdogDeps, tenantId: string): Promise<LiveJob[]> {
  const perStatus = await Promise.all(
    LIVE_STATUSES.map((status) => queryIndex(deps, `T#${tenantId}#S#${status}`, JOB_ATTRIBUTES)),
  );
  return perStatus.flat().map((item) => {
    const wait = item.wait as PendingWait | undefined;
    return {
      ...(item as unknown as LiveJob),
      ...(wait
        ? { wait: { kind: wait.kind, expiresAt: wait.expiresAt, requestedAt: wait.requestedAt } }
        : {}),
    };
  });
}

/**
 * Is the job stuck, and by how much? RUNNING: no write to the job item for `runningSeconds`.
 * QUEUED: no ask for a lease (nor submission) for `queuedSeconds`. WAITING_*: past the wait's
 * expiry by `waitGraceSeconds`, or waiting with no wait recorded.
 */
export function stuckness(job: LiveJob, now: Date, allowance: StuckAllowance): StuckJob | undefined {
  const stuck = (idle: number | undefined, allowed: number): StuckJob | undefined =>
    idle !== undefined && idle > allowed
      ? {
          tenantId: job.tenantId,
          jobId: job.jobId,
          status: job.status,
          idleSeconds: Math.round(idle),
          allowedSeconds: allowed,
        }
      : undefined;
  switch (job.status) {
    case 'RUNNING':
      return stuck(since(job.updatedAt, now), allowance.runningSeconds);
    case 'QUEUED':
      return stuck(
        since(job.capacityAskedAt ?? job.queuedSince ?? job.createdAt, now),
        allowance.queuedSeconds,
      );
    default: {
      if (!job.wait) return stuck(since(job.updatedAt, now), allowance.waitGraceSeconds);
      const pastExpiry = since(job.wait.expiresAt, now);
      const allowed = Math.round((Date.parse(job.wait.expiresAt) - Date.parse(job.wait.requestedAt)) / 1000);
      return pastExpiry !== undefined && pastExpiry > allowance.waitGraceSeconds
        ? stuck(since(job.wait.requestedAt, now) ?? 0, allowed + allowance.waitGraceSeconds)
        : undefined;
    }
  }
}

/** Runs `fn` over `items`, `limit` at a time. */
async function inBatches<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += limit) {
    out.push(...(await Promise.all(items.slice(i, i + limit).map(fn))));
  }
  return out;
}

/** One look at every tenant: publishes the operations metrics, logs each stuck job, returns what it saw. */
export async function watch(deps: WatchdogDeps): Promise<WatchReport> {
  const now = deps.clock();
  const tenants = await listTenants(deps);
  const live = Object.fromEntries(LIVE_STATUSES.map((s) => [s, 0])) as Record<LiveStatus, number>;
  const stuckByStatus = Object.fromEntries(LIVE_STATUSES.map((s) => [s, 0])) as Record<LiveStatus, number>;
  const oldestWaitSeconds = Object.fromEntries(WAIT_KINDS.map((k) => [k, 0])) as Record<WaitKind, number>;
  const stuck: StuckJob[] = [];
  let oldestQueuedSeconds = 0;
  let browsersInUse = 0;
  let browserCap = 0;
  let maxUtilizationPercent = 0;

  await inBatches(tenants, deps.concurrency ?? 4, async (tenantId) => {
    const jobs = await liveJobsOf(deps, tenantId);
    for (const job of jobs) {
      live[job.status] += 1;
      const s = stuckness(job, now, deps.allowance);
      if (s) {
        stuck.push(s);
        stuckByStatus[job.status] += 1;
      }
      if (job.status === 'QUEUED') {
        oldestQueuedSeconds = Math.max(
          oldestQueuedSeconds,
          since(job.queuedSince ?? job.createdAt, now) ?? 0,
        );
      }
      if (job.wait && (job.status as JobStatus).startsWith('WAITING_')) {
        const open = since(job.wait.requestedAt, now) ?? 0;
        oldestWaitSeconds[job.wait.kind] = Math.max(oldestWaitSeconds[job.wait.kind], open);
      }
    }
    // A tenant with nothing live holds no lease worth counting (an expired one is not counted anyway).
    if (jobs.length === 0) return;
    const { held, cap } = await deps.capacity.status(tenantId);
    browsersInUse += held;
    browserCap += cap;
    if (cap > 0) maxUtilizationPercent = Math.max(maxUtilizationPercent, (held / cap) * 100);
  });

  const { metrics } = deps;
  for (const status of LIVE_STATUSES) {
    metrics.add('LiveJobs', live[status], { Status: status });
    metrics.add('StuckJobs', stuckByStatus[status], { Status: status });
  }
  for (const kind of WAIT_KINDS)
    metrics.add('OldestWaitAge', Math.round(oldestWaitSeconds[kind]), { Kind: kind });
  metrics.add('QueueDepth', live.QUEUED, {});
  metrics.add('OldestQueuedAge', Math.round(oldestQueuedSeconds), {});
  metrics.add('BrowsersInUse', browsersInUse, {});
  metrics.add('BrowserCap', browserCap, {});
  metrics.add('BrowserCapUtilization', Number(maxUtilizationPercent.toFixed(1)), {});
  metrics.flush();

  stuck.sort((a, b) => b.idleSeconds - a.idleSeconds);
  for (const s of stuck.slice(0, MAX_STUCK_LINES)) {
    deps.log.warn(`job ${s.jobId} is stuck in ${s.status}`, { event: 'job-stuck', ...s });
  }
  if (stuck.length > MAX_STUCK_LINES) {
    deps.log.warn(`${stuck.length - MAX_STUCK_LINES} more stuck jobs not listed`, { event: 'job-stuck' });
  }
  return {
    tenants: tenants.length,
    live,
    stuck,
    queueDepth: live.QUEUED,
    oldestQueuedSeconds: Math.round(oldestQueuedSeconds),
    oldestWaitSeconds,
    browsersInUse,
    browserCap,
    maxUtilizationPercent: Number(maxUtilizationPercent.toFixed(1)),
  };
}
