/**
 * Types shared by the local Step Functions runner, its HTTP endpoint and the local Lambda runner.
 */

/** What an invocation may be told by the caller. */
export interface InvokeOptions {
  /** How long the calling Task state will wait for this invocation (its TimeoutSeconds, in ms). */
  timeoutMs: number;
  /** Aborted when the caller stops waiting (task timed out, execution stopped). */
  signal: AbortSignal;
}

/**
 * Invokes a Lambda function by name or ARN with a JSON payload and resolves with its JSON result.
 * A rejection's `name` is the error Step Functions matches on (`Lambda.Unknown`, the handler's own
 * error type, ...); optional `errorType`/`trace` fields go into the `Cause` JSON as AWS does.
 */
export type InvokeFn = (functionArn: string, payload: unknown, opts: InvokeOptions) => Promise<unknown>;

/** Status of an execution, as `DescribeExecution` reports it. */
export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';

/** The history event types the local runner records (a subset of AWS's `HistoryEventType`). */
export type HistoryEventType =
  | 'ExecutionStarted'
  | 'ExecutionSucceeded'
  | 'ExecutionFailed'
  | 'ExecutionAborted'
  | 'ExecutionTimedOut'
  | `${StateType}StateEntered`
  | `${StateType}StateExited`
  | 'LambdaFunctionScheduled'
  | 'LambdaFunctionStarted'
  | 'LambdaFunctionSucceeded'
  | 'LambdaFunctionFailed'
  | 'LambdaFunctionTimedOut'
  | 'TaskScheduled'
  | 'TaskStarted'
  | 'TaskSubmitted'
  | 'TaskSucceeded'
  | 'TaskFailed'
  | 'TaskTimedOut';

/** ASL state types. */
export type StateType = 'Task' | 'Pass' | 'Choice' | 'Wait' | 'Succeed' | 'Fail' | 'Parallel' | 'Map';

interface ErrorDetails {
  error?: string;
  cause?: string;
}

interface TaskResourceDetails {
  resourceType: string;
  resource: string;
}

/**
 * One history event, shaped like the SDK's `HistoryEvent` (details under the same keys; inputs and
 * outputs as JSON text), plus the execution it belongs to.
 */
export interface HistoryEvent {
  id: number;
  previousEventId: number;
  timestamp: Date;
  type: HistoryEventType;
  executionArn: string;
  executionStartedEventDetails?: { input: string; roleArn: string; stateMachineArn: string };
  executionSucceededEventDetails?: { output: string };
  executionFailedEventDetails?: ErrorDetails;
  executionAbortedEventDetails?: ErrorDetails;
  executionTimedOutEventDetails?: ErrorDetails;
  stateEnteredEventDetails?: { name: string; input: string };
  stateExitedEventDetails?: { name: string; output: string };
  lambdaFunctionScheduledEventDetails?: { resource: string; input: string; timeoutInSeconds?: number };
  lambdaFunctionSucceededEventDetails?: { output: string };
  lambdaFunctionFailedEventDetails?: ErrorDetails;
  lambdaFunctionTimedOutEventDetails?: ErrorDetails;
  taskScheduledEventDetails?: TaskResourceDetails & {
    region: string;
    parameters: string;
    timeoutInSeconds?: number;
    heartbeatInSeconds?: number;
  };
  taskStartedEventDetails?: TaskResourceDetails;
  taskSubmittedEventDetails?: TaskResourceDetails & { output: string };
  taskSucceededEventDetails?: TaskResourceDetails & { output: string };
  taskFailedEventDetails?: TaskResourceDetails & ErrorDetails;
  taskTimedOutEventDetails?: TaskResourceDetails & ErrorDetails;
}

/** `DescribeExecution`'s answer. */
export interface ExecutionDescription {
  executionArn: string;
  stateMachineArn: string;
  name: string;
  status: ExecutionStatus;
  startDate: Date;
  stopDate?: Date;
  /** JSON text. */
  input: string;
  /** JSON text, once SUCCEEDED. */
  output?: string;
  error?: string;
  cause?: string;
}

/** One row of `ListExecutions`. */
export interface ExecutionListItem {
  executionArn: string;
  stateMachineArn: string;
  name: string;
  status: ExecutionStatus;
  startDate: Date;
  stopDate?: Date;
}
