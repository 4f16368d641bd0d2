/**
 * Named errors of the local Step Functions runner.
 *
 * Two families: API errors, whose `name` is the AWS error code the SDK surfaces (the HTTP endpoint
 * answers them as `{ "__type": name, "message": ... }` with status 400), and task errors, thrown into
 * the interpreter, whose `name` is what `Retry`/`Catch` `ErrorEquals` match.
 */

/** Base of the errors the Step Functions API answers with (400, `__type` = `name`). */
export abstract class SfnApiError extends Error {
  /** HTTP status the endpoint answers with. */
  readonly statusCode: number = 400;
}

/** `StartExecution` with a name in use (running with other input, or already closed). */
export class ExecutionAlreadyExistsError extends SfnApiError {
  constructor(
    readonly executionName: string,
    options?: ErrorOptions,
  ) {
    super(`Execution Already Exists: '${executionName}'`, options);
    this.name = 'ExecutionAlreadyExists';
  }
}

/** An execution ARN the runner does not know. */
export class ExecutionDoesNotExistError extends SfnApiError {
  constructor(
    readonly executionArn: string,
    options?: ErrorOptions,
  ) {
    super(`Execution Does Not Exist: '${executionArn}'`, options);
    this.name = 'ExecutionDoesNotExist';
  }
}

/** A state machine ARN other than the runner's own. */
export class StateMachineDoesNotExistError extends SfnApiError {
  constructor(
    readonly stateMachineArn: string,
    options?: ErrorOptions,
  ) {
    super(`State Machine Does Not Exist: '${stateMachineArn}'`, options);
    this.name = 'StateMachineDoesNotExist';
  }
}

/** A well-formed task token this runner never issued (for example one from before a restart). */
export class TaskDoesNotExistError extends SfnApiError {
  constructor(options?: ErrorOptions) {
    super('Task Does Not Exist', options);
    this.name = 'TaskDoesNotExist';
  }
}

/** A task token that is not one this runner could have issued. */
export class InvalidTokenError extends SfnApiError {
  constructor(options?: ErrorOptions) {
    super('Invalid Token', options);
    this.name = 'InvalidToken';
  }
}

/** A task token whose task is no longer waiting (answered, timed out, or its execution ended). */
export class TaskTimedOutError extends SfnApiError {
  constructor(options?: ErrorOptions) {
    super("Task Timed Out: 'Provided task does not exist anymore'", options);
    this.name = 'TaskTimedOut';
  }
}

/** An execution name that breaks the AWS naming rules. */
export class InvalidNameError extends SfnApiError {
  constructor(
    readonly executionName: string,
    options?: ErrorOptions,
  ) {
    super(`Invalid Name: '${executionName}'`, options);
    this.name = 'InvalidName';
  }
}

/** Execution input that is not JSON. */
export class InvalidExecutionInputError extends SfnApiError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InvalidExecutionInput';
  }
}

/** `SendTaskSuccess` output that is not JSON. */
export class InvalidOutputError extends SfnApiError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InvalidOutput';
  }
}

/** A malformed ARN, or a request the endpoint cannot parse. */
export class ValidationError extends SfnApiError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ValidationException';
  }
}

/** A `${Name}` placeholder left in the definition with no substitution for it. */
export class UnresolvedSubstitutionError extends Error {
  constructor(
    readonly placeholders: string[],
    options?: ErrorOptions,
  ) {
    super(`No substitution for ${placeholders.map((p) => '${' + p + '}').join(', ')}`, options);
    this.name = 'UnresolvedSubstitutionError';
  }
}

/** A Task `Resource` the runner cannot execute locally (only Lambda resources are supported). */
export class UnsupportedTaskResourceError extends Error {
  constructor(
    readonly stateName: string,
    readonly resource: string,
    options?: ErrorOptions,
  ) {
    super(`State '${stateName}': unsupported Task resource '${resource}'`, options);
    this.name = 'UnsupportedTaskResourceError';
  }
}

/**
 * A task failure as the interpreter sees it: `name` is the error Step Functions matches on,
 * `message` is the `Cause` string (for Lambda errors the JSON AWS puts there).
 */
export class TaskFailedError extends Error {
  constructor(errorName: string, cause: string) {
    super(cause);
    this.name = errorName;
  }
}

/** `States.HeartbeatTimeout`: a callback task got no heartbeat within `HeartbeatSeconds`. */
export class HeartbeatTimeoutError extends Error {
  constructor(heartbeatSeconds: number) {
    super(`No heartbeat within ${heartbeatSeconds} seconds`);
    this.name = 'States.HeartbeatTimeout';
  }
}

/** `States.Runtime`: a definition/data error; like AWS, neither retried nor caught. */
export class StatesRuntimeError extends Error {
  readonly isRetryable = false;
  readonly isCatchable = false;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'States.Runtime';
  }
}

/**
 * `States.DataLimitExceeded`: a state's input, output or a task's result is over 256 KiB. A
 * terminal error: `States.ALL` neither retries nor catches it (AWS lets a Catch that names it
 * explicitly catch it; the interpreter cannot tell the two apart, so locally nothing does).
 */
export class DataLimitExceededError extends Error {
  readonly isRetryable = false;
  readonly isCatchable = false;
  constructor(message: string) {
    super(message);
    this.name = 'States.DataLimitExceeded';
  }
}

/** Unblocks a task of a stopped execution; neither retried nor caught, so the interpreter unwinds. */
export class ExecutionStoppedError extends Error {
  readonly isRetryable = false;
  readonly isCatchable = false;
  constructor(readonly executionArn: string) {
    super(`Execution stopped: ${executionArn}`);
    this.name = 'ExecutionStoppedError';
  }
}

/** `waitForExecution` gave up before the execution closed. */
export class ExecutionWaitTimeoutError extends Error {
  constructor(
    readonly executionArn: string,
    readonly timeoutMs: number,
    options?: ErrorOptions,
  ) {
    super(`Execution still running after ${timeoutMs} ms: ${executionArn}`, options);
    this.name = 'ExecutionWaitTimeoutError';
  }
}
