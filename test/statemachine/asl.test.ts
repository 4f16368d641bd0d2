import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { STATE_MACHINE_FUNCTIONS, substitutionKey } from '../../lambdas/lib/engine/functions.ts';
import { WAIT_TIMEOUT_SECONDS } from '../../lambdas/lib/engine/waits.ts';

interface State {
  Type: string;
  Resource?: string;
  Next?: string;
  End?: boolean;
  Default?: string;
  TimeoutSeconds?: number;
  Retry?: { ErrorEquals: string[] }[];
  Catch?: { ErrorEquals: string[]; Next: string }[];
  Choices?: { Variable: string; StringEquals: string; Next: string }[];
  Parameters?: Record<string, unknown> & { Payload?: Record<string, unknown>; FunctionName?: string };
}

const text = readFileSync(new URL('../../statemachine/job.asl.json', import.meta.url), 'utf8');
const asl = JSON.parse(text) as { StartAt: string; States: Record<string, State> };
const states = Object.entries(asl.States);

describe('statemachine/job.asl.json', () => {
  it('substitutes exactly the functions the stacks provide', () => {
    const placeholders = new Set([...text.matchAll(/\$\{(\w+)\}/g)].map((m) => m[1]));
    const provided = new Set(Object.keys(STATE_MACHINE_FUNCTIONS).map((n) => substitutionKey(n as never)));
    expect(placeholders).toEqual(provided);
  });

  it('starts by authorizing, and every transition targets a state that exists', () => {
    expect(asl.StartAt).toBe('Authorize');
    for (const [name, state] of states) {
      const targets = [
        state.Next,
        state.Default,
        ...(state.Choices ?? []).map((c) => c.Next),
        ...(state.Catch ?? []).map((c) => c.Next),
      ];
      for (const target of targets.filter(Boolean))
        expect(asl.States, `${name} -> ${target}`).toHaveProperty(target as string);
    }
  });

  it.each(states.filter(([, s]) => s.Type === 'Task'))(
    'task %s has a timeout and retries a dying Lambda',
    (_name, state) => {
      expect(state.TimeoutSeconds).toBeGreaterThan(0);
      const retried = (state.Retry ?? []).flatMap((r) => r.ErrorEquals);
      for (const error of [
        'Lambda.ServiceException',
        'Lambda.Unknown',
        'Lambda.TooManyRequestsException',
        'States.Timeout',
      ]) {
        expect(retried).toContain(error);
      }
    },
  );

  it('catches every failure into RecordFailure, which ends the job', () => {
    for (const [name, state] of states.filter(([n, s]) => s.Type === 'Task' && n !== 'RecordFailure')) {
      expect(
        state.Catch?.some((c) => c.ErrorEquals.includes('States.ALL') && c.Next === 'RecordFailure'),
        name,
      ).toBe(true);
    }
    expect(asl.States.RecordFailure?.Next).toBe('Failed');
    expect(asl.States.Failed?.Type).toBe('Fail');
  });

  it.each([
    ['AwaitApproval', 'approval'],
    ['AwaitMfa', 'mfa'],
    ['AwaitReview', 'review'],
  ] as const)('%s waits for a task token with the %s timeout the engine records', (name, kind) => {
    const state = asl.States[name] as State;
    expect(state.Resource).toBe('arn:aws:states:::lambda:invoke.waitForTaskToken');
    expect(state.Parameters?.FunctionName).toBe(`\${${substitutionKey('AwaitHuman')}}`);
    expect(state.Parameters?.Payload?.['taskToken.$']).toBe('$$.Task.Token');
    expect(state.Parameters?.Payload?.kind).toBe(kind);
    expect(state.TimeoutSeconds).toBe(WAIT_TIMEOUT_SECONDS[kind]);
  });

  it('routes every outcome RunStep returns', () => {
    const routed = new Set((asl.States.Route?.Choices ?? []).map((c) => c.StringEquals));
    for (const outcome of [
      'completed',
      'finished',
      'needs_approval',
      'auth_expired',
      'session_lost',
      'uncertain',
      'layout_changed',
      'retry',
      'stopped',
    ]) {
      expect(routed).toContain(outcome);
    }
  });

  it('spends two transitions per step on the happy path (RunStep, Route, RunStep)', () => {
    const completed = asl.States.Route?.Choices?.find((c) => c.StringEquals === 'completed');
    expect(asl.States.RunStep?.Next).toBe('Route');
    expect(completed?.Next).toBe('RunStep');
  });
});
