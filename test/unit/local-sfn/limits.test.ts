/**
 * The quotas AWS holds a Standard execution to, held locally: 256 KiB payloads
 * (`States.DataLimitExceeded`, which `States.ALL` does not catch), 25,000 history events
 * (event 25,000 is ExecutionFailed, `States.Runtime`), execution names taken for 90 days
 * (across restarts of the runner, when its state is kept), and task tokens that stop working
 * once their task ended.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ExecutionAlreadyExistsError,
  InvalidTokenError,
  TaskTimedOutError,
  ValidationError,
} from '../../../local/sfn/errors.ts';
import { HISTORY_LIMIT_CAUSE, MAX_HISTORY_EVENTS, MAX_PAYLOAD_BYTES } from '../../../local/sfn/limits.ts';
import { createLocalStepFunctions, type LocalStepFunctions } from '../../../local/sfn/runner.ts';
import type { InvokeFn } from '../../../local/sfn/types.ts';

const FN = 'arn:aws:lambda:us-east-1:000000000000:function:work';
const dir = mkdtempSync(join(tmpdir(), 'belay-sfn-limits-'));
const runners: LocalStepFunctions[] = [];
afterAll(async () => {
  await Promise.all(runners.map((r) => r.shutdown()));
  rmSync(dir, { recursive: true, force: true });
});

function runner(definition: object, invoke: InvokeFn, stateFile?: string): LocalStepFunctions {
  const sfn = createLocalStepFunctions({
    definition: JSON.stringify(definition),
    invoke,
    retryIntervalMs: 1,
    ...(stateFile ? { stateFile } : {}),
  });
  runners.push(sfn);
  return sfn;
}

/** A task that fails over to a catch-all, as the job machine's do. */
const TASK_WITH_CATCH_ALL = {
  StartAt: 'Work',
  States: {
    Work: {
      Type: 'Task',
      Resource: FN,
      Retry: [{ ErrorEquals: ['States.ALL'], MaxAttempts: 2 }],
      Catch: [{ ErrorEquals: ['States.ALL'], Next: 'Caught' }],
      End: true,
    },
    Caught: { Type: 'Pass', Result: 'caught', End: true },
  },
};

const big = (bytes: number): string => 'x'.repeat(bytes);

describe('Local Step Functions: 256 KiB payloads', () => {
  it('fails the execution when a task returns more than 256 KiB, past its Retry and States.ALL Catch', async () => {
    let calls = 0;
    const sfn = runner(TASK_WITH_CATCH_ALL, async () => {
      calls++;
      return { blob: big(MAX_PAYLOAD_BYTES) };
    });
    const { executionArn } = await sfn.startExecution({ name: 'big-result' });
    const d = await sfn.waitForExecution(executionArn, 5000);
    expect(d).toMatchObject({ status: 'FAILED', error: 'States.DataLimitExceeded' });
    expect(calls).toBe(1);
    const history = sfn.getExecutionHistory(executionArn);
    expect(history.map((h) => h.stateEnteredEventDetails?.name)).not.toContain('Caught');
    expect(
      history.find((h) => h.type === 'LambdaFunctionFailed')?.lambdaFunctionFailedEventDetails?.error,
    ).toBe('States.DataLimitExceeded');
  });

  it('accepts a result just under the limit', async () => {
    const sfn = runner(TASK_WITH_CATCH_ALL, async () => big(MAX_PAYLOAD_BYTES - 10));
    const { executionArn } = await sfn.startExecution({ name: 'just-under' });
    expect((await sfn.waitForExecution(executionArn, 5000)).status).toBe('SUCCEEDED');
  });

  it("fails the execution when a state's output grows past 256 KiB", async () => {
    const sfn = runner(
      {
        StartAt: 'Grow',
        States: {
          Grow: { Type: 'Pass', Result: big(MAX_PAYLOAD_BYTES), ResultPath: '$.blob', Next: 'Done' },
          Done: { Type: 'Succeed' },
        },
      },
      async () => ({}),
    );
    const { executionArn } = await sfn.startExecution({ name: 'big-output', input: '{}' });
    const d = await sfn.waitForExecution(executionArn, 5000);
    expect(d).toMatchObject({ status: 'FAILED', error: 'States.DataLimitExceeded' });
    expect(d.cause).toContain("'Grow'");
    expect(sfn.getExecutionHistory(executionArn).at(-1)?.type).toBe('ExecutionFailed');
  });

  it('refuses an execution input and a task output over 256 KiB as the API does', async () => {
    const sfn = runner(TASK_WITH_CATCH_ALL, async () => ({}));
    await expect(
      sfn.startExecution({ name: 'big-input', input: JSON.stringify({ blob: big(MAX_PAYLOAD_BYTES) }) }),
    ).rejects.toThrow(ValidationError);
  });
});

