/** Errors of the local event bus, named as EventBridge's API names them. */
import { BelayError } from '../../lambdas/lib/errors.ts';

/** A PutEvents call EventBridge refuses as a whole: its `name` is the API's error code. */
export class BusApiError extends BelayError {
  constructor(
    code: 'ThrottlingException' | 'InternalException' | 'ValidationException' | 'ResourceNotFoundException',
    readonly statusCode: number,
    message: string,
  ) {
    super(code, 'event-bus', message, { retryable: statusCode >= 500 || code === 'ThrottlingException' });
  }
}
