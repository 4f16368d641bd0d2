import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { FinishResult } from '../../../lambdas/finish/finish.ts';
import { STATE_MACHINE_FUNCTIONS, substitutionKey } from '../../../lambdas/lib/engine/functions.ts';
import type { StepOutcome } from '../../../lambdas/lib/engine/types.ts';
import {
  takeoverWaitRequest,
  takeoverWaitSeconds,
  WAIT_TIMEOUT_SECONDS,
  waitRequest,
} from '../../../lambdas/lib/engine/waits.ts';

interface State {
  Type: string;
  Resource?: string;
  Next?: string;
  End?: boolean;
  Default?: string;
  TimeoutSeconds?: number;
  TimeoutSecondsPath?: string;
  InputPath?: string;
  ResultPath?: string;
  Retry?: { ErrorEquals: string[]; MaxAttempts?: number }[];
  Catch?: { ErrorEquals: string[]; Next: string }[];
  Choices?: { Variable: string; StringEquals: string; Next: string }[];
  Parameters?: Record<string, unknown> & { Payload?: Record<string, unknown>; FunctionName?: string };
}

const text = readFileSync(new URL('../../../statemachine/job.asl.json', import.meta.url), 'utf8');
const asl = JSON.parse(text) as { StartAt: string; States: Record<string, State> };
const states = Object.entries(asl.States);

