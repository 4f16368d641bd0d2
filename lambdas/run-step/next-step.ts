import { Relayed } from '../lib/engine/relay.ts';
import type { EngineDeps, JobRef, StepOutcome } from '../lib/engine/types.ts';
import { runStep } from './run-step.ts';

/**
 * RunStep's event. From the `RunNextStep` state it also carries `previous`, the result of the
 * `RunStep` state just before it: the state machine runs two steps in a row before it routes
 * (RunStep, RunNextStep, Route: three transitions for two steps), each in its own invocation.
 */
export interface RunStepEvent extends JobRef {
  previous?: unknown;
}

/**
 * Runs the job's next step, unless `previous` says RunStep's own step did not simply complete
 * (a wait, the finish, a lost session, a retry...): that result is handed on unchanged for
 * `Route`, with no step run and nothing read.
 */
export async function runNextStep(
  deps: EngineDeps,
  event: RunStepEvent,
): Promise<StepOutcome | Relayed<StepOutcome>> {
  const previous = event.previous as StepOutcome | undefined;
  if (previous !== undefined && previous.outcome !== 'completed') return new Relayed(previous);
  return runStep(deps, { tenantId: event.tenantId, jobId: event.jobId });
}
