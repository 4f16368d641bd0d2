import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ExecutionAlreadyExistsError,
  InvalidExecutionInputError,
  InvalidNameError,
  TaskTimedOutError,
} from '../../../local/sfn/errors.ts';
import { countStateTransitions } from '../../../local/sfn/history.ts';
import { createLocalStepFunctions, type LocalStepFunctions } from '../../../local/sfn/runner.ts';
import type { InvokeFn, InvokeOptions } from '../../../local/sfn/types.ts';

const fixture = (name: string): string =>
  readFileSync(new URL(`../../fixtures/local-sfn/${name}`, import.meta.url), 'utf8');
const fnArn = (name: string): string => `arn:aws:lambda:us-east-1:000000000000:function:${name}`;

/** An in-process InvokeFn recording each call; callback payloads are kept by job id. */
function recorder(behaviour: (payload: Record<string, unknown>, opts: InvokeOptions) => Promise<unknown>) {
  const calls: Array<{ functionArn: string; payload: Record<string, unknown>; opts: InvokeOptions }> = [];
  const invoke: InvokeFn = (functionArn, payload, opts) => {
    const p = payload as Record<string, unknown>;
    calls.push({ functionArn, payload: p, opts });
    return behaviour(p, opts);
  };
  return { calls, invoke };
}