describe('Local Step Functions: 25,000 history events', () => {
  it('fails an execution whose 25,000th event would not end it, as AWS records it', {
    timeout: 60_000,
  }, async () => {
    const sfn = runner(
      {
        StartAt: 'Spin',
        States: {
          Spin: { Type: 'Pass', Next: 'Again' },
          Again: {
            Type: 'Choice',
            Choices: [{ Variable: '$.stop', BooleanEquals: true, Next: 'Done' }],
            Default: 'Spin',
          },
          Done: { Type: 'Succeed' },
        },
      },
      async () => ({}),
    );
    const { executionArn } = await sfn.startExecution({ name: 'spin', input: '{"stop":false}' });
    const d = await sfn.waitForExecution(executionArn, 55_000);
    expect(d).toMatchObject({ status: 'FAILED', error: 'States.Runtime', cause: HISTORY_LIMIT_CAUSE });
    const history = sfn.getExecutionHistory(executionArn);
    expect(history).toHaveLength(MAX_HISTORY_EVENTS);
    expect(history.at(-1)).toMatchObject({ id: MAX_HISTORY_EVENTS, type: 'ExecutionFailed' });
    expect(history.at(-2)?.type).not.toBe('ExecutionFailed');
  });
});

describe('Local Step Functions: execution names and task tokens', () => {
  const CALLBACK = {
    StartAt: 'Await',
    States: {
      Await: {
        Type: 'Task',
        Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
        Parameters: { FunctionName: FN, Payload: { 'token.$': '$$.Task.Token' } },
        End: true,
      },
    },
  };
  const tokens: string[] = [];
  const invoke: InvokeFn = async (_fn, payload) => {
    tokens.push(String((payload as { token: string }).token));
    return {};
  };
  const until = async (probe: () => boolean): Promise<void> => {
    for (let i = 0; i < 500 && !probe(); i++) await new Promise((r) => setTimeout(r, 5));
  };

  it('keeps a name taken after its execution closed, and after the runner restarts on its state', async () => {
    const stateFile = join(dir, 'names.jsonl');
    const first = runner(TASK_WITH_CATCH_ALL, async () => ({}), stateFile);
    const { executionArn } = await first.startExecution({ name: 'job-1-g0' });
    await first.waitForExecution(executionArn, 5000);
    await expect(first.startExecution({ name: 'job-1-g0' })).rejects.toThrow(ExecutionAlreadyExistsError);
    await first.shutdown();

    const restarted = runner(TASK_WITH_CATCH_ALL, async () => ({}), stateFile);
    await expect(restarted.startExecution({ name: 'job-1-g0' })).rejects.toThrow(ExecutionAlreadyExistsError);
    await expect(restarted.startExecution({ name: 'job-1-g1' })).resolves.toBeDefined();
    // A runner with no state file forgets: that is the one it is told to be.
    await expect(
      runner(TASK_WITH_CATCH_ALL, async () => ({})).startExecution({ name: 'job-1-g0' }),
    ).resolves.toBeDefined();
  });

  it('answers a token whose task ended TaskTimedOut, before and after a restart', async () => {
    const stateFile = join(dir, 'tokens.jsonl');
    const sfn = runner(CALLBACK, invoke, stateFile);
    const { executionArn } = await sfn.startExecution({ name: 'await-1' });
    await until(() => tokens.length > 0);
    const token = tokens.at(-1) as string;
    expect(() => sfn.sendTaskSuccess(token, big(MAX_PAYLOAD_BYTES + 1))).toThrow(ValidationError);
    sfn.sendTaskSuccess(token, '{"ok":true}');
    expect((await sfn.waitForExecution(executionArn, 5000)).status).toBe('SUCCEEDED');
    expect(() => sfn.sendTaskSuccess(token, '{}')).toThrow(TaskTimedOutError);

    const { executionArn: second } = await sfn.startExecution({ name: 'await-2' });
    await until(() => tokens.length > 1);
    const pending = tokens.at(-1) as string;
    await sfn.shutdown(); // the runner stops with the task waiting
    expect(sfn.describeExecution(second).status).toBe('ABORTED');
    const restarted = runner(CALLBACK, invoke, stateFile);
    expect(() => restarted.sendTaskFailure(pending, 'Rejected')).toThrow(TaskTimedOutError);
    expect(() => restarted.sendTaskSuccess('not-a-token', '{}')).toThrow(InvalidTokenError);
  });

  it('tells the next run which executions went down with the runner (ABORTED, with their input), and not the ones that closed', async () => {
    const stateFile = join(dir, 'lost.jsonl');
    const sfn = runner(CALLBACK, invoke, stateFile);
    const issued = tokens.length;
    const done = await sfn.startExecution({ name: 'closed-1', input: '{"jobId":"a"}' });
    await until(() => tokens.length > issued);
    sfn.sendTaskSuccess(tokens.at(-1) as string, '{}');
    expect((await sfn.waitForExecution(done.executionArn, 5000)).status).toBe('SUCCEEDED');
    const before = tokens.length;
    await sfn.startExecution({ name: 'lost-1', input: '{"jobId":"b"}' });
    await until(() => tokens.length > before);
    await sfn.shutdown(); // the runner goes away with lost-1 waiting
    expect(sfn.lostExecutions()).toEqual([]);

    const restarted = runner(CALLBACK, invoke, stateFile);
    const lost = restarted.lostExecutions();
    expect(lost.map((x) => [x.name, x.status, x.input])).toEqual([['lost-1', 'ABORTED', '{"jobId":"b"}']]);
    expect(lost[0]?.executionArn).toMatch(/:execution:[^:]+:lost-1$/);
    expect(lost[0]?.stateMachineArn).toBe(restarted.stateMachineArn);
  });
});
