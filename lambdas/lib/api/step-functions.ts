import type { SFNClient } from '@aws-sdk/client-sfn';
import {
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  InvalidToken,
  SendTaskFailureCommand,
  SendTaskSuccessCommand,
  StartExecutionCommand,
  StopExecutionCommand,
  TaskDoesNotExist,
  TaskTimedOut,
} from '../aws/sdk/client-sfn.ts';
import { type ExecutionInput, executionName } from '../engine/executions.ts';
import type { JobIdentity } from '../engine/job-identity.ts';
import { ServiceUnavailableError } from './errors.ts';

/**
 * The API's four Step Functions calls, with the SDK's errors translated: the ones that mean
 * "already done" (an execution that exists, a token already used or timed out, an execution
 * already stopped) are outcomes, not failures; throttling and outages are 503s.
 */

/** The task was already answered, timed out, or its token is not one Step Functions knows. */
const isTaskDone = (err: unknown): boolean =>
  err instanceof TaskDoesNotExist || err instanceof TaskTimedOut || err instanceof InvalidToken;
const UNAVAILABLE = new Set([
  'ThrottlingException',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'InternalServerError',
  'InternalFailure',
  'ExecutionLimitExceeded',
  'TimeoutError',
]);

function translate(err: unknown, operation: string): Error {
  const e = err as { name?: string; code?: string; $fault?: string; $retryable?: unknown } | undefined;
  const network = e?.code === 'ECONNREFUSED' || e?.code === 'ECONNRESET' || e?.code === 'ETIMEDOUT';
  if (network || UNAVAILABLE.has(e?.name ?? '') || e?.$fault === 'server' || e?.$retryable) {
    return new ServiceUnavailableError(`Step Functions ${operation} failed`, { cause: err });
  }
  return err instanceof Error ? err : new Error(String(err));
}

/** The ARN of an execution of the state machine, from the machine's ARN and the execution's name. */
export function executionArn(stateMachineArn: string, name: string): string {
  return `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
}

/**
 * Starts the job's first execution (generation 0). An execution of that name that already
 * exists is this job's (names are derived from its tenant, id and incarnation): `started: false`.
 */
export async function startJobExecution(
  sfn: SFNClient,
  stateMachineArn: string,
  job: JobIdentity,
): Promise<{ name: string; started: boolean }> {
  const name = executionName(job, 0);
  const input: ExecutionInput = { tenantId: job.tenantId, jobId: job.jobId };
  try {
    await sfn.send(new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) }));
    return { name, started: true };
  } catch (err) {
    if (err instanceof ExecutionAlreadyExists) return { name, started: false };
    throw translate(err, 'StartExecution');
  }
}

/** Resumes a waiting task with `output`; `false` when the token was already used or has timed out. */
export async function sendTaskSuccess(sfn: SFNClient, taskToken: string, output: unknown): Promise<boolean> {
  try {
    await sfn.send(new SendTaskSuccessCommand({ taskToken, output: JSON.stringify(output) }));
    return true;
  } catch (err) {
    if (isTaskDone(err)) return false;
    throw translate(err, 'SendTaskSuccess');
  }
}

/** Fails a waiting task with a named error (the state machine's Catch sees `error`); `false` when already done. */
export async function sendTaskFailure(
  sfn: SFNClient,
  taskToken: string,
  error: string,
  cause: string,
): Promise<boolean> {
  try {
    await sfn.send(new SendTaskFailureCommand({ taskToken, error, cause: cause.slice(0, 32_000) }));
    return true;
  } catch (err) {
    if (isTaskDone(err)) return false;
    throw translate(err, 'SendTaskFailure');
  }
}

/** Stops an execution; one that does not exist (or has ended) is fine: `false`. */
export async function stopExecution(
  sfn: SFNClient,
  stateMachineArn: string,
  name: string,
  error: string,
  cause: string,
): Promise<boolean> {
  try {
    await sfn.send(
      new StopExecutionCommand({ executionArn: executionArn(stateMachineArn, name), error, cause }),
    );
    return true;
  } catch (err) {
    if (err instanceof ExecutionDoesNotExist) return false;
    throw translate(err, 'StopExecution');
  }
}
