import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { requestCancel } from './cancel-request.ts';
import { ChainHeads } from './chain-write.ts';
import { type LedgerEntryInput, loadEvidence } from './entries.ts';
import { expireEntries } from './entry-ttl.ts';
import { InvalidInputError } from './errors.ts';
import type { EvidenceStore } from './evidence-store.ts';
import { type CompleteStepInput, completeStep, type JobUpdate, updateJob } from './job-writes.ts';
import { append, createJob, readJob, readPartition } from './jobs.ts';
import { assertId, createEntryIdFactory } from './keys.ts';
import { type JobPage, type ListJobsOptions, listJobs, listOpenJobs, type OpenJobRef } from './list.ts';
import type { WaitingStatus } from './status.ts';
import { getLiveJob, type LedgerContext } from './store.ts';
import {
  type ClearWaitOptions,
  clearWait,
  setWait,
  type TransitionOptions,
  transition,
} from './transitions.ts';
import type { Evidence, Job, JobOrigin, JobRequest, JobStatus, LedgerEntry, PendingWait } from './types.ts';
import { touchWriteOwner } from './write-owner.ts';

export interface LedgerDeps {
  doc: DynamoDBDocumentClient;
  tableName: string;
  /** Injected clock (tests); defaults to the system clock. */
  clock?: () => Date;
  /** Days a terminal job is kept before its TTL expires (default 30). */
  terminalTtlDays?: number;
  /** Where evidence larger than `maxInlineEvidenceBytes` goes; without one such evidence is refused. */
  evidenceStore?: EvidenceStore;
  /** Largest evidence (JSON with secrets masked, bytes) stored inside the entry (default 8 KiB). */
  maxInlineEvidenceBytes?: number;
}

/**
 * The checkpoint ledger: one job item and its append-only entries per job, in one
 * DynamoDB table. Every key includes the tenant, so another tenant's job is exactly as
 * invisible as a missing one (`JobNotFoundError`), for reads and writes alike. Terminal
 * jobs past their TTL are treated as missing even before DynamoDB deletes them.
 */
export interface Ledger {
  /**
   * Creates a QUEUED job with its `job-created` entry; idempotent per (job id, request).
   * `origin` (who submitted it) is kept on the job and the entry, outside the request.
   */
  createJob(
    tenantId: string,
    jobId: string,
    request: JobRequest,
    stepCount: number,
    origin?: JobOrigin,
  ): Promise<{ job: Job; created: boolean }>;
  /** The job and its entries in append order: one consistent Query, all pages. */
  readJob(tenantId: string, jobId: string): Promise<{ job: Job; entries: LedgerEntry[] }>;
  /**
   * The job and every entry of its partition in key order (one consistent Query), entries of an
   * earlier job with the same id included: what the job's receipt checks its chain against.
   */
  readPartition(tenantId: string, jobId: string): Promise<{ job: Job; entries: LedgerEntry[] }>;
  /** The job item alone (consistent GetItem). */
  getJob(tenantId: string, jobId: string): Promise<Job>;
  /** Appends an entry (secrets masked, numbers exact; large evidence stored by reference). */
  append(tenantId: string, jobId: string, entry: LedgerEntryInput): Promise<LedgerEntry>;
  /** Entry + pointer + cost in one transaction; a lost race is `StaleCheckpointError`. */
  completeStep(input: CompleteStepInput): Promise<Job>;
  /** Conditional update of sessions, retries, execution name, failure and cost. */
  updateJob(tenantId: string, jobId: string, update: JobUpdate): Promise<Job>;
  /** Status change allowed by `LEGAL_TRANSITIONS`; to the current status it is a no-op. */
  transition(tenantId: string, jobId: string, to: JobStatus, options?: TransitionOptions): Promise<Job>;
  /**
   * Gives a finished job's entries still without one the job's TTL (those appended after its
   * terminal transition: the ends of its browser sessions); the number stamped. Nothing for a
   * job that has not finished.
   */
  expireEntries(job: Job): Promise<number>;
  /** RUNNING (or the same waiting status, to re-arm) -> waiting status with its pending wait. */
  setWait(
    tenantId: string,
    jobId: string,
    wait: PendingWait,
    status: WaitingStatus,
    entry?: LedgerEntryInput,
  ): Promise<Job>;
  /** Removes the pending wait (if its token matches) and returns it; `null` when there is none. */
  clearWait(tenantId: string, jobId: string, options?: ClearWaitOptions): Promise<PendingWait | null>;
  /** The tenant's jobs, newest first, optionally by status; cursor-paginated. */
  listJobs(tenantId: string, options?: ListJobsOptions): Promise<JobPage>;
  /** Unfinished jobs of every tenant, by shard of gsi3 (the engine's sweep only). */
  listOpenJobs(
    shard: number,
    options?: { limit?: number; cursor?: Record<string, unknown> },
  ): Promise<{ jobs: OpenJobRef[]; next?: Record<string, unknown> }>;
  /** An entry's evidence, inline or loaded from the evidence store. */
  getEvidence(entry: LedgerEntry): Promise<Evidence | undefined>;
  /** A cancellation asked for while a write is in flight (see `cancel-request.ts`); the job's version does not move. */
  requestCancel(tenantId: string, jobId: string, by: string, entry: LedgerEntryInput): Promise<Job>;
  /** A sign of life of the write intent's owner (see `write-owner.ts`); `false` when it owns it no longer. */
  touchWriteOwner(
    tenantId: string,
    jobId: string,
    attemptId: string,
    options?: { release?: boolean },
  ): Promise<boolean>;
}

