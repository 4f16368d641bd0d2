import { ApiError } from '../errors.ts';

/** Errors of the webhook use case. */

/** 401 for a delivery whose signature or timestamp does not check out. */
export class WebhookSignatureError extends ApiError {
  /** What was wrong with it: `missing`, `malformed`, `stale` or `mismatch` (also in `details`). */
  readonly check: string;
  constructor(check: string, message: string, options?: ErrorOptions) {
    super('WebhookSignatureError', 401, 'invalid_signature', message, {
      ...options,
      details: { reason: check },
    });
    this.check = check;
  }
}
