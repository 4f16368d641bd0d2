import type { HistoryEvent } from './sfn/index.ts';

/**
 * Turns execution history events into one-line progress reports for people: which step of
 * which job completed, what the job waits for, how it ended. Used by `npm start` and the demo.
 */
export interface ProgressLine {
  jobId: string;
  text: string;
  /** What happened, for callers that react (e.g. the demo approving a wait). */
  kind: 'step' | 'wait' | 'recovery' | 'finished' | 'failed' | 'info';
  state: string;
  result?: Record<string, unknown>;
}

interface ExecutionInfo {
  jobId: string;
  tenantId: string;
}

const OUTCOME_TEXT: Record<string, (r: Record<string, unknown>) => string> = {
  completed: (r) => `step ${Number(r.stepIndex) + 1}/${r.stepCount} ${r.step} verified`,
  finished: (r) => `step ${r.stepCount}/${r.stepCount} ${r.step} verified; verifying the outcome`,
  needs_approval: (r) => `step ${r.step} needs approval`,
  auth_expired: (r) => `signed out of ${r.app} at ${r.step}: signing in again`,
  mfa_required: (r) => `signing in to ${r.app} at ${r.step} needs a one-time code from a person`,
  session_lost: (r) => `browser session for ${r.app} lost at ${r.step}: opening a new one from the profile`,
  uncertain: (r) => `the outcome of ${r.step} is unknown: asking the application`,
  layout_changed: (r) => `the page changed at ${r.step}: waiting for a reviewer`,
  retry: (r) => `step ${r.step} failed (${r.detail}); retrying in ${r.retryAfterSeconds}s`,
};

const WAITS: Record<string, string> = {
  AwaitApproval: 'approval',
  AwaitMfa: 'a one-time code',
  AwaitReview: 'review',
};

export function createProgressTracker(): (event: HistoryEvent) => ProgressLine | undefined {
  const executions = new Map<string, ExecutionInfo>();
  /** The last result RunStep or RunNextStep reported, per execution: RunNextStep hands on one it did not run. */
  const lastStepResult = new Map<string, string>();
  return (event) => {
    if (event.type === 'ExecutionStarted') {
      const input = parse(event.executionStartedEventDetails?.input) as Partial<ExecutionInfo>;
      if (input.jobId && input.tenantId)
        executions.set(event.executionArn, { jobId: input.jobId, tenantId: input.tenantId });
      return undefined;
    }
    const info = executions.get(event.executionArn);
    if (!info) return undefined;
    const { jobId } = info;
    if (event.type === 'ExecutionSucceeded')
      return { jobId, kind: 'finished', state: 'Succeeded', text: 'execution ended' };
    if (event.type === 'ExecutionAborted') {
      return {
        jobId,
        kind: 'failed',
        state: 'Aborted',
        text: 'execution stopped (the job was cancelled or the stack is stopping)',
      };
    }
    if (event.type === 'ExecutionFailed') {
      return {
        jobId,
        kind: 'failed',
        state: 'Failed',
        text: `failed: ${event.executionFailedEventDetails?.error ?? 'error'}`,
      };
    }
    if (event.type === 'TaskStateEntered') {
      const name = event.stateEnteredEventDetails?.name ?? '';
      const wait = WAITS[name];
      if (!wait) return undefined;
      const input = parse(event.stateEnteredEventDetails?.input) as { result?: Record<string, unknown> };
      const step = String(input.result?.step ?? '?');
      return {
        jobId,
        kind: 'wait',
        state: name,
        text: `waiting for ${wait} at ${step}`,
        result: { step, wait },
      };
    }
    if (event.type !== 'TaskStateExited') return undefined;
    const name = event.stateExitedEventDetails?.name ?? '';
    const output = parse(event.stateExitedEventDetails?.output) as {
      result?: Record<string, unknown>;
      start?: Record<string, unknown>;
    };
    // Start keeps its result at $.start; every other task at $.result.
    const result = (name === 'Start' ? output.start : output.result) ?? {};
    const outcome = String(result.outcome ?? '');
    switch (name) {
      case 'RunStep':
      case 'RunNextStep': {
        const seen = JSON.stringify(result);
        const relayed = name === 'RunNextStep' && lastStepResult.get(event.executionArn) === seen;
        lastStepResult.set(event.executionArn, seen);
        if (relayed) return undefined;
        const text = OUTCOME_TEXT[outcome]?.(result);
        if (!text) return undefined;
        const kind = outcome === 'completed' || outcome === 'finished' ? 'step' : 'recovery';
        return { jobId, kind, state: name, text, result };
      }
      case 'OpenSession':
        return outcome === 'stopped'
          ? undefined
          : {
              jobId,
              kind: 'info',
              state: name,
              text: `browser session ${outcome}: ${result.sessionId}`,
              result,
            };
      case 'Start':
        if (outcome === 'queued') {
          return {
            jobId,
            kind: 'info',
            state: name,
            text: `queued: place ${result.position} for a browser`,
            result,
          };
        }
        return outcome === 'ready'
          ? {
              jobId,
              kind: 'info',
              state: name,
              text: `browser session ${result.session}: ${result.sessionId}`,
              result,
            }
          : undefined;
      case 'Reauthenticate':
        return {
          jobId,
          kind: 'recovery',
          state: name,
          text:
            outcome === 'mfa_required'
              ? `${result.app} asks for a one-time code: waiting for a person`
              : `signed in to ${result.app} again`,
          result,
        };
      case 'Reconcile':
        return { jobId, kind: 'recovery', state: name, text: `probe of ${result.step}: ${outcome}`, result };
      case 'Finish':
        return outcome === 'succeeded'
          ? {
              jobId,
              kind: 'finished',
              state: name,
              text: 'outcome verified in the application: SUCCEEDED',
              result,
            }
          : undefined;
      default:
        return undefined;
    }
  };
}

function parse(text: string | undefined): unknown {
  if (!text) return {};
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}
