import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { ENTRY_SK_PREFIX, JOB_SK, jobPk, openPk, openSk, statusPk, tenantPk, timeSk } from './keys.ts';
import { JOB_STATUSES, type Job, type JobStatus, type LedgerEntry, TERMINAL_STATUSES } from './types.ts';

const isTerminal = (status: JobStatus): boolean => TERMINAL_STATUSES.includes(status);

/** Mapping between the domain types and the stored items (domain fields plus key attributes). */

const KEY_ATTRIBUTES = ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk', 'gsi3pk', 'gsi3sk'] as const;

/**
 * A JSON-plain deep copy: `undefined` members dropped at every depth (the document client
 * refuses them unless configured with `removeUndefinedValues`), dates as ISO strings.
 */
export function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** Removes `undefined` members, which the document client refuses unless configured otherwise. */
export function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

export function toJobItem(job: Job): Record<string, unknown> {
  return {
    ...compact(job),
    pk: jobPk(job.tenantId, job.jobId),
    sk: JOB_SK,
    gsi1pk: statusPk(job.tenantId, job.status),
    gsi1sk: timeSk(job.createdAt, job.jobId),
    gsi2pk: tenantPk(job.tenantId),
    gsi2sk: timeSk(job.createdAt, job.jobId),
    // In the index of unfinished jobs until it finishes (see `applyStatus`).
    ...(isTerminal(job.status)
      ? {}
      : { gsi3pk: openPk(job.tenantId, job.jobId), gsi3sk: openSk(job.createdAt, job.tenantId, job.jobId) }),
  };
}

export function fromJobItem(item: Record<string, unknown>): Job {
  const job = { ...item };
  for (const key of KEY_ATTRIBUTES) delete job[key];
  return job as unknown as Job;
}

export function toEntryItem(entry: LedgerEntry): Record<string, unknown> {
  return {
    ...compact(entry),
    pk: jobPk(entry.tenantId, entry.jobId),
    sk: ENTRY_SK_PREFIX + entry.entryId,
  };
}

export function fromEntryItem(item: Record<string, unknown>): LedgerEntry {
  const entry = { ...item };
  delete entry.pk;
  delete entry.sk;
  return entry as unknown as LedgerEntry;
}

export function isJobItem(item: Record<string, unknown>): boolean {
  return item.sk === JOB_SK;
}

export function isEntryItem(item: Record<string, unknown>): boolean {
  return typeof item.sk === 'string' && item.sk.startsWith(ENTRY_SK_PREFIX);
}

/**
 * The fields of a job item that explain a refused conditional write, read from the raw
 * `Item` DynamoDB returns with `ReturnValuesOnConditionCheckFailure: ALL_OLD` (errors are
 * not unmarshalled by the document client). `undefined` = there was no item.
 */
export interface JobSnapshot {
  status?: JobStatus;
  version?: number;
  nextStep?: number;
  stepCount?: number;
  expiresAt?: number;
  requestHash?: string;
  waitToken?: string;
  /** The hash of the job's last ledger entry; absent on a job with no chained entry. */
  chainHead?: string;
}

export function snapshotFromRaw(item: Record<string, AttributeValue> | undefined): JobSnapshot | undefined {
  if (!item || Object.keys(item).length === 0) return undefined;
  const num = (v: AttributeValue | undefined): number | undefined =>
    v?.N === undefined ? undefined : Number(v.N);
  const status = item.status?.S;
  return {
    status: (JOB_STATUSES as readonly string[]).includes(status ?? '') ? (status as JobStatus) : undefined,
    version: num(item.version),
    nextStep: num(item.nextStep),
    stepCount: num(item.stepCount),
    expiresAt: num(item.expiresAt),
    requestHash: item.requestHash?.S,
    waitToken: item.wait?.M?.taskToken?.S,
    chainHead: item.chainHead?.S,
  };
}
