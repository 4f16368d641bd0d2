import { SessionUnavailableError } from '../browser/errors.ts';
import { BelayError } from '../errors.ts';
import {
  IllegalTransitionError,
  JobNotFoundError,
  LedgerUnavailableError,
  StaleCheckpointError,
} from '../ledger/errors.ts';

/**
 * Engine errors. Their names are what the state machine's Retry/Catch match on. But for
 * InvocationTimeoutError (retried as a timed-out worker), none is retried by the state
 * machine: each ends the job through RecordFailure with the reason it carries.
 */

/**
 * An engine task's invocation reached its Lambda timeout before it ended (middy answers just
 * before the deadline, so the error is this one, not Lambda's own `Sandbox.Timedout`). The
 * state machine retries it as it retries a timed-out or killed worker: the next attempt starts
 * from the ledger, and a write left open goes through its probe, never blindly again.
 */
export class InvocationTimeoutError extends BelayError {
  constructor(readonly fn: string) {
    super(
      'InvocationTimeoutError',
      'invocation-timeout',
      `the ${fn} invocation reached its timeout before it ended; the state machine tries it again`,
      { retryable: true },
    );
  }
}

/** The job waited in the queue longer than `maxQueueSeconds`: its tenant's cap never freed a slot for it. */
export class QueueTimeoutError extends BelayError {
  constructor(queuedForSeconds: number, maxQueueSeconds: number) {
    super(
      'QueueTimeoutError',
      'queue-timeout',
      `the job waited ${Math.round(queuedForSeconds)} s in the queue (at most ${maxQueueSeconds} s): no browser slot freed for it; raise the plan's cap or submit fewer jobs at once`,
    );
  }
}

/** The job names an account the tenant no longer has (revoked, or never theirs). */
export class AccountRevokedError extends BelayError {
  constructor(
    readonly application: string,
    readonly accountId: string,
    options?: ErrorOptions,
  ) {
    super(
      'AccountRevokedError',
      'account-revoked',
      `account ${accountId} for ${application} is not connected to this tenant`,
      options,
    );
  }
}

/** The job spent its retry budget on step failures. */
export class RetryBudgetExhaustedError extends BelayError {
  constructor(
    readonly step: string,
    readonly retriesUsed: number,
    detail: string,
    options?: ErrorOptions,
  ) {
    super(
      'RetryBudgetExhaustedError',
      'retry-budget-exhausted',
      `step ${step} failed and the retry budget (${retriesUsed}) is spent: ${detail}`,
      options,
    );
  }
}

/** The finish check did not find a write's effect in its application. */
export class OutcomeNotVerifiedError extends BelayError {
  constructor(
    readonly step: string,
    detail: string,
    options?: ErrorOptions,
  ) {
    super(
      'OutcomeNotVerifiedError',
      'outcome-not-verified',
      `the effect of step ${step} could not be verified in its application: ${detail}`,
      options,
    );
  }
}

/** The job's configuration cannot run (an application with no endpoint, a step for an app without an account). */
export class JobConfigurationError extends BelayError {
  constructor(message: string, options?: ErrorOptions) {
    super('JobConfigurationError', 'misconfigured', message, options);
  }
}

/** The job's deadline passed. */
export class DeadlineExceededError extends BelayError {
  constructor(
    readonly deadline: string,
    options?: ErrorOptions,
  ) {
    super('DeadlineExceededError', 'deadline-exceeded', `the job's deadline ${deadline} has passed`, options);
  }
}

/**
 * A drift check found a step that is not as the playbook expects (its page changed, its sign-in
 * fails, its action sends a write): the check ends FAILED with the finding (`step-checked`).
 */
export class DriftFoundError extends BelayError {
  constructor(
    readonly step: string,
    readonly finding: string,
    detail: string,
    options?: ErrorOptions,
  ) {
    super('DriftFoundError', 'drift-found', `step ${step}: ${finding}: ${detail}`, options);
  }
}

/**
 * Errors with a meaning of their own (ledger conflicts, revoked accounts, budgets) go to the
 * state machine as they are (its `Retry`/`Catch` match their names); anything else thrown during
 * a step is the page misbehaving, which RunStep classifies from what the page shows.
 */
const STATE_MACHINE_ERRORS = [
  StaleCheckpointError,
  LedgerUnavailableError,
  JobNotFoundError,
  IllegalTransitionError,
  AccountRevokedError,
  RetryBudgetExhaustedError,
  SessionUnavailableError,
  DeadlineExceededError,
  JobConfigurationError,
  DriftFoundError,
];

export function isStateMachineError(err: unknown): boolean {
  return STATE_MACHINE_ERRORS.some((kind) => err instanceof kind);
}
