/**
 * The job machine's Retry, run by the local runner on the real ASL with scripted task results:
 * a task that lost a race on the job's version (StaleCheckpointError, which an Anchor webhook
 * bumping the version can cause at any time) or whose invoke timed out on the Lambda side
 * (Lambda.ClientExecutionTimeoutException) is tried again, not failed into RecordFailure.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { StateMachineFunction } from '../../../lambdas/lib/engine/functions.ts';
import type { LocalStepFunctions } from '../../../local/sfn/runner.ts';
import { named, READY, scriptedMachine } from '../../support/scripted-machine.ts';

const runners: LocalStepFunctions[] = [];
afterAll(async () => {
  await Promise.all(runners.map((r) => r.shutdown()));
});

/** Runs one job through the machine; `failOnce[fn]` makes that function's first invocation throw. */
async function run(failOnce: Partial<Record<StateMachineFunction, string>>) {
  const calls: string[] = [];
  const failed = new Set<string>();
  const results: Partial<Record<StateMachineFunction, unknown>> = {
    Start: READY,
    RunStep: { outcome: 'uncertain', step: 'pay', detail: 'no response' },
    Reconcile: { outcome: 'done', step: 'pay' },
    Finish: { outcome: 'succeeded' },
  };
  const sfn = scriptedMachine(
    async (fn) => {
      calls.push(fn);
      const error = failOnce[fn];
      if (error && !failed.has(fn)) {
        failed.add(fn);
        throw named(error);
      }
      if (fn === 'Reconcile') {
        // After reconciling, the step is done: the next RunStep finishes the job.
        results.RunStep = { outcome: 'finished', step: 'pay', stepCount: 1 };
      }
      return results[fn] ?? {};
    },
    { retryIntervalMs: 1 },
  );
  runners.push(sfn);
  const { executionArn } = await sfn.startExecution({ input: '{"tenantId":"t","jobId":"j"}' });
  return { description: await sfn.waitForExecution(executionArn, 10_000), calls };
}

describe('statemachine/job.asl.json: retries', () => {
  it.each(['Start', 'Reconcile', 'Finish'] as const)(
    'tries %s again after a StaleCheckpointError',
    async (fn) => {
      const { description, calls } = await run({ [fn]: 'StaleCheckpointError' });
      expect(description.status).toBe('SUCCEEDED');
      expect(calls.filter((c) => c === fn)).toHaveLength(2);
      expect(calls).not.toContain('RecordFailure');
    },
  );

  it.each(['Start', 'RunStep', 'Finish'] as const)(
    'tries %s again after Lambda.ClientExecutionTimeoutException',
    async (fn) => {
      const { description, calls } = await run({ [fn]: 'Lambda.ClientExecutionTimeoutException' });
      expect(description.status).toBe('SUCCEEDED');
      expect(calls).not.toContain('RecordFailure');
    },
  );
});
