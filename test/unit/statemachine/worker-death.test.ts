/**
 * The job machine on the real ASL, run by the local runner with scripted task results: a RunStep
 * whose worker died (`Lambda.Unknown`, as Lambda reports a runtime that exited) runs again at
 * once, a crash loop still ends, errors that need time keep their backoff, and two steps in a row
 * cost three transitions (RunStep, RunNextStep, Route), with RunNextStep handing on anything but
 * a completed step unchanged.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { StateMachineFunction } from '../../../lambdas/lib/engine/functions.ts';
import { countStateTransitions, type HistoryEvent } from '../../../local/sfn/index.ts';
import type { LocalStepFunctions } from '../../../local/sfn/runner.ts';
import { named, READY, scriptedMachine } from '../../support/scripted-machine.ts';

const runners: LocalStepFunctions[] = [];
afterAll(async () => {
  await Promise.all(runners.map((r) => r.shutdown()));
});

/** One RunStep invocation as scripted: an error it throws, or its result. */
type Scripted = { throws: string } | Record<string, unknown>;

const completed = (i: number, steps: number): Record<string, unknown> => ({
  outcome: 'completed',
  step: `s${i}`,
  stepIndex: i,
  nextStep: i + 1,
  stepCount: steps,
});

/**
 * Runs one job: RunStep's invocations answer `script` in order (a `previous` that is not
 * `completed` is handed on, as `runNextStep` does), everything else succeeds. The real retry
 * intervals apply (no override), so a backoff shows in the times.
 */
async function run(script: Scripted[]) {
  const runStepEvents: Record<string, unknown>[] = [];
  const results: Partial<Record<StateMachineFunction, unknown>> = {
    Start: READY,
    Finish: { outcome: 'succeeded' },
    RecordFailure: { recorded: true },
  };
  let next = 0;
  const sfn = scriptedMachine(async (fn, payload) => {
    if (fn !== 'RunStep') return results[fn] ?? {};
    const event = payload as Record<string, unknown>;
    runStepEvents.push(event);
    const previous = event.previous as { outcome?: string } | undefined;
    if (previous && previous.outcome !== 'completed') return previous;
    const answer = script[next++] ?? { outcome: 'finished', step: 'last', stepCount: 1 };
    if ('throws' in answer) throw named(String(answer.throws));
    return answer;
  });
  runners.push(sfn);
  const { executionArn } = await sfn.startExecution({ input: '{"tenantId":"t","jobId":"j"}' });
  const description = await sfn.waitForExecution(executionArn, 30_000);
  const history = sfn.getExecutionHistory(executionArn);
  return { description, history, runStepEvents };
}

const entered = (history: readonly HistoryEvent[]): string[] =>
  history.flatMap((h) => (h.type.endsWith('StateEntered') ? [h.stateEnteredEventDetails?.name ?? ''] : []));

/** Milliseconds from each failed RunStep invocation to the next one scheduled. */
function pausesAfterFailures(history: readonly HistoryEvent[]): number[] {
  const pauses: number[] = [];
  let failedAt: number | undefined;
  for (const h of history) {
    if (h.type === 'LambdaFunctionFailed' || h.type === 'TaskFailed') failedAt = h.timestamp.getTime();
    else if ((h.type === 'LambdaFunctionScheduled' || h.type === 'TaskScheduled') && failedAt !== undefined) {
      pauses.push(h.timestamp.getTime() - failedAt);
      failedAt = undefined;
    }
  }
  return pauses;
}

