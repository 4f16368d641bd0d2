/**
 * The one base of Belay's named errors. Each module keeps its own `errors.ts` whose classes
 * extend it; code recognises an error with `instanceof` (or by these fields), never by
 * matching its name. The `name` is still set explicitly on every error: it is what the state
 * machine's `Retry`/`Catch` `ErrorEquals` match (a Lambda error crosses into Step Functions
 * as its name), and it survives minification, which a class's own name does not.
 */

export interface BelayErrorOptions extends ErrorOptions {
  /** Trying the same thing again may succeed (a throttled or unreachable service). Default false. */
  retryable?: boolean;
}

export class BelayError extends Error {
  /** Stable and machine-readable: what a failed job records as its reason, what a 4xx says as its code. */
  readonly reason: string;
  /** Trying the same thing again may succeed. */
  readonly retryable: boolean;

  /**
   * @param name the error's name, exactly as the state machine's `ErrorEquals` spells it
   * @param reason a stable kebab-case reason (`account-revoked`)
   * @example
   * class DeadlineExceededError extends BelayError {
   *   constructor(deadline: string) {
   *     super('DeadlineExceededError', 'deadline-exceeded', `the job's deadline ${deadline} has passed`);
   *   }
   * }
   */
  constructor(name: string, reason: string, message: string, options: BelayErrorOptions = {}) {
    const { retryable = false, ...errorOptions } = options;
    super(message, errorOptions);
    this.name = name;
    this.reason = reason;
    this.retryable = retryable;
  }
}
