/**
 * The local Step Functions runner: the same ASL file, run by aws-local-stepfunctions, with task
 * tokens, Lambda invocation, explicit task timeouts and an execution history wrapped around it.
 */
import { randomUUID } from 'node:crypto';
import { prepareDefinition } from './definition.ts';
import {
  ExecutionAlreadyExistsError,
  ExecutionDoesNotExistError,
  ExecutionWaitTimeoutError,
  InvalidExecutionInputError,
  InvalidNameError,
  StateMachineDoesNotExistError,
  ValidationError,
} from './errors.ts';
import { Execution, type ExecutionSettings } from './execution.ts';
import { StateMachine, timeoutErrorFactory } from './interpreter.ts';
import { MAX_PAYLOAD_BYTES } from './limits.ts';
import { openRegistry } from './registry.ts';
import { TaskTokens } from './tokens.ts';
import type {
  ExecutionDescription,
  ExecutionListItem,
  ExecutionStatus,
  HistoryEvent,
  InvokeFn,
} from './types.ts';

/** AWS's "no timeout" for a Task without `TimeoutSeconds`. */
export const DEFAULT_TASK_TIMEOUT_SECONDS = 99_999_999;

/** Options of {@link createLocalStepFunctions}. */
export interface LocalStepFunctionsOptions {
  /** ASL JSON text, with `${Name}` placeholders. */
  definition: string;
  /** Values for the placeholders, as CloudFormation's `DefinitionSubstitutions`. */
  substitutions?: Record<string, string>;
  /** Invokes a Lambda function (see the local Lambda runner). */
  invoke: InvokeFn;
  /** Default `arn:aws:states:us-east-1:000000000000:stateMachine:belay-local`. */
  stateMachineArn?: string;
  /** Reported as the execution role; never used. */
  roleArn?: string;
  /** Called for every history event of every execution, as it is recorded. */
  onEvent?: (e: HistoryEvent) => void;
  /** Timeout of Tasks without `TimeoutSeconds` (default 99999999 s, as AWS). */
  defaultTaskTimeoutSeconds?: number;
  /** Passed to the interpreter's ASL validator. */
  validationOptions?: { checkPaths?: boolean; checkArn?: boolean; noValidate?: boolean };
  /** Wait state durations in ms, by state name (instead of `Seconds`/`Timestamp`). */
  waitTimeOverrides?: Record<string, number>;
  /** Retry pauses in ms, by state name (one number, or one per retrier). */
  retryIntervalOverrides?: Record<string, number | number[]>;
  /** Retry pause in ms for every state with a Retry not in `retryIntervalOverrides` (tests, demo). */
  retryIntervalMs?: number;
  /**
   * Told of every execution's status changes, as Step Functions tells EventBridge
   * ("Step Functions Execution Status Change"): RUNNING when it starts, then how it closed.
   * Not told of the executions `shutdown` stops (the runner going away is no status change
   * AWS would report; a restarted stack finds those jobs with no running execution).
   */
  onStatusChange?: (e: ExecutionDescription) => void;
  /**
   * Where the runner remembers execution names (taken for 90 days) and the task tokens it
   * issued, across its own restarts (a JSON-lines file). Default: in memory only.
   */
  stateFile?: string;
}

/** Start of an execution, as `StartExecution` answers. */
export interface StartExecutionResult {
  executionArn: string;
  startDate: Date;
}

