/**
 * Business metrics read off the ledger: every write that succeeds is an event that happened
 * exactly once (a completed step, a failed job, a wait requested), so the metrics are a
 * projection of what the ledger recorded, with no emit call in the handlers and no count
 * that a retried invocation could double (a repeated write is refused or a no-op, and only
 * a write that succeeded is counted).
 */
import { priceCost } from '../cost/rates.ts';
import {
  type Job,
  type Ledger,
  type LedgerEntryInput,
  normalizeCost,
  StaleCheckpointError,
} from '../ledger/index.ts';
import type { LedgerEntry, PendingWait } from '../ledger/types.ts';
import type { LEDGER_OPERATIONS } from './names.ts';
import type { MetricsRecorder } from './recorder.ts';

type Operation = (typeof LEDGER_OPERATIONS)[number];

/** Jobs whose playbook this process has seen, so entries appended without the job still carry it. */
const PLAYBOOK_CACHE_SIZE = 1000;

const seconds = (from: string | undefined, to: string | undefined): number | undefined => {
  if (!from || !to) return undefined;
  const s = (Date.parse(to) - Date.parse(from)) / 1000;
  return Number.isFinite(s) && s >= 0 ? s : undefined;
};

export interface ObserveLedgerOptions {
  /** The clock human waits are timed with (default: the system clock). */
  clock?: () => Date;
  /** Called with every entry written (after the write succeeded). */
  onWrite?(entry: LedgerEntryInput): void;
}

/**
 * The ledger with its writes published as metrics (see `METRICS` in `names.ts`, `from: 'ledger'`).
 *
 * @example
 * const ledger = observeLedger(createLedger({ doc, tableName }), processMetrics());
 */
