import middy from '@middy/core';
import type { StateMachineFunction } from './functions.ts';
import { meterInvocation } from './metering.ts';
import { engineDeps } from './runtime.ts';
import type { EngineDeps, JobRef } from './types.ts';

/**
 * The Lambda entry point of a state machine task: a thin middy wrapper over its core (pure,
 * takes its dependencies), with the process's dependencies built once per container and the
 * invocation recorded in the job's ledger (`meterInvocation`).
 *
 * @example
 * export const handler = engineHandler('RunStep', runStep);
 */
export function engineHandler<E extends JobRef, R>(
  fn: StateMachineFunction,
  core: (deps: EngineDeps, event: E) => Promise<R>,
) {
  return middy(async (event: E) =>
    meterInvocation(await engineDeps(), fn, event, (deps) => core(deps, event)),
  );
}
