/**
 * Executes one attempt of a Lambda Task state: invoke, optional task-token wait, timeouts, and the
 * history events AWS records for it.
 */
import { randomUUID } from 'node:crypto';
import type { TaskStateInfo } from './definition.ts';
import {
  DataLimitExceededError,
  ExecutionStoppedError,
  HeartbeatTimeoutError,
  StatesRuntimeError,
  TaskFailedError,
} from './errors.ts';
import type { ExecutionHistory } from './history.ts';
import { MAX_PAYLOAD_BYTES, payloadBytes } from './limits.ts';
import { type LongTimer, nextMacrotask, setLongTimeout } from './timers.ts';
import type { TaskTokens } from './tokens.ts';
import type { InvokeFn } from './types.ts';

/** What a task attempt needs from its execution. */
export interface TaskContext {
  executionArn: string;
  region: string;
  history: ExecutionHistory;
  tokens: TaskTokens;
  invoke: InvokeFn;
  /** Aborted when the execution ends or is stopped. */
  signal: AbortSignal;
  /** Timeout for Tasks without `TimeoutSeconds` (AWS: none, i.e. 99999999 s). */
  defaultTaskTimeoutSeconds: number;
  /** Makes a genuine interpreter `States.Timeout` error. */
  timeoutError(message: string): Error;
}

