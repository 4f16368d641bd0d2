import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaultPointEvent } from '../../../local/lambda/events.ts';
import { createLambdaRunner, type LambdaRunner } from '../../../local/lambda/runner.ts';
import { countStateTransitions } from '../../../local/sfn/history.ts';
import { createLocalStepFunctions, type LocalStepFunctions } from '../../../local/sfn/runner.ts';

const ACT_ARN = 'arn:aws:lambda:us-east-1:000000000000:function:act';

interface LogLine {
  jobId: string;
  pid: number;
  attempt: number;
  phase: 'start' | 'done';
}

let dir: string;
let lambdas: LambdaRunner;
let sfn: LocalStepFunctions;
const spawned = new Set<number>();

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'belay-local-sfn-'));
  lambdas = createLambdaRunner({
    mode: 'warm',
    output: 'ignore',
    functions: { [ACT_ARN]: { entry: 'test/fixtures/local-sfn/recording-handler.ts', timeoutMs: 20_000 } },
  });
  lambdas.events.on('worker-spawned', (e) => spawned.add(e.pid));
  sfn = createLocalStepFunctions({
    definition: readFileSync(new URL('../../fixtures/local-sfn/act.asl.json', import.meta.url), 'utf8'),
    substitutions: { ActFunctionArn: ACT_ARN },
    invoke: lambdas.invoke,
    retryIntervalMs: 20,
  });
});

afterAll(async () => {
  await sfn?.shutdown();
  await lambdas?.stop();
  for (const pid of spawned) expect(() => process.kill(pid, 0)).toThrow();
  rmSync(dir, { recursive: true, force: true });
});

function log(file: string): LogLine[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as LogLine);
}

async function run(name: string, input: Record<string, unknown>) {
  const { executionArn } = await sfn.startExecution({ name, input: JSON.stringify(input) });
  const description = await sfn.waitForExecution(executionArn, 30_000);
  return { description, history: sfn.getExecutionHistory(executionArn) };
}

describe('Local Step Functions + local Lambda runner', () => {
  it('retries a worker SIGKILLed mid-action as a dying Lambda (Lambda.Unknown)', async () => {
    const logFile = join(dir, 'crash.jsonl');
    const fired: FaultPointEvent[] = [];
    lambdas.events.on('fault-fired', (e) => fired.push(e));
    lambdas.arm({ functionName: 'act', point: 'mid-action', match: { jobId: 'crash-1' } });

    const { description, history } = await run('crash-1', { logFile });

    expect(description.status).toBe('SUCCEEDED');
    const lines = log(logFile);
    expect(lines.map((l) => `${l.attempt}:${l.phase}`)).toEqual(['1:start', '2:start', '2:done']);
    const [first, second] = lines;
    expect(fired).toHaveLength(1);
    expect(fired[0]?.pid).toBe(first?.pid);
    expect(second?.pid).not.toBe(first?.pid);
    expect(() => process.kill(first?.pid ?? 0, 0)).toThrow();
    expect(JSON.parse(description.output ?? '').act).toEqual({ pid: second?.pid, attempt: 2 });

    const failed = history.find((e) => e.type === 'LambdaFunctionFailed');
    expect(failed?.lambdaFunctionFailedEventDetails?.error).toBe('Lambda.Unknown');
    expect(JSON.parse(failed?.lambdaFunctionFailedEventDetails?.cause ?? '')).toMatchObject({
      errorType: 'Runtime.ExitError',
      errorMessage: expect.stringContaining('signal: killed'),
    });
    expect(history.filter((e) => e.type === 'LambdaFunctionScheduled')).toHaveLength(2);
    // Prepare, Act, Done entered, plus one retry.
    expect(countStateTransitions(history)).toBe(4);
  });

  it('retries a handler error named in Retry', async () => {
    const logFile = join(dir, 'transient.jsonl');
    const { description, history } = await run('transient-1', { logFile, behavior: 'transient-once' });
    expect(description.status).toBe('SUCCEEDED');
    expect(log(logFile).map((l) => `${l.attempt}:${l.phase}`)).toEqual(['1:start', '2:start', '2:done']);
    const failed = history.find((e) => e.type === 'LambdaFunctionFailed');
    expect(failed?.lambdaFunctionFailedEventDetails?.error).toBe('TransientError');
  });

  it('routes a handler error named in Catch, with the Lambda error JSON as Cause', async () => {
    const logFile = join(dir, 'permanent.jsonl');
    const { description, history } = await run('permanent-1', { logFile, behavior: 'permanent' });
    expect(description.status).toBe('SUCCEEDED');
    expect(log(logFile).map((l) => `${l.attempt}:${l.phase}`)).toEqual(['1:start']);
    const error = JSON.parse(description.output ?? '').error;
    expect(error.Error).toBe('PermanentError');
    expect(JSON.parse(error.Cause)).toMatchObject({
      errorType: 'PermanentError',
      errorMessage: 'no retry for permanent-1',
    });
    expect(
      history.find(
        (e) => e.type === 'PassStateEntered' && e.stateEnteredEventDetails?.name === 'HandleFailure',
      ),
    ).toBeTruthy();
  });
});
