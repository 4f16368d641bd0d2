/**
 * One execution: runs the interpreter, turns its event log into AWS-shaped history, and keeps the
 * status `DescribeExecution` reports.
 */
import type { StateMachine } from 'aws-local-stepfunctions';
import type { PreparedDefinition } from './definition.ts';
import { ExecutionHistory, stateEventType } from './history.ts';
import { HISTORY_LIMIT_CAUSE, MAX_PAYLOAD_BYTES, payloadBytes } from './limits.ts';
import { runTaskAttempt, type TaskContext } from './task.ts';
import type { TaskTokens } from './tokens.ts';
import type { ExecutionDescription, ExecutionStatus, HistoryEvent, InvokeFn, StateType } from './types.ts';

type RunOptions = NonNullable<Parameters<StateMachine['run']>[1]>;
type EventLog = ReturnType<StateMachine['run']>['eventLogs'] extends AsyncGenerator<infer T> ? T : never;

/** Settings an execution takes from its runner. */
export interface ExecutionSettings {
  machine: StateMachine;
  prepared: PreparedDefinition;
  stateMachineArn: string;
  roleArn: string;
  region: string;
  tokens: TaskTokens;
  invoke: InvokeFn;
  defaultTaskTimeoutSeconds: number;
  timeoutError(message: string): Error;
  overrides?: RunOptions['overrides'];
  onEvent?: (e: HistoryEvent) => void;
  /** Told when the execution closes (SUCCEEDED, FAILED, TIMED_OUT, ABORTED), as EventBridge is. */
  onClose?: (e: ExecutionDescription) => void;
}

/** A running or finished execution. */
export class Execution {
  readonly history: ExecutionHistory;
  readonly startDate = new Date();
  status: ExecutionStatus = 'RUNNING';
  stopDate?: Date;
  output?: string;
  error?: string;
  cause?: string;
  /** Resolves once the execution is closed and its last history event is recorded. */
  readonly done: Promise<void>;

  private readonly controller = new AbortController();
  private abortRun: () => void = () => {};
  private stopDetails?: { error?: string; cause?: string };
  /** Set when the runner failed the execution itself (a quota): its ExecutionFailed, not an abort. */
  private failDetails?: { error: string; cause: string };
  private markDone: () => void = () => {};

  constructor(
    readonly executionArn: string,
    readonly name: string,
    readonly input: string,
    private readonly settings: ExecutionSettings,
  ) {
    this.history = new ExecutionHistory(executionArn, settings.onEvent, () =>
      this.fail('States.Runtime', HISTORY_LIMIT_CAUSE),
    );
    this.done = new Promise((resolve) => {
      this.markDone = resolve;
    });
  }

  /** Starts the interpreter; returns at once. */
  start(): void {
    const s = this.settings;
    const ctx: TaskContext = {
      executionArn: this.executionArn,
      region: s.region,
      history: this.history,
      tokens: s.tokens,
      invoke: s.invoke,
      signal: this.controller.signal,
      defaultTaskTimeoutSeconds: s.defaultTaskTimeoutSeconds,
      timeoutError: s.timeoutError,
    };
    const handlers: Record<string, (input: unknown) => Promise<never>> = {};
    for (const task of s.prepared.tasks.values()) {
      handlers[task.name] = (input) => runTaskAttempt(ctx, task, input) as Promise<never>;
    }
    // `$$.Task.Token` is read when the interpreter evaluates a state's Parameters: mint it there.
    const taskObject = {};
    Object.defineProperty(taskObject, 'Token', {
      enumerable: true,
      get: () => s.tokens.mint(this.executionArn),
    });
    const smName = s.stateMachineArn.split(':').pop() ?? '';
    const run = s.machine.run(JSON.parse(this.input), {
      overrides: {
        ...s.overrides,
        taskResourceLocalHandlers: handlers as NonNullable<
          RunOptions['overrides']
        >['taskResourceLocalHandlers'],
      },
      context: {
        Execution: { Id: this.executionArn, Name: this.name, RoleArn: s.roleArn, RedriveCount: 0 },
        StateMachine: { Id: s.stateMachineArn, Name: smName },
        Task: taskObject,
      },
    });
    this.abortRun = run.abort;
    run.result.catch(() => {});
    void this.consume(run.eventLogs);
  }

