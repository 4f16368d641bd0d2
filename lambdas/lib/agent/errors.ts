import { BelayError } from '../errors.ts';

/** The model answered with no usable action (text, an unknown tool, arguments that do not parse). */
export class NoActionChosenError extends BelayError {
  constructor(model: string, detail: string, options?: ErrorOptions) {
    super('NoActionChosenError', 'no-action-chosen', `${model} chose no action: ${detail}`, options);
  }
}

/** The model gave no usable answer to an agent probe (text, or arguments that do not parse): the probe says `unknown`. */
export class NoProbeAnswerError extends BelayError {
  constructor(model: string, detail: string, options?: ErrorOptions) {
    super(
      'NoProbeAnswerError',
      'no-probe-answer',
      `${model} gave no answer to the probe: ${detail}`,
      options,
    );
  }
}

/** The model could not be reached, refused the call or throttled it past its retries. */
export class ModelCallError extends BelayError {
  readonly model: string;
  readonly status: number | undefined;
  constructor(
    model: string,
    detail: string,
    status: number | undefined,
    retryable: boolean,
    options?: ErrorOptions,
  ) {
    super('ModelCallError', 'model-call-failed', `${model}: ${detail}`, { ...options, retryable });
    this.model = model;
    this.status = status;
  }
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