export function observeLedger(
  ledger: Ledger,
  metrics: MetricsRecorder,
  options: ObserveLedgerOptions = {},
): Ledger {
  const clock = options.clock ?? ((): Date => new Date());
  const playbooks = new Map<string, string>();
  const remember = (job: Job): Job => {
    const key = `${job.tenantId}/${job.jobId}`;
    if (!playbooks.has(key) && playbooks.size >= PLAYBOOK_CACHE_SIZE) {
      const oldest = playbooks.keys().next().value;
      if (oldest !== undefined) playbooks.delete(oldest);
    }
    playbooks.set(key, job.playbook);
    return job;
  };
  const playbookOf = (tenantId: string, jobId: string): string =>
    playbooks.get(`${tenantId}/${jobId}`) ?? 'unknown';

  /** What one entry that was written says happened. */
  const entryWritten = (tenantId: string, jobId: string, entry: LedgerEntryInput, job?: Job): void => {
    options.onWrite?.(entry);
    const Playbook = job?.playbook ?? playbookOf(tenantId, jobId);
    const cost = normalizeCost(entry.cost);
    const dollars = priceCost(cost).total;
    if (dollars > 0) metrics.add('CostUsd', dollars, { Playbook });
    if (cost.browserSeconds > 0) metrics.add('BrowserActiveSeconds', cost.browserSeconds, { Playbook });
    const detail = entry.detail ?? {};
    switch (entry.type) {
      case 'job-created':
        metrics.add('JobsSubmitted', 1, { Playbook });
        break;
      case 'step-completed': {
        metrics.add('StepsCompleted', 1, { Playbook });
        if (cost.lambdaMs > 0) metrics.add('StepDuration', cost.lambdaMs, { Playbook });
        // An agent step's actions served by the action cache, counted once the step verified
        // with them (its completion's counters): a replay that failed saved nothing.
        const cached = (detail.agent as { cachedActions?: unknown } | undefined)?.cachedActions;
        if (typeof cached === 'number' && cached > 0) metrics.add('ModelCacheHits', cached, { Playbook });
        break;
      }
      case 'step-failed':
        metrics.add('StepsRetried', 1, { Playbook });
        break;
      case 'reauth':
        metrics.add('ReSignIns', 1, { Application: String(detail.application ?? '') });
        break;
      case 'session-replaced':
        metrics.add('SessionsReplaced', 1, { Application: String(detail.application ?? '') });
        break;
      case 'session-ended': {
        const app = String(detail.application ?? '');
        const session = job?.sessions[app];
        const lived = seconds(session?.openedAt, session?.endedAt);
        if (lived !== undefined) metrics.add('BrowserSessionSeconds', lived, { Application: app });
        break;
      }
      case 'reconciled':
        metrics.add('Reconciliations', 1, {
          Resolution: detail.probe === 'absent' ? 'absent' : 'done',
        });
        break;
      case 'approval-requested':
      case 'mfa-requested':
      case 'review-requested':
        metrics.add('HumanWaitsRequested', 1, { Kind: entry.type.slice(0, entry.type.indexOf('-')) });
        break;
      case 'parked':
        metrics.add('JobsParked', 1, {});
        break;
      // Each is one decision of an agent step's model (chosen, chosen again for a healed target, or
      // chosen and refused): a replayed action writes none, so a replay counts no call; an action
      // served by the action cache (`source: 'cache'`) is no model call either.
      case 'action-chosen':
      case 'action-healed':
      case 'action-refused':
        if (detail.source !== 'cache') metrics.add('ModelCalls', 1, { Playbook });
        break;
      // A model's answer to an agent probe: one call, wherever the probe ran; a failed call paid for too.
      case 'probe-answered':
      case 'model-call-failed':
        metrics.add('ModelCalls', 1, { Playbook });
        break;
      case 'succeeded': {
        metrics.add('JobsSucceeded', 1, { Playbook });
        const took = seconds(job?.createdAt, job?.finishedAt);
        if (took !== undefined) metrics.add('JobDuration', took, { Playbook });
        break;
      }
      case 'failed':
        metrics.add('JobsFailed', 1, { Playbook, Reason: String(detail.reason ?? job?.failure?.reason) });
        break;
      case 'cancelled':
        metrics.add('JobsCancelled', 1, { Playbook });
        break;
      default:
        break;
    }
  };

  /** The job left the queue for the first time (its `startedAt` is this write's). */
  const maybeStarted = (job: Job): void => {
    if (job.status !== 'RUNNING' || !job.startedAt || job.startedAt !== job.updatedAt) return;
    metrics.add('JobsStarted', 1, { Playbook: job.playbook });
    const waited = seconds(job.createdAt, job.startedAt);
    if (waited !== undefined) metrics.add('QueueWait', waited, { Playbook: job.playbook });
  };

  const waitCleared = (wait: PendingWait | null): void => {
    if (!wait) return;
    const waited = seconds(wait.requestedAt, clock().toISOString());
    if (waited !== undefined) metrics.add('HumanWaitDuration', waited, { Kind: wait.kind });
  };

  /** Runs a write; a lost optimistic-lock race is counted, and rethrown as it was. */
  const write = async <T>(operation: Operation, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (err) {
      if (err instanceof StaleCheckpointError) metrics.add('LedgerConflicts', 1, { Operation: operation });
      throw err;
    }
  };

  return {
    ...ledger,
    readJob: async (tenantId, jobId) => {
      const read = await ledger.readJob(tenantId, jobId);
      remember(read.job);
      return read;
    },
    getJob: async (tenantId, jobId) => remember(await ledger.getJob(tenantId, jobId)),
    createJob: (tenantId, jobId, request, stepCount, origin) =>
      write('createJob', async () => {
        const result = await ledger.createJob(tenantId, jobId, request, stepCount, origin);
        remember(result.job);
        if (result.created) entryWritten(tenantId, jobId, { type: 'job-created' }, result.job);
        return result;
      }),
    append: (tenantId, jobId, entry) =>
      write('append', async () => {
        const written: LedgerEntry = await ledger.append(tenantId, jobId, entry);
        entryWritten(tenantId, jobId, entry);
        return written;
      }),
    completeStep: (input) =>
      write('completeStep', async () => {
        const job = remember(await ledger.completeStep(input));
        entryWritten(input.tenantId, input.jobId, { type: 'step-completed', cost: input.cost }, job);
        return job;
      }),
    updateJob: (tenantId, jobId, update) =>
      write('updateJob', async () => {
        const job = remember(await ledger.updateJob(tenantId, jobId, update));
        if (update.entry) entryWritten(tenantId, jobId, update.entry, job);
        return job;
      }),
    transition: (tenantId, jobId, to, options) =>
      write('transition', async () => {
        const calledAt = clock().toISOString();
        const job = remember(await ledger.transition(tenantId, jobId, to, options));
        // A transition to the status the job already has writes nothing and returns the job as
        // it was: its last write is older than this call.
        if (job.updatedAt < calledAt) return job;
        if (options?.entry) entryWritten(tenantId, jobId, options.entry, job);
        if (to === 'RUNNING') maybeStarted(job);
        return job;
      }),
    setWait: (tenantId, jobId, wait, status, entry) =>
      write('setWait', async () => {
        const job = remember(await ledger.setWait(tenantId, jobId, wait, status, entry));
        if (entry) entryWritten(tenantId, jobId, entry, job);
        return job;
      }),
    clearWait: (tenantId, jobId, options) =>
      write('clearWait', async () => {
        const wait = await ledger.clearWait(tenantId, jobId, options);
        waitCleared(wait);
        if (wait && options?.entry) entryWritten(tenantId, jobId, options.entry);
        return wait;
      }),
  };
}
