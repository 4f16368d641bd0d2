import { BelayError } from '../errors.ts';

/** The model answered with no usable action (text, an unknown tool, arguments that do not parse). */
export class NoActionChosenError extends BelayError {
  constructor(model: string, detail: string, options?: ErrorOptions) {
    super('NoActionChosenError', 'no-action-chosen', `${model} chose no action: ${detail}`, options);
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