  /** Aborts a running execution (`StopExecution`); pending tokens become invalid. */
  stop(details: { error?: string; cause?: string }): void {
    if (this.status !== 'RUNNING') return;
    this.stopDetails = details;
    // The interpreter records ExecutionAborted synchronously; then pending tasks are released.
    this.abortRun();
    this.close('ABORTED', details);
  }

  /**
   * Fails the running execution from outside the interpreter, as AWS fails one that broke a
   * quota (its history full, a state's output over 256 KiB): ExecutionFailed with `error`.
   */
  fail(error: string, cause: string): void {
    if (this.status !== 'RUNNING') return;
    this.failDetails = { error, cause };
    this.close('FAILED', { error, cause });
    this.history.append('ExecutionFailed', { executionFailedEventDetails: { error, cause } });
    this.abortRun();
  }

  /** `DescribeExecution`'s view. */
  describe(): ExecutionDescription {
    return {
      executionArn: this.executionArn,
      stateMachineArn: this.settings.stateMachineArn,
      name: this.name,
      status: this.status,
      startDate: this.startDate,
      stopDate: this.stopDate,
      input: this.input,
      output: this.output,
      error: this.error,
      cause: this.cause,
    };
  }

  private close(
    status: ExecutionStatus,
    fields: { output?: string; error?: string; cause?: string } = {},
  ): void {
    if (this.status !== 'RUNNING') return;
    this.status = status;
    this.stopDate = new Date();
    Object.assign(this, fields);
    this.settings.tokens.closeExecution(this.executionArn);
    this.controller.abort();
    try {
      this.settings.onClose?.(this.describe());
    } catch (err) {
      console.error('local Step Functions: onClose listener threw', err);
    }
  }

  private async consume(logs: AsyncGenerator<EventLog>): Promise<void> {
    try {
      for await (const e of logs) this.record(e);
    } finally {
      // The interpreter closes its log on every terminal event; guard anyway so waiters never hang.
      if (this.status === 'RUNNING')
        this.close('FAILED', { error: 'States.Runtime', cause: 'Event log ended' });
      this.markDone();
    }
  }

  private record(e: EventLog): void {
    const h = this.history;
    const at = e.timestamp;
    switch (e.type) {
      case 'ExecutionStarted':
        h.append(
          'ExecutionStarted',
          {
            executionStartedEventDetails: {
              input: this.input,
              roleArn: this.settings.roleArn,
              stateMachineArn: this.settings.stateMachineArn,
            },
          },
          at,
        );
        break;
      case 'StateEntered':
        h.append(
          stateEventType(e.state.type as StateType, 'Entered'),
          { stateEnteredEventDetails: { name: e.state.name, input: JSON.stringify(e.state.input) } },
          at,
        );
        break;
      case 'StateExited':
        if (payloadBytes(e.state.output ?? null) > MAX_PAYLOAD_BYTES) {
          this.fail(
            'States.DataLimitExceeded',
            `The state/task '${e.state.name}' returned a result with a size exceeding the maximum number of bytes service limit.`,
          );
          break;
        }
        h.append(
          stateEventType(e.state.type as StateType, 'Exited'),
          { stateExitedEventDetails: { name: e.state.name, output: JSON.stringify(e.state.output ?? null) } },
          at,
        );
        break;
      case 'ExecutionSucceeded': {
        const output = JSON.stringify(e.output ?? null);
        this.close('SUCCEEDED', { output });
        h.append('ExecutionSucceeded', { executionSucceededEventDetails: { output } }, at);
        break;
      }
      case 'ExecutionFailed': {
        const error = e.Error;
        const cause = typeof e.Cause === 'string' ? e.Cause : JSON.stringify(e.Cause ?? null);
        this.close('FAILED', { error, cause });
        h.append('ExecutionFailed', { executionFailedEventDetails: { error, cause } }, at);
        break;
      }
      case 'ExecutionAborted': {
        // The runner failed it (a quota): its ExecutionFailed is recorded already.
        if (this.failDetails) break;
        const { error, cause } = this.stopDetails ?? {};
        h.append('ExecutionAborted', { executionAbortedEventDetails: { error, cause } }, at);
        break;
      }
      case 'ExecutionTimeout':
        this.close('TIMED_OUT', { error: 'States.Timeout' });
        h.append('ExecutionTimedOut', { executionTimedOutEventDetails: { error: 'States.Timeout' } }, at);
        break;
      default:
        // StateFailed/StateRetried/StateCaught and Map/Parallel events have no AWS counterpart of their
        // own: the Task events recorded by runTaskAttempt carry the failure and each retry.
        break;
    }
  }
}