/** Reads a reference path (`$`, `$.a.b`, `$.a[0]`, `$['a']`) from a value. */
export function readReferencePath(path: string, value: unknown): unknown {
  if (!path.startsWith('$')) throw new StatesRuntimeError(`Invalid reference path '${path}'`);
  const parts = [...path.slice(1).matchAll(/\.([^.[\]]+)|\[(\d+)\]|\['([^']*)'\]/g)];
  let current: unknown = value;
  for (const m of parts) {
    const key = m[1] ?? m[3] ?? Number(m[2]);
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

function secondsOf(fixed: number | undefined, path: string | undefined, input: unknown): number | undefined {
  if (fixed !== undefined) return fixed;
  if (path === undefined) return undefined;
  const v = readReferencePath(path, input);
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) {
    throw new StatesRuntimeError(`Path '${path}' must point to a positive integer, got ${JSON.stringify(v)}`);
  }
  return v;
}

/** The error and `Cause` Step Functions records for a failed invocation. */
export function describeInvokeError(err: unknown): { error: string; cause: string } {
  if (err instanceof Error) {
    const e = err as Error & { errorType?: string; trace?: string[] };
    const cause = JSON.stringify({
      errorType: e.errorType ?? e.name,
      errorMessage: e.message,
      ...(e.trace ? { trace: e.trace } : {}),
    });
    return { error: e.name || 'Error', cause };
  }
  return { error: 'Lambda.Unknown', cause: JSON.stringify({ errorMessage: String(err) }) };
}

function target(task: TaskStateInfo, input: unknown): { functionName: string; payload: unknown } {
  if (task.kind === 'lambda-direct') return { functionName: task.resource, payload: input };
  const params = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  const functionName = params.FunctionName;
  if (typeof functionName !== 'string' || functionName === '') {
    throw new StatesRuntimeError(`State '${task.name}': Parameters.FunctionName must be a string`);
  }
  return { functionName, payload: params.Payload ?? {} };
}

type Events = {
  scheduled(timeoutSeconds?: number, heartbeatSeconds?: number): void;
  started(): void;
  submitted(output: unknown): void;
  succeeded(output: unknown): void;
  failed(error: string, cause: string): void;
  timedOut(error: string, cause: string): void;
};

function historyFor(ctx: TaskContext, task: TaskStateInfo, functionName: string, input: unknown): Events {
  const h = ctx.history;
  if (task.kind === 'lambda-direct') {
    return {
      scheduled: (timeoutInSeconds) =>
        h.append('LambdaFunctionScheduled', {
          lambdaFunctionScheduledEventDetails: {
            resource: functionName,
            input: JSON.stringify(input),
            timeoutInSeconds,
          },
        }),
      started: () => h.append('LambdaFunctionStarted'),
      submitted: () => {},
      succeeded: (output) =>
        h.append('LambdaFunctionSucceeded', {
          lambdaFunctionSucceededEventDetails: { output: JSON.stringify(output) },
        }),
      failed: (error, cause) =>
        h.append('LambdaFunctionFailed', { lambdaFunctionFailedEventDetails: { error, cause } }),
      timedOut: (error, cause) =>
        h.append('LambdaFunctionTimedOut', { lambdaFunctionTimedOutEventDetails: { error, cause } }),
    };
  }
  const res = {
    resourceType: 'lambda',
    resource: task.kind === 'lambda-callback' ? 'invoke.waitForTaskToken' : 'invoke',
  };
  return {
    scheduled: (timeoutInSeconds, heartbeatInSeconds) =>
      h.append('TaskScheduled', {
        taskScheduledEventDetails: {
          ...res,
          region: ctx.region,
          parameters: JSON.stringify(input),
          timeoutInSeconds,
          heartbeatInSeconds,
        },
      }),
    started: () => h.append('TaskStarted', { taskStartedEventDetails: res }),
    submitted: (output) =>
      h.append('TaskSubmitted', { taskSubmittedEventDetails: { ...res, output: JSON.stringify(output) } }),
    succeeded: (output) =>
      h.append('TaskSucceeded', { taskSucceededEventDetails: { ...res, output: JSON.stringify(output) } }),
    failed: (error, cause) => h.append('TaskFailed', { taskFailedEventDetails: { ...res, error, cause } }),
    timedOut: (error, cause) =>
      h.append('TaskTimedOut', { taskTimedOutEventDetails: { ...res, error, cause } }),
  };
}

/**
 * Runs one attempt of a Task state; the interpreter calls it with the state's effective input
 * (after InputPath and Parameters) and applies ResultSelector/ResultPath/OutputPath, Retry and
 * Catch to the outcome.
 *
 * Must stay synchronous up to the token claim: the interpreter evaluates Parameters (reading
 * `$$.Task.Token`, which mints the token) and calls this function in one synchronous run.
 */
export async function runTaskAttempt(
  ctx: TaskContext,
  task: TaskStateInfo,
  input: unknown,
): Promise<unknown> {
  if (ctx.signal.aborted) throw new ExecutionStoppedError(ctx.executionArn);
  let token: string | undefined;
  if (task.kind === 'lambda-callback')
    token = ctx.tokens.findMinted(input, ctx.executionArn) ?? ctx.tokens.mint(ctx.executionArn);

  // Let the runner record the interpreter's StateEntered/retry events first, so history is in order.
  await nextMacrotask();
  if (ctx.signal.aborted) throw new ExecutionStoppedError(ctx.executionArn);

  const { functionName, payload } = target(task, input);
  if (payloadBytes(input) > MAX_PAYLOAD_BYTES) {
    const cause = `The state/task '${task.name}' has an input with a size exceeding the maximum number of bytes service limit.`;
    historyFor(ctx, task, functionName, input).failed('States.DataLimitExceeded', cause);
    throw new DataLimitExceededError(cause);
  }
  const timeoutSeconds = secondsOf(task.timeoutSeconds, task.timeoutSecondsPath, input);
  const heartbeatSeconds =
    task.kind === 'lambda-callback'
      ? secondsOf(task.heartbeatSeconds, task.heartbeatSecondsPath, input)
      : undefined;
  const events = historyFor(ctx, task, functionName, input);
  const effectiveTimeout = timeoutSeconds ?? ctx.defaultTaskTimeoutSeconds;

  return new Promise<unknown>((resolve, reject) => {
    const attempt = new AbortController();
    const timers: LongTimer[] = [];
    let heartbeat: LongTimer | undefined;
    let settled = false;

    const settle = (then: () => void): void => {
      if (settled) return;
      settled = true;
      for (const t of timers) t.clear();
      heartbeat?.clear();
      ctx.signal.removeEventListener('abort', onStop);
      if (token) ctx.tokens.finish(token);
      then();
    };
    const onStop = (): void => {
      attempt.abort();
      settle(() => reject(new ExecutionStoppedError(ctx.executionArn)));
    };
    const timeOut = (error: Error): void => {
      attempt.abort();
      settle(() => {
        events.timedOut(error.name, error.message);
        reject(error);
      });
    };
    const armHeartbeat = (): void => {
      if (heartbeatSeconds === undefined) return;
      heartbeat?.clear();
      heartbeat = setLongTimeout(
        () => timeOut(new HeartbeatTimeoutError(heartbeatSeconds)),
        heartbeatSeconds * 1000,
      );
    };

    ctx.signal.addEventListener('abort', onStop, { once: true });
    events.scheduled(timeoutSeconds, heartbeatSeconds);
    if (token) {
      ctx.tokens.claim(token, {
        success: (output) =>
          settle(() => {
            events.succeeded(output);
            resolve(output);
          }),
        failure: (error, cause) =>
          settle(() => {
            events.failed(error ?? '', cause ?? '');
            reject(new TaskFailedError(error ?? '', cause ?? ''));
          }),
        heartbeat: armHeartbeat,
      });
    }
    timers.push(
      setLongTimeout(
        () => timeOut(ctx.timeoutError(`Task timed out after ${effectiveTimeout} seconds`)),
        effectiveTimeout * 1000,
      ),
    );
    armHeartbeat();
    events.started();

    ctx.invoke(functionName, payload, { timeoutMs: effectiveTimeout * 1000, signal: attempt.signal }).then(
      (result) => {
        if (settled) return;
        if (task.kind === 'lambda-callback') {
          events.submitted(invokeOutput(result));
          return;
        }
        const output = task.kind === 'lambda-invoke' ? invokeOutput(result) : (result ?? null);
        if (payloadBytes(output) > MAX_PAYLOAD_BYTES) {
          const cause = `The state/task '${functionName}' returned a result with a size exceeding the maximum number of bytes service limit.`;
          settle(() => {
            events.failed('States.DataLimitExceeded', cause);
            reject(new DataLimitExceededError(cause));
          });
          return;
        }
        settle(() => {
          events.succeeded(output);
          resolve(output);
        });
      },
      (err: unknown) => {
        const { error, cause } = describeInvokeError(err);
        settle(() => {
          events.failed(error, cause);
          reject(new TaskFailedError(error, cause));
        });
      },
    );
  });
}

/** The output of `arn:aws:states:::lambda:invoke` for a function result. */
function invokeOutput(result: unknown): Record<string, unknown> {
  const requestId = randomUUID();
  return {
    ExecutedVersion: '$LATEST',
    Payload: result ?? null,
    SdkHttpMetadata: { HttpStatusCode: 200, HttpHeaders: { 'x-amzn-RequestId': requestId } },
    SdkResponseMetadata: { RequestId: requestId },
    StatusCode: 200,
  };
}
