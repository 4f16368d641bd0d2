import middy from '@middy/core';
import { preloadBrowserLibraries } from '../browser/adapter.ts';
import { BROWSER_ACCESS_VARIABLE } from '../browser/secret-key.ts';
import { withTenantScope } from '../redact.ts';
import type { StateMachineFunction } from './functions.ts';
import { meterInvocation } from './metering.ts';
import { engineDeps } from './runtime.ts';
import type { EngineDeps, JobRef } from './types.ts';

/**
 * Lambda initializes a provisioned environment before any invocation reaches it: there, build
 * the engine's dependencies and load the browser library at init, so that the first step it
 * runs (often the retry of a step whose worker died) reattaches at once. An on-demand cold
 * start keeps both lazy: a function that ends up driving no browser never loads it.
 */
export async function warmUpAtInit(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  if (env.AWS_LAMBDA_INITIALIZATION_TYPE !== 'provisioned-concurrency') return false;
  // A configuration error is reported by the first invocation, as without the warm-up.
  await engineDeps().catch(() => undefined);
  if (env[BROWSER_ACCESS_VARIABLE] !== 'none') await preloadBrowserLibraries();
  return true;
}

await warmUpAtInit();

/**
 * The Lambda entry point of a state machine task: a thin middy wrapper over its core (pure,
 * takes its dependencies), with the process's dependencies built once per container and the
 * invocation recorded in the job's ledger (`meterInvocation`), in the scope of the job's tenant.
 *
 * @example
 * export const handler = engineHandler('RunStep', runStep);
 */
export function engineHandler<E extends JobRef, R>(
  fn: StateMachineFunction,
  core: (deps: EngineDeps, event: E) => Promise<R>,
) {
  return middy(async (event: E) => {
    const deps = await engineDeps();
    // Texts the invocation writes (ledger entries, failures) are redacted for the job's tenant.
    return withTenantScope(String(event?.tenantId ?? ''), () =>
      meterInvocation(deps, fn, event, (d) => core(d, event)),
    );
  });
}