describe('statemachine/job.asl.json', () => {
  it('substitutes exactly the functions the stacks provide', () => {
    const placeholders = new Set([...text.matchAll(/\$\{(\w+)\}/g)].map((m) => m[1]));
    const provided = new Set(Object.keys(STATE_MACHINE_FUNCTIONS).map((n) => substitutionKey(n as never)));
    expect(placeholders).toEqual(provided);
  });

  it('starts with Start (authorize, capacity, session in one task), and every transition targets a state that exists', () => {
    expect(asl.StartAt).toBe('Start');
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

  const isCallback = (s: State): boolean => s.Resource === 'arn:aws:states:::lambda:invoke.waitForTaskToken';

  /** The states that run a step: a worker that died under one runs again at once (`WorkerDied`). */
  const STEP_STATES = ['RunStep', 'RunNextStep'];

  it.each(states.filter(([, s]) => s.Type === 'Task'))(
    'task %s has a timeout and retries a dying Lambda',
    (name, state) => {
      expect(state.TimeoutSeconds ?? state.TimeoutSecondsPath).toBeDefined();
      if (state.TimeoutSeconds !== undefined) expect(state.TimeoutSeconds).toBeGreaterThan(0);
      const retried = (state.Retry ?? []).flatMap((r) => r.ErrorEquals);
      for (const error of [
        'Lambda.ServiceException',
        'Lambda.TooManyRequestsException',
        // The invoke timed out on the Lambda service's side: the function may not even have run.
        'Lambda.ClientExecutionTimeoutException',
      ]) {
        expect(retried).toContain(error);
      }
      if (STEP_STATES.includes(name)) {
        // Caught before any Retry can back off: the first Catch, to the immediate re-run.
        expect(retried).not.toContain('Lambda.Unknown');
        expect(state.Catch?.[0]).toMatchObject({
          ErrorEquals: ['Lambda.Unknown', 'Runtime.ExitError', 'Runtime.OutOfMemory'],
          Next: 'WorkerDied',
        });
      } else {
        expect(retried).toContain('Lambda.Unknown');
      }
      if (isCallback(state)) {
        // A callback's States.Timeout is the wait running out: caught (park or fail), never retried.
        expect(retried).not.toContain('States.Timeout');
        expect(state.Catch?.some((c) => c.ErrorEquals.includes('States.Timeout'))).toBe(true);
      } else {
        expect(retried).toContain('States.Timeout');
      }
    },
  );

  it.each(['Start', 'RunStep', 'Reconcile', 'Finish', 'ParkWait'])(
    '%s retries StaleCheckpointError (an Anchor webhook or a person moved the job under it)',
    (name) => {
      const state = states.find(([n]) => n === name)?.[1];
      const retrier = state?.Retry?.find((r) => r.ErrorEquals.includes('StaleCheckpointError'));
      expect(retrier?.MaxAttempts).toBeGreaterThanOrEqual(3);
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

  it('retries an engine task that ran into its timeout, as Lambda reports it and as the handler does', () => {
    const tasks = states.filter(([n, s]) => s.Type === 'Task' && n !== 'RecordFailure');
    expect(tasks.length).toBeGreaterThan(5);
    for (const [name, state] of tasks) {
      const retried = ((state as { Retry?: { ErrorEquals: string[] }[] }).Retry ?? []).flatMap(
        (r) => r.ErrorEquals,
      );
      expect(retried, name).toContain('Sandbox.Timedout');
      expect(retried, name).toContain('InvocationTimeoutError');
    }
  });

  it.each([
    ['AwaitApproval', 'approval'],
    ['AwaitMfa', 'mfa'],
    ['AwaitReview', 'review'],
    ['AwaitTakeover', 'takeover'],
    ['AwaitParked', undefined],
  ] as const)('%s waits for a task token of AwaitHuman', (name, kind) => {
    const state = asl.States[name] as State;
    expect(state.Resource).toBe('arn:aws:states:::lambda:invoke.waitForTaskToken');
    expect(state.Parameters?.FunctionName).toBe(`\${${substitutionKey('AwaitHuman')}}`);
    expect(state.Parameters?.Payload?.['taskToken.$']).toBe('$$.Task.Token');
    if (kind === 'mfa') expect(state.Parameters?.Payload?.kind).toBe(kind);
    else expect(state.Parameters?.Payload?.['kind.$']).toBe('$.Payload.kind');
  });

  it('waits as long as the engine records: MFA a day, a parked approval or review the full 7 days', () => {
    expect(WAIT_TIMEOUT_SECONDS).toEqual({
      mfa: 86_400,
      approval: 604_800,
      review: 604_800,
      takeover: 86_400,
    });
    expect(asl.States.AwaitMfa?.TimeoutSeconds).toBe(86_400);
    expect(asl.States.AwaitParked?.TimeoutSeconds).toBe(604_800);
  });

  it('routes every outcome RunStep returns', () => {
    const routed = new Set((asl.States.Route?.Choices ?? []).map((c) => c.StringEquals));
    // Keyed by StepOutcome's outcomes: a new outcome does not compile until it is listed here.
    const outcomes: Record<StepOutcome['outcome'], true> = {
      completed: true,
      finished: true,
      needs_approval: true,
      auth_expired: true,
      mfa_required: true,
      session_lost: true,
      uncertain: true,
      layout_changed: true,
      needs_review: true,
      takeover_requested: true,
      cancelled: true,
      retry: true,
      lease_lost: true,
      stopped: true,
    };
    for (const outcome of Object.keys(outcomes)) expect(routed).toContain(outcome);
    expect(routed.size).toBe(Object.keys(outcomes).length);
  });

  it('waits for a takeover as long as its request says (the session idle timeout bounds it), then fails; it never parks', () => {
    const route = new Map((asl.States.Route?.Choices ?? []).map((c) => [c.StringEquals, c.Next]));
    expect(route.get('takeover_requested')).toBe('AwaitTakeover');
    const state = asl.States.AwaitTakeover as State;
    expect(state.InputPath).toBe('$.result.wait');
    expect(state.TimeoutSecondsPath).toBe('$.Payload.timeoutSeconds');
    expect(state.Parameters?.Payload?.['timeoutSeconds.$']).toBe('$.Payload.timeoutSeconds');
    expect(state.Parameters?.Payload?.['question.$']).toBe('$.Payload.question');
    expect(state.Catch?.find((c) => c.ErrorEquals.includes('States.Timeout'))?.Next).toBe('RecordFailure');
    expect(state.Catch?.map((c) => c.Next)).not.toContain('ParkWait');
    expect(state.Next).toBe('RunStep');
    // The request RunStep returns is what the state reads.
    const request = takeoverWaitRequest({ tenantId: 't', jobId: 'j' }, 'step', 'do it', 600);
    expect(Object.keys(request.Payload).sort()).toEqual(
      Object.keys(state.Parameters?.Payload ?? {})
        .filter((k) => k !== 'taskToken.$')
        .map((k) => k.replace(/\.\$$/, ''))
        .sort(),
    );
  });

  it.each([
    [30, 1500],
    [5, 240],
    [1, 60],
    [24 * 60, 86_100],
  ])('a takeover with a %i-minute idle timeout waits %i s', (minutes, seconds) => {
    expect(takeoverWaitSeconds({ sessionIdleTimeoutMinutes: minutes })).toBe(seconds);
  });

  it('sends a job that lost its lease back to Start, to queue for a slot again', () => {
    const route = new Map((asl.States.Route?.Choices ?? []).map((c) => [c.StringEquals, c.Next]));
    expect(route.get('lease_lost')).toBe('Start');
  });

  it('sends a sign-in that needs a person from RunStep or Finish straight to the MFA wait', () => {
    const route = new Map((asl.States.Route?.Choices ?? []).map((c) => [c.StringEquals, c.Next]));
    expect(route.get('mfa_required')).toBe('AwaitMfa');
    const finish = new Map((asl.States.FinishOutcome?.Choices ?? []).map((c) => [c.StringEquals, c.Next]));
    expect(finish).toEqual(
      new Map([
        ['session_lost', 'OpenSession'],
        ['mfa_required', 'AwaitMfa'],
        ['retry', 'FinishBackoff'],
        ['needs_review', 'AwaitReview'],
      ]),
    );
    // Back through RunStep, which finds every step done and sends the job to Finish again.
    expect(asl.States.AwaitMfa?.Next).toBe('RunStep');
  });

  it('routes every outcome Finish returns; an inconclusive check waits and looks again, never fails', () => {
    const routed = new Set((asl.States.FinishOutcome?.Choices ?? []).map((c) => c.StringEquals));
    // Keyed by FinishResult's outcomes: a new outcome does not compile until it is listed here.
    const outcomes: Record<FinishResult['outcome'], 'routed' | 'default'> = {
      succeeded: 'default',
      stopped: 'default',
      session_lost: 'routed',
      mfa_required: 'routed',
      retry: 'routed',
      needs_review: 'routed',
    };
    for (const [outcome, how] of Object.entries(outcomes))
      expect(routed.has(outcome), outcome).toBe(how === 'routed');
    expect(asl.States.FinishOutcome?.Default).toBe('Succeeded');
    expect(asl.States.FinishBackoff).toMatchObject({
      Type: 'Wait',
      SecondsPath: '$.result.retryAfterSeconds',
      Next: 'Finish',
    });
  });

  it('spends three transitions per two steps on the happy path (RunStep, RunNextStep, Route)', () => {
    const completed = asl.States.Route?.Choices?.find((c) => c.StringEquals === 'completed');
    expect(asl.States.RunStep?.Next).toBe('RunNextStep');
    expect(asl.States.RunNextStep?.Next).toBe('Route');
    expect(completed?.Next).toBe('RunStep');
    // RunNextStep gets RunStep's result, to hand on anything but a completed step.
    expect(asl.States.RunNextStep?.Parameters?.['previous.$']).toBe('$.result');
    expect(asl.States.RunNextStep?.Resource).toBe(asl.States.RunStep?.Resource);
  });
});

/** Reads `$.a.b` from a value (the reference paths this file uses). */
function read(path: string, value: unknown): unknown {
  let current = value;
  for (const key of path
    .replace(/^\$\.?/, '')
    .split('.')
    .filter(Boolean)) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** Applies a `Parameters` template to an input (`x.$` keys read paths; `$$` context paths give a marker). */
function applyParameters(template: Record<string, unknown>, input: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(template)) {
    if (key.endsWith('.$') && typeof value === 'string') {
      out[key.slice(0, -2)] = value.startsWith('$$') ? '<context>' : read(value, input);
    } else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      out[key] = applyParameters(value as Record<string, unknown>, input);
    } else {
      out[key] = value;
    }
  }
  return out;
}

describe('statemachine/job.asl.json: parking during long human waits', () => {
  it("keeps Start's result at $.start, where the waits find the park-after time", () => {
    expect(asl.States.Start?.ResultPath).toBe('$.start');
    expect(asl.States.StartOutcome?.Choices?.every((c) => c.Variable === '$.start.outcome')).toBe(true);
    const outcome = new Map((asl.States.StartOutcome?.Choices ?? []).map((c) => [c.StringEquals, c.Next]));
    expect(outcome).toEqual(
      new Map([
        ['ready', 'RunStep'],
        ['stopped', 'Stopped'],
        ['queued', 'WaitForCapacity'],
      ]),
    );
    expect(asl.States.StartOutcome?.Default).toBe('RecordFailure');
    const wait = asl.States.WaitForCapacity as State & { SecondsPath?: string };
    expect(wait.SecondsPath).toBe('$.start.retryAfterSeconds');
    expect(wait.Next).toBe('Start');
  });

  it.each([
    ['AwaitApproval', 'approval', 'needs_approval'],
    ['AwaitReview', 'review', 'layout_changed'],
  ] as const)('%s waits parkAfterSeconds with the browser, then parks', (wait, kind, reason) => {
    const state = asl.States[wait] as State;
    // The wait is what the handler returned (waitRequest), with no Pass state to build it.
    expect(state.InputPath).toBe('$.result.wait');
    expect(state.ResultPath).toBe('$.decision');
    expect(state.TimeoutSeconds).toBeUndefined();
    const timeout = state.Catch?.find((c) => c.ErrorEquals.includes('States.Timeout'));
    expect(timeout?.Next).toBe('ParkWait');

    // The timeout path resolves to the same number whether it is read from the state's input
    // (after InputPath) or from the task's parameters: runtimes differ on which one they use.
    const execution = {
      tenantId: 't1',
      jobId: 'j1',
      result: {
        outcome: reason,
        step: 'place-order',
        wait: waitRequest({ tenantId: 't1', jobId: 'j1' }, kind, 'place-order', reason, 42),
      },
      start: { outcome: 'ready', parkAfterSeconds: 900 },
    };
    const input = read(state.InputPath ?? '$', execution);
    const parameters = applyParameters(state.Parameters ?? {}, input);
    expect(read(state.TimeoutSecondsPath ?? '', input)).toBe(42);
    expect(read(state.TimeoutSecondsPath ?? '', parameters)).toBe(42);
    expect(parameters.Payload).toEqual({
      tenantId: 't1',
      jobId: 'j1',
      kind,
      step: 'place-order',
      reason,
      parkAfterSeconds: 42,
      waitId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      taskToken: '<context>',
    });
  });

  it('sends approvals and reviews through the parking path, and never MFA (its code belongs to its session)', () => {
    const route = new Map((asl.States.Route?.Choices ?? []).map((c) => [c.StringEquals, c.Next]));
    expect(route.get('needs_approval')).toBe('AwaitApproval');
    expect(route.get('layout_changed')).toBe('AwaitReview');
    const reconcile = new Map(
      (asl.States.ReconcileOutcome?.Choices ?? []).map((c) => [c.StringEquals, c.Next]),
    );
    expect(reconcile.get('unknown')).toBe('AwaitReview');
    expect(asl.States.AwaitMfa?.Catch?.map((c) => c.Next)).not.toContain('ParkWait');
    expect(asl.States.AwaitMfa?.Catch?.find((c) => c.ErrorEquals.includes('States.Timeout'))?.Next).toBe(
      'RecordFailure',
    );
  });

  it('parks (ParkWait), waits without a browser (AwaitParked), then takes a lease and a session again', () => {
    const park = asl.States.ParkWait as State;
    expect(park.Resource).toBe(`\${${substitutionKey('AwaitHuman')}}`);
    expect(park.Parameters?.action).toBe('park');
    expect(park.Parameters?.['kind.$']).toBe('$.result.wait.Payload.kind');
    // Its own result goes aside, so the wait stays where AwaitParked reads it.
    expect(park.ResultPath).toBe('$.park');
    expect(asl.States.Parked?.Choices?.every((c) => c.Variable === '$.park.outcome')).toBe(true);
    expect(park.Next).toBe('Parked');
    const parked = new Map((asl.States.Parked?.Choices ?? []).map((c) => [c.StringEquals, c.Next]));
    expect(parked).toEqual(
      new Map([
        ['parked', 'AwaitParked'],
        ['answered', 'RunStep'],
        ['stopped', 'Stopped'],
      ]),
    );
    const awaitParked = asl.States.AwaitParked as State;
    expect(awaitParked.InputPath).toBe('$.result.wait');
    expect(awaitParked.Parameters?.Payload?.rearm).toBe(true);
    expect(awaitParked.Next).toBe('Start');
    // The answer was already in the ledger: go on the same way as a resumed token.
    expect(awaitParked.Catch?.[0]).toMatchObject({
      ErrorEquals: ['WaitAnsweredError'],
      Next: 'Start',
    });
    expect(awaitParked.Catch?.at(-1)).toMatchObject({ ErrorEquals: ['States.ALL'], Next: 'RecordFailure' });
  });

  it('reaches every state from StartAt', () => {
    const seen = new Set<string>();
    const queue = [asl.StartAt];
    while (queue.length > 0) {
      const name = queue.shift() as string;
      if (seen.has(name)) continue;
      seen.add(name);
      const s = asl.States[name] as State;
      for (const next of [
        s.Next,
        s.Default,
        ...(s.Choices ?? []).map((c) => c.Next),
        ...(s.Catch ?? []).map((c) => c.Next),
      ]) {
        if (next) queue.push(next);
      }
    }
    expect([...seen].sort()).toEqual(Object.keys(asl.States).sort());
  });
});
