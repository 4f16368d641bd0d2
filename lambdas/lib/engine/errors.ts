/**
 * Engine errors. Their names are what the state machine's Retry/Catch match on: none of
 * these is retried by the state machine; each ends the job through RecordFailure with the
 * reason it carries.
 */

/** The job waited in the queue longer than `maxQueueSeconds`: its tenant's cap never freed a slot for it. */
export class QueueTimeoutError extends Error {
  readonly reason = 'queue-timeout';
  constructor(queuedForSeconds: number, maxQueueSeconds: number) {
    super(
      `the job waited ${Math.round(queuedForSeconds)} s in the queue (at most ${maxQueueSeconds} s): no browser slot freed for it; raise the plan's cap or submit fewer jobs at once`,
    );
    this.name = 'QueueTimeoutError';
  }
}

/** The job names an account the tenant no longer has (revoked, or never theirs). */
export class AccountRevokedError extends Error {
  readonly reason = 'account-revoked';
  constructor(
    readonly application: string,
    readonly accountId: string,
    options?: ErrorOptions,
  ) {
    super(`account ${accountId} for ${application} is not connected to this tenant`, options);
    this.name = 'AccountRevokedError';
  }
}

/** The job spent its retry budget on step failures. */
export class RetryBudgetExhaustedError extends Error {
  readonly reason = 'retry-budget-exhausted';
  constructor(
    readonly step: string,
    readonly retriesUsed: number,
    detail: string,
    options?: ErrorOptions,
  ) {
    super(`step ${step} failed and the retry budget (${retriesUsed}) is spent: ${detail}`, options);
    this.name = 'RetryBudgetExhaustedError';
  }
}

/** The finish check did not find a write's effect in its application. */
export class OutcomeNotVerifiedError extends Error {
  readonly reason = 'outcome-not-verified';
  constructor(
    readonly step: string,
    detail: string,
    options?: ErrorOptions,
  ) {
    super(`the effect of step ${step} could not be verified in its application: ${detail}`, options);
    this.name = 'OutcomeNotVerifiedError';
  }
}

/** The job's configuration cannot run (an application with no endpoint, a step for an app without an account). */
export class JobConfigurationError extends Error {
  readonly reason = 'misconfigured';
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'JobConfigurationError';
  }
}

/** The job's deadline passed. */
export class DeadlineExceededError extends Error {
  readonly reason = 'deadline-exceeded';
  constructor(
    readonly deadline: string,
    options?: ErrorOptions,
  ) {
    super(`the job's deadline ${deadline} has passed`, options);
    this.name = 'DeadlineExceededError';
  }
}
