import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { LedgerError, LedgerUnavailableError } from './errors.ts';
import { type JobSnapshot, snapshotFromRaw } from './items.ts';

/**
 * The one place where DynamoDB SDK errors become ledger errors. A refused condition is
 * explained by the operation (it knows what it asked for) from the item DynamoDB returned
 * with `ReturnValuesOnConditionCheckFailure: ALL_OLD`; throttling, 5xx and network
 * failures become the retryable `LedgerUnavailableError`; other SDK errors become
 * `LedgerError` with the SDK error as `cause`. Errors that are not SDK errors pass through.
 */

export interface TranslateContext {
  /** Name of the ledger operation, for messages. */
  operation: string;
  /**
   * Explains why a conditional write on the item at `index` (0 for a single-item write, the
   * position in the transaction otherwise) was refused, given what the job item held then.
   */
  onConditionFailed?: (snapshot: JobSnapshot | undefined, index: number) => Error;
}

interface SdkLikeError {
  name?: string;
  message?: string;
  code?: string;
  $retryable?: unknown;
  $metadata?: { httpStatusCode?: number };
  Item?: Record<string, AttributeValue>;
  CancellationReasons?: { Code?: string; Message?: string; Item?: Record<string, AttributeValue> }[];
}

const RETRYABLE_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'TransactionInProgressException',
  'TransactionConflictException',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
]);

/** Codes of transaction cancellation reasons that a retry may get past. */
const RETRYABLE_REASONS = new Set([
  'TransactionConflict',
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
  'RequestLimitExceeded',
]);

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** Was a transaction cancelled only because another transaction held one of its items? Worth an immediate retry. */
export function isTransactionConflict(err: unknown): boolean {
  const e = err as SdkLikeError;
  if (e?.name === 'TransactionConflictException') return true;
  if (e?.name !== 'TransactionCanceledException') return false;
  const codes = (e.CancellationReasons ?? []).map((r) => r.Code ?? 'None').filter((c) => c !== 'None');
  return codes.length > 0 && codes.every((c) => c === 'TransactionConflict');
}

/** Translates an error thrown by a DynamoDB call made for `context.operation`. */
export function translateError(err: unknown, context: TranslateContext): Error {
  if (err instanceof LedgerError) return err;
  const e = err as SdkLikeError;
  const { operation } = context;
  const explain = (snapshot: JobSnapshot | undefined, index: number): Error =>
    context.onConditionFailed?.(snapshot, index) ??
    new LedgerError(`${operation}: conditional write refused`, { cause: err });

  if (e?.name === 'ConditionalCheckFailedException') {
    return withCause(explain(snapshotFromRaw(e.Item), 0), err);
  }
  if (e?.name === 'TransactionCanceledException') {
    const reasons = e.CancellationReasons ?? [];
    const failed = reasons.findIndex((r) => r.Code === 'ConditionalCheckFailed');
    if (failed >= 0) return withCause(explain(snapshotFromRaw(reasons[failed]?.Item), failed), err);
    const codes = reasons.map((r) => r.Code ?? 'None').filter((c) => c !== 'None');
    if (codes.some((c) => RETRYABLE_REASONS.has(c))) {
      return new LedgerUnavailableError(operation, `transaction cancelled (${codes.join(', ')})`, {
        cause: err,
      });
    }
    return new LedgerError(`${operation}: transaction cancelled (${codes.join(', ') || 'no reason given'})`, {
      cause: err,
    });
  }
  if (isRetryable(e)) {
    return new LedgerUnavailableError(operation, e.message || e.name || e.code || 'unknown failure', {
      cause: err,
    });
  }
  if (e?.$metadata !== undefined) {
    return new LedgerError(`${operation}: ${e.name ?? 'DynamoDB error'}: ${e.message ?? ''}`, { cause: err });
  }
  return err instanceof Error ? err : new LedgerError(`${operation}: ${String(err)}`, { cause: err });
}

function isRetryable(e: SdkLikeError | undefined): boolean {
  if (!e) return false;
  if (e.name !== undefined && RETRYABLE_NAMES.has(e.name)) return true;
  if (e.code !== undefined && NETWORK_CODES.has(e.code)) return true;
  if (e.$retryable !== undefined && e.$retryable !== null && e.$retryable !== false) return true;
  const status = e.$metadata?.httpStatusCode;
  return status !== undefined && status >= 500;
}

function withCause(error: Error, cause: unknown): Error {
  if (error.cause === undefined) Object.defineProperty(error, 'cause', { value: cause, configurable: true });
  return error;
}