/** The runner's API: the subset of the Step Functions API the project uses. */
export interface LocalStepFunctions {
  readonly stateMachineArn: string;
  /**
   * `StartExecution`. `input` is JSON text (default `{}`). A name in use by a RUNNING execution
   * with the same input returns that execution; otherwise a used name throws ExecutionAlreadyExists.
   */
  startExecution(req: {
    name?: string;
    input?: string;
    stateMachineArn?: string;
  }): Promise<StartExecutionResult>;
  describeExecution(executionArn: string): ExecutionDescription;
  getExecutionHistory(executionArn: string): HistoryEvent[];
  /** Aborts a running execution; its pending task tokens become invalid. No-op on a closed one. */
  stopExecution(executionArn: string, opts?: { error?: string; cause?: string }): { stopDate: Date };
  /** `output` is JSON text. */
  sendTaskSuccess(taskToken: string, output: string): void;
  sendTaskFailure(taskToken: string, error?: string, cause?: string): void;
  sendTaskHeartbeat(taskToken: string): void;
  /** Newest first. */
  listExecutions(opts?: { statusFilter?: ExecutionStatus }): ExecutionListItem[];
  /** Resolves with the closed execution; rejects with ExecutionWaitTimeoutError after `timeoutMs`. */
  waitForExecution(executionArn: string, timeoutMs: number): Promise<ExecutionDescription>;
  /** Stops every running execution and waits for them to close. */
  shutdown(): Promise<void>;
  /**
   * The executions an earlier run of the runner (same `stateFile`) was running when it went
   * away, described as they ended: ABORTED at this run's start. Step Functions never loses an
   * execution; the local runner does when its process dies, and this is how the stack learns of it.
   */
  lostExecutions(): ExecutionDescription[];
}

// AWS: 1-80 characters; no whitespace, brackets, wildcards, special or control characters.
const INVALID_NAME_CHAR = /[\s<>{}[\]?*"#%\\^|~`$&,;:/]/;

function validName(name: string): boolean {
  if (name.length < 1 || name.length > 80 || INVALID_NAME_CHAR.test(name)) return false;
  for (let i = 0; i < name.length; i++) {
    const code = name.charCodeAt(i);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return false;
  }
  return true;
}

function normalizeJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch (err) {
    throw new InvalidExecutionInputError(
      `Invalid State Machine Execution Input: '${(err as Error).message}'`,
      {
        cause: err,
      },
    );
  }
}

/**
 * Creates a local Step Functions runner for one state machine definition.
 *
 * @example
 * const lambdas = createLambdaRunner({ functions, mode: 'warm' });
 * const sfn = createLocalStepFunctions({
 *   definition: readFileSync('statemachine/job.asl.json', 'utf8'),
 *   substitutions: { RunStepFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:run-step' },
 *   invoke: lambdas.invoke,
 * });
 * const { executionArn } = await sfn.startExecution({ name: jobId, input: JSON.stringify(job) });
 */
