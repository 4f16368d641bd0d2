import { BelayError, type BelayErrorOptions } from '../errors.ts';
import type { JobStatus } from './types.ts';

/**
 * Errors of the checkpoint ledger. The class names are what the state machine's
 * `Retry`/`Catch` `ErrorEquals` match: only {@link LedgerUnavailableError} is retryable.
 */

/**
 * Base class of every ledger error; thrown as it is for a write refused for no reason the
 * ledger can name (a corrupt item, a cancelled transaction with no retryable cause).
 */
export class LedgerError extends BelayError {
  constructor(message: string, options?: BelayErrorOptions);
  constructor(name: string, reason: string, message: string, options?: BelayErrorOptions);
  constructor(...args: [string, BelayErrorOptions?] | [string, string, string, BelayErrorOptions?]) {
    if (args.length <= 2)
      super('LedgerError', 'ledger-error', args[0], args[1] as BelayErrorOptions | undefined);
    else super(args[0], args[1] as string, args[2] as string, args[3]);
  }
}

/** A caller passed something the ledger refuses to store (bad id, oversized item, bad cursor). Not retryable. */
export class InvalidInputError extends LedgerError {
  readonly field: string;
  constructor(
    field: string,
    message: string,
    options?: ErrorOptions,
    kind: { name: string; reason: string } = { name: 'InvalidInputError', reason: 'invalid-input' },
  ) {
    super(kind.name, kind.reason, `invalid ${field}: ${message}`, options);
    this.field = field;
  }
}

/** Evidence too large to store inline and no evidence store configured. Not retryable. */
export class EvidenceTooLargeError extends InvalidInputError {
  readonly bytes: number;
  readonly maxInlineBytes: number;
  constructor(bytes: number, maxInlineBytes: number, options?: ErrorOptions) {
    super(
      'evidence',
      `${bytes} bytes exceeds the inline limit of ${maxInlineBytes} bytes and no evidence store is configured`,
      options,
      { name: 'EvidenceTooLargeError', reason: 'evidence-too-large' },
    );
    this.bytes = bytes;
    this.maxInlineBytes = maxInlineBytes;
  }
}

/**
 * No such job for this tenant. A job of another tenant, and a terminal job whose TTL has
 * passed, are reported exactly like a job that never existed.
 */
export class JobNotFoundError extends LedgerError {
  readonly tenantId: string;
  readonly jobId: string;
  constructor(tenantId: string, jobId: string, options?: ErrorOptions) {
    super('JobNotFoundError', 'job-not-found', `job ${jobId} not found`, options);
    this.tenantId = tenantId;
    this.jobId = jobId;
  }
}

/** The job id is taken by a job submitted with a different request. Not retryable: use another id. */
export class JobConflictError extends LedgerError {
  readonly jobId: string;
  constructor(jobId: string, options?: ErrorOptions) {
    super(
      'JobConflictError',
      'job-conflict',
      `job id ${jobId} is already used by a job with a different request; resubmit the same request or choose another job id`,
      options,
    );
    this.jobId = jobId;
  }
}

/** What the job item held when a conditional write was refused. */
export interface ObservedJobState {
  status?: JobStatus;
  version?: number;
  nextStep?: number;
}

/**
 * The caller's view of the job is out of date (another worker advanced it, or its status
 * changed): nothing was written. Re-read the job and decide again; do not retry blindly.
 */
export class StaleCheckpointError extends LedgerError {
  readonly jobId: string;
  readonly stepIndex: number | undefined;
  readonly expectedVersion: number | undefined;
  readonly observed: ObservedJobState;
  constructor(
    jobId: string,
    stepIndex: number | undefined,
    expectedVersion: number | undefined,
    observed: ObservedJobState,
    options?: ErrorOptions,
  ) {
    const step = stepIndex === undefined ? '' : ` step ${stepIndex}`;
    const seen = `found version ${observed.version ?? '?'}, nextStep ${observed.nextStep ?? '?'}, status ${observed.status ?? '?'}`;
    super(
      'StaleCheckpointError',
      'stale-checkpoint',
      `stale checkpoint for job ${jobId}${step} at expected version ${expectedVersion ?? '-'}: ${seen}`,
      options,
    );
    this.jobId = jobId;
    this.stepIndex = stepIndex;
    this.expectedVersion = expectedVersion;
    this.observed = observed;
  }
}

/** The status change is not in `LEGAL_TRANSITIONS` (or not from the statuses the caller allowed). */
export class IllegalTransitionError extends LedgerError {
  readonly jobId: string;
  readonly from: JobStatus;
  readonly to: JobStatus;
  constructor(jobId: string, from: JobStatus, to: JobStatus, options?: ErrorOptions) {
    super(
      'IllegalTransitionError',
      'illegal-transition',
      `job ${jobId} cannot go from ${from} to ${to}`,
      options,
    );
    this.jobId = jobId;
    this.from = from;
    this.to = to;
  }
}

/** DynamoDB throttled, failed (5xx) or could not be reached. Retryable with backoff. */
export class LedgerUnavailableError extends LedgerError {
  readonly operation: string;
  constructor(operation: string, message: string, options?: ErrorOptions) {
    super(
      'LedgerUnavailableError',
      'ledger-unavailable',
      `ledger unavailable during ${operation}: ${message}`,
      {
        ...options,
        retryable: true,
      },
    );
    this.operation = operation;
  }
}
