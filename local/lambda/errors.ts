/**
 * Named errors of the local Lambda runner. An invocation rejects with an error whose `name` is what
 * Step Functions matches in `Retry`/`Catch`: the handler's own error type, or `Lambda.*`.
 */

/** Why a worker process died under an invocation. */
export type ExitReason = 'killed' | 'crashed' | 'timeout' | 'init-timeout' | 'fault' | 'stopped';

/**
 * The worker process died (SIGKILL, crash, OOM, timeout kill): what Step Functions reports as
 * `Lambda.Unknown` for a Lambda whose runtime exited ("Unhandled errors in Lambda are reported as
 * Lambda.Unknown ... These include out-of-memory errors and function timeouts").
 */
export class LambdaUnknownError extends Error {
  /** Lambda's own error type, for the `Cause` JSON (`Runtime.ExitError`, `Sandbox.Timedout`). */
  readonly errorType: string;
  constructor(
    readonly functionName: string,
    readonly requestId: string,
    readonly reason: ExitReason,
    readonly pid: number | undefined,
    detail: string,
    options?: ErrorOptions & { errorName?: string },
  ) {
    super(`RequestId: ${requestId} Error: ${detail}`, options);
    this.name = options?.errorName ?? 'Lambda.Unknown';
    this.errorType = reason === 'timeout' ? 'Sandbox.Timedout' : 'Runtime.ExitError';
  }
}

/** The handler threw: `name` is its error type (what the ASL's Retry/Catch name). */
export class LambdaFunctionError extends Error {
  constructor(
    readonly functionName: string,
    readonly requestId: string,
    readonly errorType: string,
    errorMessage: string,
    readonly trace: string[],
  ) {
    super(errorMessage);
    this.name = errorType;
  }
}

/** No function with that name or ARN is configured. */
export class FunctionNotFoundError extends Error {
  constructor(readonly functionName: string) {
    super(`Function not found: ${functionName}`);
    this.name = 'Lambda.ResourceNotFoundException';
  }
}

/** More concurrent invocations of a function than its `maxConcurrency`. */
export class TooManyRequestsError extends Error {
  constructor(readonly functionName: string) {
    super(`Rate Exceeded: ${functionName} is at its concurrency limit`);
    this.name = 'Lambda.TooManyRequestsException';
  }
}

/** The caller aborted before the invocation started. */
export class InvocationAbortedError extends Error {
  constructor(readonly functionName: string) {
    super(`Invocation of ${functionName} aborted by the caller`);
    this.name = 'AbortError';
  }
}

/** `invoke` after `stop()`. */
export class LambdaRunnerStoppedError extends Error {
  constructor() {
    super('The local Lambda runner is stopped');
    this.name = 'LambdaRunnerStoppedError';
  }
}

/** Lambda's Node (`lambda-node.ts`) could not be had on this machine. */
export class LambdaNodeUnavailableError extends Error {
  constructor(
    readonly version: string,
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`Lambda's Node ${version} is not available: ${reason}`, options);
    this.name = 'LambdaNodeUnavailableError';
  }
}