async function until<T>(probe: () => T | undefined, timeoutMs = 5000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

const runners: LocalStepFunctions[] = [];
afterAll(async () => {
  await Promise.all(runners.map((r) => r.shutdown()));
});

describe('Function: createLocalStepFunctions (flow states)', () => {
  const rec = recorder(async () => ({ ok: true }));
  const sfn = createLocalStepFunctions({
    definition: fixture('callback.asl.json'),
    substitutions: { NotifyFunctionArn: fnArn('notify') },
    invoke: rec.invoke,
    waitTimeOverrides: { Pause: 150 },
  });
  runners.push(sfn);

  it('runs Choice -> Pass and records the states it entered', async () => {
    const { executionArn } = await sfn.startExecution({ name: 'flow-skip', input: '{"mode":"skip"}' });
    const d = await sfn.waitForExecution(executionArn, 5000);
    expect(d.status).toBe('SUCCEEDED');
    expect(JSON.parse(d.output ?? '')).toEqual({ mode: 'skip', decision: 'skipped' });
    const types = sfn.getExecutionHistory(executionArn).map((e) => e.type);
    expect(types).toEqual([
      'ExecutionStarted',
      'ChoiceStateEntered',
      'ChoiceStateExited',
      'PassStateEntered',
      'PassStateExited',
      'ExecutionSucceeded',
    ]);
    expect(countStateTransitions(sfn.getExecutionHistory(executionArn))).toBe(2);
  });

  it('waits in a Wait state (overridden to 150 ms) before the next state', async () => {
    const { executionArn } = await sfn.startExecution({ name: 'flow-wait', input: '{"mode":"approve"}' });
    const call = await until(() => rec.calls.find((c) => c.payload.jobId === 'flow-wait'));
    const history = sfn.getExecutionHistory(executionArn);
    const entered = history.find((e) => e.type === 'WaitStateEntered');
    const exited = history.find((e) => e.type === 'WaitStateExited');
    expect(entered && exited).toBeTruthy();
    expect((exited?.timestamp.getTime() ?? 0) - (entered?.timestamp.getTime() ?? 0)).toBeGreaterThanOrEqual(
      140,
    );
    expect(call.payload).toMatchObject({ kind: 'approval', input: { mode: 'approve' } });
    sfn.sendTaskSuccess(String(call.payload.taskToken), '{"approvedBy":"ana"}');
    const d = await sfn.waitForExecution(executionArn, 5000);
    expect(JSON.parse(d.output ?? '')).toEqual({ mode: 'approve', decision: { approvedBy: 'ana' } });
    // Choice, Wait, Task, Succeed.
    expect(countStateTransitions(sfn.getExecutionHistory(executionArn))).toBe(4);
  });

  it('answers a duplicate name as AWS does', async () => {
    const first = await sfn.startExecution({ name: 'dup', input: '{"mode":"approve"}' });
    const again = await sfn.startExecution({ name: 'dup', input: '{ "mode": "approve" }' });
    expect(again.executionArn).toBe(first.executionArn);
    await expect(sfn.startExecution({ name: 'dup', input: '{"mode":"skip"}' })).rejects.toThrow(
      ExecutionAlreadyExistsError,
    );
    sfn.stopExecution(first.executionArn);
    // Closed: even the same input is refused.
    await expect(sfn.startExecution({ name: 'dup', input: '{"mode":"approve"}' })).rejects.toThrow(
      ExecutionAlreadyExistsError,
    );
  });

  it.each(['', 'has space', 'a/b', 'x'.repeat(81)])('rejects the execution name %j', async (name) => {
    await expect(sfn.startExecution({ name, input: '{}' })).rejects.toThrow(InvalidNameError);
  });

  it('rejects input that is not JSON', async () => {
    await expect(sfn.startExecution({ name: 'bad-input', input: '{mode' })).rejects.toThrow(
      InvalidExecutionInputError,
    );
  });

  it('stopExecution aborts, invalidates the pending token and releases the invocation', async () => {
    const { executionArn } = await sfn.startExecution({ name: 'to-stop', input: '{"mode":"heartbeat"}' });
    const call = await until(() => rec.calls.find((c) => c.payload.jobId === 'to-stop'));
    sfn.stopExecution(executionArn, { error: 'Cancelled', cause: 'by the test' });
    const d = await sfn.waitForExecution(executionArn, 5000);
    expect(d).toMatchObject({ status: 'ABORTED', error: 'Cancelled', cause: 'by the test' });
    expect(call.opts.signal.aborted).toBe(true);
    expect(() => sfn.sendTaskSuccess(String(call.payload.taskToken), '{}')).toThrow(TaskTimedOutError);
    expect(sfn.getExecutionHistory(executionArn).at(-1)?.type).toBe('ExecutionAborted');
    expect(sfn.listExecutions({ statusFilter: 'ABORTED' }).map((e) => e.name)).toContain('to-stop');
  });
});

describe('Function: createLocalStepFunctions (task timeouts)', () => {
  const rec = recorder(
    (payload, opts) =>
      new Promise((resolve, reject) => {
        if (payload.fail) {
          const err = new Error('handler failed');
          err.name = 'SomethingBroke';
          reject(err);
          return;
        }
        const t = setTimeout(() => resolve({ slept: true }), Number(payload.sleepMs ?? 3000));
        opts.signal.addEventListener('abort', () => clearTimeout(t));
      }),
  );
  const sfn = createLocalStepFunctions({
    definition: fixture('timeouts.asl.json'),
    substitutions: { SlowFunctionArn: fnArn('slow') },
    invoke: rec.invoke,
    defaultTaskTimeoutSeconds: 2,
  });
  runners.push(sfn);

  it('honours TimeoutSeconds with a States.Timeout that States.TaskFailed does not catch', async () => {
    const started = Date.now();
    const { executionArn } = await sfn.startExecution({
      name: 'slow',
      input: '{"case":"slow","sleepMs":5000}',
    });
    const d = await sfn.waitForExecution(executionArn, 5000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(Date.now() - started).toBeLessThan(2500);
    const out = JSON.parse(d.output ?? '');
    expect(out.error.Error).toBe('States.Timeout');
    const history = sfn.getExecutionHistory(executionArn);
    expect(history.map((e) => e.type)).toContain('LambdaFunctionTimedOut');
    expect(history.find((e) => e.type === 'PassStateEntered')?.stateEnteredEventDetails?.name).toBe(
      'CaughtAsTimeout',
    );
    const call = rec.calls.find((c) => c.payload.sleepMs === 5000);
    expect(call?.opts.timeoutMs).toBe(1000);
    expect(call?.opts.signal.aborted).toBe(true);
  });

  it('lets States.TaskFailed catch a handler error', async () => {
    const { executionArn } = await sfn.startExecution({
      name: 'fails',
      input: '{"case":"slow","fail":true}',
    });
    const d = await sfn.waitForExecution(executionArn, 5000);
    const out = JSON.parse(d.output ?? '');
    expect(out.error.Error).toBe('SomethingBroke');
    expect(JSON.parse(out.error.Cause)).toMatchObject({
      errorType: 'SomethingBroke',
      errorMessage: 'handler failed',
    });
    const caught = sfn.getExecutionHistory(executionArn).find((e) => e.type === 'PassStateEntered');
    expect(caught?.stateEnteredEventDetails?.name).toBe('CaughtAsTaskFailed');
  });

  it('applies the configurable default to a Task without TimeoutSeconds (instead of 60 s)', async () => {
    const { executionArn } = await sfn.startExecution({
      name: 'default-timeout',
      input: '{"case":"no-timeout","sleepMs":1000}',
    });
    const d = await sfn.waitForExecution(executionArn, 5000);
    expect(d.status).toBe('SUCCEEDED');
    const { executionArn: tooSlow } = await sfn.startExecution({
      name: 'default-timeout-exceeded',
      input: '{"case":"no-timeout","sleepMs":4000}',
    });
    const failed = await sfn.waitForExecution(tooSlow, 5000);
    expect(failed).toMatchObject({ status: 'FAILED', error: 'States.Timeout' });
  });

  it('shapes arn:aws:states:::lambda:invoke output as { Payload, StatusCode }', async () => {
    const { executionArn } = await sfn.startExecution({ name: 'invoke-shape', input: '{"case":"invoke"}' });
    const d = await sfn.waitForExecution(executionArn, 5000);
    expect(JSON.parse(d.output ?? '')).toMatchObject({ Payload: { slept: true }, StatusCode: 200 });
    const call = rec.calls.find((c) => c.payload.name === 'invoke-shape');
    expect(call?.functionArn).toBe(fnArn('slow'));
    expect(call?.payload).toEqual({ sleepMs: 0, name: 'invoke-shape' });
  });
});