describe('statemachine/job.asl.json: a worker that died', () => {
  it.each(['Lambda.Unknown', 'Runtime.ExitError', 'Runtime.OutOfMemory'])(
    'runs the step again at once after %s, with no backoff, and counts the death in $.result',
    async (error) => {
      const { description, history } = await run([{ throws: error }, completed(0, 2), completed(1, 2)]);
      expect(description.status).toBe('SUCCEEDED');
      const states = entered(history);
      expect(states.slice(0, 6)).toEqual([
        'Start',
        'StartOutcome',
        'RunStep',
        'WorkerDied',
        'FirstWorkerDeath',
        'RunStep',
      ]);
      const pauses = pausesAfterFailures(history);
      expect(pauses).toHaveLength(1);
      // The retry's IntervalSeconds is 1 with full jitter; the death path has no wait at all.
      expect(pauses[0]).toBeLessThan(100);
      const counted = history.find(
        (h) => h.type === 'PassStateExited' && h.stateExitedEventDetails?.name === 'FirstWorkerDeath',
      );
      expect(JSON.parse(counted?.stateExitedEventDetails?.output ?? '{}').result).toEqual({
        outcome: 'worker_died',
        workerDeaths: 1,
      });
    },
  );

  it('ends a crash loop: the fourth death in a row fails the job (three immediate re-runs)', async () => {
    const death = { throws: 'Lambda.Unknown' };
    const { description, history, runStepEvents } = await run([death, death, death, death, completed(0, 1)]);
    expect(description.status).toBe('FAILED');
    expect(runStepEvents).toHaveLength(4);
    const states = entered(history);
    expect(states.filter((s) => s === 'FirstWorkerDeath')).toHaveLength(1);
    expect(states.filter((s) => s === 'AnotherWorkerDeath')).toHaveLength(2);
    expect(states.slice(-2)).toEqual(['RecordFailure', 'Failed']);
    const failure = history.find(
      (h) => h.type === 'TaskStateEntered' && h.stateEnteredEventDetails?.name === 'RecordFailure',
    );
    expect(JSON.parse(failure?.stateEnteredEventDetails?.input ?? '{}').error.Error).toBe('Lambda.Unknown');
  });

  it('counts deaths in a row only: a completed step starts the count again', async () => {
    const death = { throws: 'Lambda.Unknown' };
    const { description, history } = await run([
      death,
      death,
      death,
      completed(0, 3),
      death,
      death,
      death,
      completed(1, 3),
      completed(2, 3),
    ]);
    expect(description.status).toBe('SUCCEEDED');
    const states = entered(history);
    expect(states.filter((s) => s === 'FirstWorkerDeath')).toHaveLength(2);
    expect(states.filter((s) => s === 'AnotherWorkerDeath')).toHaveLength(4);
    expect(states).not.toContain('RecordFailure');
  });

  it.each(['Lambda.TooManyRequestsException', 'LedgerUnavailableError', 'SessionUnavailableError'])(
    'keeps the jittered backoff for %s (an error that needs time), never the death path',
    async (error) => {
      const { description, history } = await run([{ throws: error }, completed(0, 1)]);
      expect(description.status).toBe('SUCCEEDED');
      expect(entered(history)).not.toContain('WorkerDied');
      // Retried within the same state entry: one RunStep entered for two invocations.
      expect(entered(history).filter((s) => s === 'RunStep')).toHaveLength(1);
      expect(pausesAfterFailures(history)).toHaveLength(1);
    },
  );

  it('catches a death in RunNextStep the same way, and the step runs again from RunStep', async () => {
    const { description, history } = await run([
      completed(0, 2),
      { throws: 'Lambda.Unknown' },
      completed(1, 2),
    ]);
    expect(description.status).toBe('SUCCEEDED');
    expect(entered(history).slice(2, 7)).toEqual([
      'RunStep',
      'RunNextStep',
      'WorkerDied',
      'FirstWorkerDeath',
      'RunStep',
    ]);
  });
});

describe('statemachine/job.asl.json: two steps before each route', () => {
  it('runs 14 completed steps in 21 transitions of their own (RunStep, RunNextStep, Route for each pair)', async () => {
    const steps = 14;
    const script = Array.from({ length: steps - 1 }, (_, i) => completed(i, steps));
    script.push({ outcome: 'finished', step: 's13', stepCount: steps });
    const { description, history, runStepEvents } = await run(script);
    expect(description.status).toBe('SUCCEEDED');
    const states = entered(history);
    const perStep = states.filter((s) => ['RunStep', 'RunNextStep', 'Route'].includes(s)).length;
    expect(perStep).toBe(21);
    expect(runStepEvents).toHaveLength(steps);
    // Start, StartOutcome, the steps, Finish, FinishOutcome, Succeeded.
    expect(countStateTransitions(history)).toBe(21 + 5);
  });

  it('hands on an outcome that is not `completed` from RunStep through RunNextStep to Route, unchanged', async () => {
    const finished = { outcome: 'finished', step: 's0', stepCount: 1 };
    const { description, history, runStepEvents } = await run([finished]);
    expect(description.status).toBe('SUCCEEDED');
    expect(runStepEvents).toHaveLength(2);
    expect(runStepEvents[1]?.previous).toEqual(finished);
    const route = history.find(
      (h) => h.type === 'ChoiceStateEntered' && h.stateEnteredEventDetails?.name === 'Route',
    );
    expect(JSON.parse(route?.stateEnteredEventDetails?.input ?? '{}').result).toEqual(finished);
    expect(entered(history)).toContain('Finish');
  });
});