export function createLocalStepFunctions(options: LocalStepFunctionsOptions): LocalStepFunctions {
  const stateMachineArn =
    options.stateMachineArn ?? 'arn:aws:states:us-east-1:000000000000:stateMachine:belay-local';
  const arnParts = stateMachineArn.split(':');
  const region = arnParts[3] || 'us-east-1';
  const account = arnParts[4] || '000000000000';
  const machineName = arnParts[6] ?? 'belay-local';
  const prepared = prepareDefinition(options.definition, options.substitutions ?? {});
  const machine = new StateMachine(prepared.interpreterDefinition as never, {
    validationOptions: options.validationOptions,
  });
  const retryIntervalOverrides: Record<string, number | number[]> = {};
  if (options.retryIntervalMs !== undefined) {
    for (const name of prepared.retryStates) retryIntervalOverrides[name] = options.retryIntervalMs;
  }
  Object.assign(retryIntervalOverrides, options.retryIntervalOverrides);

  const registry = openRegistry(options.stateFile);
  const openedAt = new Date();
  const tokens = new TaskTokens(registry);
  const executions = new Map<string, Execution>();
  const byName = new Map<string, Execution>();
  const timeoutError = timeoutErrorFactory();
  let shuttingDown = false;
  const statusChanged = (e: ExecutionDescription): void => {
    if (shuttingDown) return;
    try {
      options.onStatusChange?.(e);
    } catch (err) {
      console.error('local Step Functions: onStatusChange listener threw', err);
    }
  };

  const get = (executionArn: string): Execution => {
    const e = executions.get(executionArn);
    if (!e) throw new ExecutionDoesNotExistError(executionArn);
    return e;
  };

  return {
    stateMachineArn,

    async startExecution(req) {
      if (req.stateMachineArn !== undefined && req.stateMachineArn !== stateMachineArn) {
        throw new StateMachineDoesNotExistError(req.stateMachineArn);
      }
      const name = req.name ?? randomUUID();
      if (!validName(name)) throw new InvalidNameError(name);
      const input = req.input ?? '{}';
      if (Buffer.byteLength(input, 'utf8') > MAX_PAYLOAD_BYTES) {
        throw new ValidationError(
          `1 validation error detected: Value at 'input' failed to satisfy constraint: Member must have length less than or equal to ${MAX_PAYLOAD_BYTES}`,
        );
      }
      const normalized = normalizeJson(input);
      const makeTimeoutError = await timeoutError;
      // From here on synchronous: no other start can interleave between the name check and the insert.
      const existing = byName.get(name);
      if (existing) {
        if (existing.status === 'RUNNING' && normalizeJson(existing.input) === normalized) {
          return { executionArn: existing.executionArn, startDate: existing.startDate };
        }
        throw new ExecutionAlreadyExistsError(name);
      }
      // Taken by an execution of an earlier run of the runner (names live 90 days, not one process).
      if (registry.nameTaken(name, Date.now())) throw new ExecutionAlreadyExistsError(name);
      const settings: ExecutionSettings = {
        machine,
        prepared,
        stateMachineArn,
        roleArn: options.roleArn ?? `arn:aws:iam::${account}:role/belay-local-states`,
        region,
        tokens,
        invoke: options.invoke,
        defaultTaskTimeoutSeconds: options.defaultTaskTimeoutSeconds ?? DEFAULT_TASK_TIMEOUT_SECONDS,
        timeoutError: makeTimeoutError,
        overrides: { waitTimeOverrides: options.waitTimeOverrides, retryIntervalOverrides },
        onEvent: options.onEvent,
        onClose: (e: ExecutionDescription) => {
          // Stopped by the runner going away is no close: the next run reports it lost.
          if (!shuttingDown) registry.recordClose(e.name, Date.now());
          statusChanged(e);
        },
      };
      const executionArn = `arn:aws:states:${region}:${account}:execution:${machineName}:${name}`;
      const execution = new Execution(executionArn, name, input, settings);
      executions.set(executionArn, execution);
      byName.set(name, execution);
      registry.recordName(name, execution.startDate.getTime(), input);
      execution.start();
      statusChanged(execution.describe());
      return { executionArn, startDate: execution.startDate };
    },

    describeExecution: (executionArn) => get(executionArn).describe(),

    lostExecutions: () =>
      registry.lost().map((x) => ({
        executionArn: `arn:aws:states:${region}:${account}:execution:${machineName}:${x.name}`,
        stateMachineArn,
        name: x.name,
        status: 'ABORTED' as const,
        startDate: new Date(x.startedAt),
        stopDate: openedAt,
        input: x.input,
        error: 'States.Runtime',
        cause: 'the local Step Functions runner stopped while the execution ran',
      })),

    getExecutionHistory: (executionArn) => [...get(executionArn).history.events],

    stopExecution(executionArn, opts = {}) {
      const e = get(executionArn);
      e.stop(opts);
      return { stopDate: e.stopDate ?? new Date() };
    },

    sendTaskSuccess: (taskToken, output) => tokens.sendSuccess(taskToken, output),
    sendTaskFailure: (taskToken, error, cause) => tokens.sendFailure(taskToken, error, cause),
    sendTaskHeartbeat: (taskToken) => tokens.sendHeartbeat(taskToken),

    listExecutions(opts = {}) {
      return [...executions.values()]
        .filter((e) => !opts.statusFilter || e.status === opts.statusFilter)
        .sort((a, b) => b.startDate.getTime() - a.startDate.getTime())
        .map((e) => {
          const { executionArn, stateMachineArn: sm, name, status, startDate, stopDate } = e.describe();
          return { executionArn, stateMachineArn: sm, name, status, startDate, stopDate };
        });
    },

    async waitForExecution(executionArn, timeoutMs) {
      const e = get(executionArn);
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new ExecutionWaitTimeoutError(executionArn, timeoutMs)), timeoutMs);
      });
      try {
        await Promise.race([e.done, timedOut]);
        return e.describe();
      } finally {
        clearTimeout(timer);
      }
    },

    async shutdown() {
      shuttingDown = true;
      const running = [...executions.values()].filter((e) => e.status === 'RUNNING');
      for (const e of running) e.stop({ error: 'RunnerShutdown', cause: 'The local runner was stopped' });
      await Promise.all(running.map((e) => e.done));
    },
  };
}
