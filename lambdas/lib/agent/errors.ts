import { BelayError } from '../errors.ts';
import type { ModelCall } from './policy.ts';

/**
 * A model call that failed after the provider answered: who answered and the tokens it counted
 * (they are paid for, so they reach the ledger as a `model-call-failed` entry).
 */
export interface PaidFailure {
  readonly usage: ModelCall | undefined;
}

/** The model answered with no usable action (text, an unknown tool, arguments that do not parse). */
export class NoActionChosenError extends BelayError implements PaidFailure {
  readonly usage: ModelCall | undefined;
  constructor(model: string, detail: string, options?: ErrorOptions & { usage?: ModelCall }) {
    super('NoActionChosenError', 'no-action-chosen', `${model} chose no action: ${detail}`, options);
    this.usage = options?.usage;
  }
}

/** The model gave no usable answer to an agent probe (text, or arguments that do not parse): the probe says `unknown`. */
export class NoProbeAnswerError extends BelayError implements PaidFailure {
  readonly usage: ModelCall | undefined;
  constructor(model: string, detail: string, options?: ErrorOptions & { usage?: ModelCall }) {
    super(
      'NoProbeAnswerError',
      'no-probe-answer',
      `${model} gave no answer to the probe: ${detail}`,
      options,
    );
    this.usage = options?.usage;
  }
}

/** The model could not be reached, refused the call or throttled it past its retries. */
export class ModelCallError extends BelayError implements PaidFailure {
  readonly model: string;
  readonly status: number | undefined;
  /** The tokens the provider counted before the call failed, when its answer said. */
  readonly usage: ModelCall | undefined;
  constructor(
    model: string,
    detail: string,
    status: number | undefined,
    retryable: boolean,
    options?: ErrorOptions & { usage?: ModelCall },
  ) {
    super('ModelCallError', 'model-call-failed', `${model}: ${detail}`, { ...options, retryable });
    this.model = model;
    this.status = status;
    this.usage = options?.usage;
  }
}

/** The tokens a failed call was charged, if the provider counted any. */
export function paidUsage(err: unknown): ModelCall | undefined {
  if (
    err instanceof NoActionChosenError ||
    err instanceof NoProbeAnswerError ||
    err instanceof ModelCallError
  )
    return err.usage;
  return undefined;
}

/** A recorded action's target no longer resolves to exactly one element, and healing did not find one. */
export class TargetNotFoundError extends BelayError {
  constructor(detail: string, options?: ErrorOptions) {
    super('TargetNotFoundError', 'target-not-found', detail, options);
  }
}

/**
 * A cached action did not resolve after an earlier action of the same write step (a click, a
 * key, a navigation) may already have sent the write: nothing is healed on a page that may
 * show a committed write. The step's write is uncertain, for the probe (Reconcile) to settle.
 */
export class HealAfterWriteError extends BelayError {
  constructor(step: string, action: string, options?: ErrorOptions) {
    super(
      'HealAfterWriteError',
      'heal-after-write',
      `${step}: ${action} does not resolve after the write may have been sent; not healed`,
      options,
    );
  }
}

/**
 * What an action set off did not settle in time: a request it sent was still unanswered, or the
 * page it navigated to did not load. The action's effect is unknown, so nothing more is done on
 * that page: in a write, the write is uncertain (its probe decides).
 */
export class PageNotSettledError extends BelayError {
  constructor(detail: string, options?: ErrorOptions) {
    super('PageNotSettledError', 'page-not-settled', detail, options);
  }
}

/**
 * The engine refused a request an action sent (a second committing request in a step that commits
 * once, or one off the job's domains): the step stops there; in a write, the write is uncertain.
 */
export class RequestRefusedError extends BelayError {
  constructor(detail: string, options?: ErrorOptions) {
    super('RequestRefusedError', 'request-refused', detail, options);
  }
}
