import type { ExecutionStatus, SFNClient } from '@aws-sdk/client-sfn';
import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  ListExecutionsCommand,
  StartExecutionCommand,
} from '../aws/sdk/client-sfn.ts';
import type { ExecutionInput } from './executions.ts';

/** An execution as the engine's recovery needs to know it. */
export interface ExecutionState {
  name: string;
  status: ExecutionStatus;
  error?: string;
  cause?: string;
}

/**
 * What the engine does with the job state machine's executions outside them: start a job's
 * next one, look one up, and list the running ones (the recovery function; the API starts
 * executions with its own client).
 */
export interface ExecutionControl {
  /** `exists` when an execution of that name already exists (started by someone else meanwhile). */
  start(name: string, input: ExecutionInput): Promise<'started' | 'exists'>;
  /** The execution of that name, or undefined when the state machine has none. */
  describe(name: string): Promise<ExecutionState | undefined>;
  /** The names of the machine's RUNNING executions (every page). */
  runningNames(): Promise<Set<string>>;
}

/** The ARN of an execution of a state machine, from the machine's ARN and the execution's name. */
export function executionArnOf(stateMachineArn: string, name: string): string {
  return `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
}

/**
 * Execution control over the SDK client.
 *
 * @example
 * const executions = sfnExecutionControl(sfnClientFromEnv(), process.env.STATE_MACHINE_ARN);
 */
export function sfnExecutionControl(sfn: SFNClient, stateMachineArn: string): ExecutionControl {
  return {
    async start(name, input) {
      try {
        await sfn.send(new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) }));
        return 'started';
      } catch (err) {
        if (err instanceof ExecutionAlreadyExists) return 'exists';
        throw err;
      }
    },
    async describe(name) {
      try {
        const d = await sfn.send(
          new DescribeExecutionCommand({ executionArn: executionArnOf(stateMachineArn, name) }),
        );
        return {
          name,
          status: d.status as ExecutionStatus,
          ...(d.error ? { error: d.error } : {}),
          ...(d.cause ? { cause: d.cause } : {}),
        };
      } catch (err) {
        if (err instanceof ExecutionDoesNotExist) return undefined;
        throw err;
      }
    },
    async runningNames() {
      const names = new Set<string>();
      let nextToken: string | undefined;
      do {
        const page = await sfn.send(
          new ListExecutionsCommand({
            stateMachineArn,
            statusFilter: 'RUNNING',
            maxResults: 1000,
            nextToken,
          }),
        );
        for (const e of page.executions ?? []) if (e.name) names.add(e.name);
        nextToken = page.nextToken;
      } while (nextToken);
      return names;
    },
  };
}