/**
 * Creates a ledger over an existing table (see `createLedgerTable` and `schema.ts`).
 *
 * @example
 * const ledger = createLedger({ doc: DynamoDBDocumentClient.from(new DynamoDBClient({})), tableName: 'belay-ledger' });
 * const { job } = await ledger.createJob('acme', 'job-1', request, playbook.steps.length);
 */
export function createLedger(deps: LedgerDeps): Ledger {
  const clock = deps.clock ?? (() => new Date());
  const terminalTtlDays = deps.terminalTtlDays ?? 30;
  const maxInlineEvidenceBytes = deps.maxInlineEvidenceBytes ?? 8 * 1024;
  if (!(terminalTtlDays > 0)) throw new InvalidInputError('terminalTtlDays', 'must be a positive number');
  if (!Number.isInteger(maxInlineEvidenceBytes) || maxInlineEvidenceBytes < 0) {
    throw new InvalidInputError('maxInlineEvidenceBytes', 'must be a non-negative integer');
  }
  if (typeof deps.tableName !== 'string' || deps.tableName.length === 0) {
    throw new InvalidInputError('tableName', 'must be a table name');
  }
  const ctx: LedgerContext = {
    doc: deps.doc,
    tableName: deps.tableName,
    now: clock,
    terminalTtlDays,
    maxInlineEvidenceBytes,
    evidenceStore: deps.evidenceStore,
    nextEntryId: createEntryIdFactory(clock),
    chainHeads: new ChainHeads(),
  };
  return {
    createJob: (tenantId, jobId, request, stepCount, origin) =>
      createJob(ctx, tenantId, jobId, request, stepCount, origin),
    readJob: (tenantId, jobId) => readJob(ctx, tenantId, jobId),
    readPartition: (tenantId, jobId) => readPartition(ctx, tenantId, jobId),
    getJob: async (tenantId, jobId) => {
      assertId('tenantId', tenantId);
      assertId('jobId', jobId);
      return getLiveJob(ctx, tenantId, jobId, 'getJob');
    },
    append: (tenantId, jobId, entry) => append(ctx, tenantId, jobId, entry),
    completeStep: (input) => completeStep(ctx, input),
    updateJob: (tenantId, jobId, update) => updateJob(ctx, tenantId, jobId, update),
    transition: (tenantId, jobId, to, options) => transition(ctx, tenantId, jobId, to, options),
    expireEntries: (job) => expireEntries(ctx, job),
    setWait: (tenantId, jobId, wait, status, entry) => setWait(ctx, tenantId, jobId, wait, status, entry),
    clearWait: (tenantId, jobId, options) => clearWait(ctx, tenantId, jobId, options),
    listJobs: (tenantId, options) => listJobs(ctx, tenantId, options),
    listOpenJobs: (shard, options) => listOpenJobs(ctx, shard, options),
    getEvidence: (entry) => loadEvidence(ctx, entry),
    requestCancel: (tenantId, jobId, by, entry) => requestCancel(ctx, tenantId, jobId, by, entry),
    touchWriteOwner: (tenantId, jobId, attemptId, options) =>
      touchWriteOwner(ctx, tenantId, jobId, attemptId, options),
  };
}
