import { describe, expect, it } from 'vitest';
import {
  applySubstitutions,
  classifyResource,
  INTERPRETER_TIMEOUT_CAP_SECONDS,
  prepareDefinition,
} from '../../../local/sfn/definition.ts';
import { UnresolvedSubstitutionError, UnsupportedTaskResourceError } from '../../../local/sfn/errors.ts';
import { countStateTransitions } from '../../../local/sfn/history.ts';
import { readReferencePath } from '../../../local/sfn/task.ts';
import type { HistoryEvent, HistoryEventType } from '../../../local/sfn/types.ts';

const ARN = 'arn:aws:lambda:us-east-1:000000000000:function:run-step';
/** `${key}` as it appears in an ASL file (built, so no string here looks like a template by mistake). */
const ph = (key: string): string => ['$', '{', key, '}'].join('');

describe('Function: applySubstitutions', () => {
  it('replaces every placeholder textually, as DefinitionSubstitutions does', () => {
    const text = `{"A":"${ph('Fn')}","B":"${ph('Fn')}","C":"x-${ph('Suffix')}","D":${ph('Num')}}`;
    expect(applySubstitutions(text, { Fn: ARN, Suffix: 'y', Num: '5' })).toBe(
      `{"A":"${ARN}","B":"${ARN}","C":"x-y","D":5}`,
    );
  });

  it('names every placeholder without a value', () => {
    const run = (): string => applySubstitutions(`"${ph('A')}" "${ph('B')}" "${ph('C')}"`, { B: 'b' });
    expect(run).toThrow(UnresolvedSubstitutionError);
    try {
      run();
    } catch (err) {
      expect((err as UnresolvedSubstitutionError).placeholders).toEqual(['A', 'C']);
    }
  });
});

describe('Function: classifyResource', () => {
  it.each([
    [ARN, 'lambda-direct'],
    [`${ARN}:$LATEST`, 'lambda-direct'],
    ['arn:aws:states:::lambda:invoke', 'lambda-invoke'],
    ['arn:aws:states:::lambda:invoke.waitForTaskToken', 'lambda-callback'],
    ['arn:aws:states:::dynamodb:putItem', undefined],
    [ph('Unsubstituted'), undefined],
  ])('%s -> %s', (resource, kind) => {
    expect(classifyResource(resource)).toBe(kind);
  });
});

describe('Function: prepareDefinition', () => {
  const definition = JSON.stringify({
    StartAt: 'A',
    TimeoutSeconds: 99_999_999,
    States: {
      A: {
        Type: 'Task',
        Resource: ph('Fn'),
        TimeoutSeconds: 5,
        Retry: [{ ErrorEquals: ['States.ALL'] }],
        Next: 'B',
      },
      B: {
        Type: 'Parallel',
        Branches: [{ StartAt: 'C', States: { C: { Type: 'Task', Resource: ph('Fn'), End: true } } }],
        End: true,
      },
    },
  });

  it('hands the interpreter capped Task timeouts and keeps the real ones for the runner', () => {
    const p = prepareDefinition(definition, { Fn: ARN });
    const states = p.interpreterDefinition.States as Record<string, Record<string, unknown>>;
    expect(states.A?.TimeoutSeconds).toBe(INTERPRETER_TIMEOUT_CAP_SECONDS);
    expect(p.interpreterDefinition.TimeoutSeconds).toBe(INTERPRETER_TIMEOUT_CAP_SECONDS);
    expect(p.tasks.get('A')).toMatchObject({ kind: 'lambda-direct', resource: ARN, timeoutSeconds: 5 });
    expect(p.tasks.get('C')).toMatchObject({ kind: 'lambda-direct', timeoutSeconds: undefined });
    expect(p.retryStates).toEqual(['A']);
  });

  it('rejects a Task resource it cannot run', () => {
    const bad = definition.replace(ph('Fn'), 'arn:aws:states:::sqs:sendMessage');
    expect(() => prepareDefinition(bad, { Fn: ARN })).toThrow(UnsupportedTaskResourceError);
  });
});

describe('Function: countStateTransitions', () => {
  const events = (types: HistoryEventType[]): HistoryEvent[] =>
    types.map((type, i) => ({
      id: i + 1,
      previousEventId: i,
      timestamp: new Date(0),
      type,
      executionArn: 'arn',
    }));

  it('counts each state entered once and each retry once more; start and end are free', () => {
    const history = events([
      'ExecutionStarted',
      'PassStateEntered',
      'PassStateExited',
      'TaskStateEntered',
      'LambdaFunctionScheduled',
      'LambdaFunctionStarted',
      'LambdaFunctionFailed',
      'LambdaFunctionScheduled',
      'LambdaFunctionStarted',
      'LambdaFunctionFailed',
      'LambdaFunctionScheduled',
      'LambdaFunctionStarted',
      'LambdaFunctionSucceeded',
      'TaskStateExited',
      'TaskStateEntered',
      'TaskScheduled',
      'TaskStarted',
      'TaskSucceeded',
      'TaskStateExited',
      'SucceedStateEntered',
      'SucceedStateExited',
      'ExecutionSucceeded',
    ]);
    expect(countStateTransitions(history)).toBe(4 + 2);
  });
});

describe('Function: readReferencePath', () => {
  const value = { a: { b: 7 }, list: [1, 2], 'x y': 'spaced' };
  it.each([
    ['$', value],
    ['$.a.b', 7],
    ['$.list[1]', 2],
    ["$['x y']", 'spaced'],
    ['$.missing.deeper', undefined],
  ])('%s', (path, expected) => {
    expect(readReferencePath(path, value)).toEqual(expected);
  });
});
