import middy from '@middy/core';
import { preloadBrowserLibraries } from '../browser/adapter.ts';
import { BROWSER_ACCESS_VARIABLE } from '../browser/secret-key.ts';
import { processLogger } from '../logger.ts';
import { boundedValue } from '../metrics/names.ts';
import { processMetrics } from '../metrics/recorder.ts';
import { observability } from '../observability/middleware.ts';
import { loadTracer } from '../observability/tracing.ts';
import { withTenantScope } from '../redact.ts';
import { InvocationTimeoutError } from './errors.ts';
import type { StateMachineFunction } from './functions.ts';
import { meterInvocation } from './metering.ts';
import { Relayed, unwrapRelayed } from './relay.ts';
import { ENGINE_SERVICE, engineDeps } from './runtime.ts';
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

// Before any AWS client is built (the warm-up builds them), so that they are traced.
const tracer = await loadTracer(ENGINE_SERVICE);
await warmUpAtInit();

/** What an engine event says about the work it is for (Start's carries the execution, AwaitHuman's the step). */
type EngineEvent = JobRef & { step?: unknown; executionName?: unknown };

/** How an invocation ended, for `TaskOutcomes`: its result's `outcome`, or `error`. */
function outcomeOf(result: unknown, error: unknown): string {
  if (error !== undefined) return 'error';
  if (result instanceof Relayed) return 'relayed';
  const outcome = (result as { outcome?: unknown } | null | undefined)?.outcome;
  return typeof outcome === 'string' ? outcome : 'done';
}

/**
 * The Lambda entry point of a state machine task: a thin middy wrapper over its core (pure,
 * takes its dependencies), with the process's dependencies built once per container and the
 * invocation recorded in the job's ledger (`meterInvocation`), in the scope of the job's tenant.
 * Its log lines carry the Lambda context and the job's correlation fields, its metrics are
 * flushed when it ends (`TaskOutcomes` among them), and it is traced where tracing is on.
 *
 * A core may return a {@link Relayed} result (one it hands on without doing work): the state
 * machine gets the result inside it, and the invocation is recorded as `relayed`.
 *
 * @example
 * export const handler = engineHandler('RunStep', runStep);
 */
export function engineHandler<E extends JobRef, R>(
  fn: StateMachineFunction,
  core: (deps: EngineDeps, event: E) => Promise<R | Relayed<R>>,
) {
  const metrics = processMetrics();
  return (
    middy(
      async (event: E) => {
        const deps = await engineDeps();
        // Texts the invocation writes (ledger entries, failures) are redacted for the job's tenant.
        return withTenantScope(String(event?.tenantId ?? ''), () =>
          meterInvocation(deps, fn, event, (d) => core(d, event)),
        );
      },
      {
        // Just before the deadline: a named error the state machine retries (middy's default is a
        // bare TimeoutError, which no Retry names, so a hung step would fail its job).
        timeoutEarlyResponse: () => {
          throw new InvocationTimeoutError(fn);
        },
      },
    )
      // Used first, so its `after` runs last: the observability below still sees the relay.
      .use({
        after: (request) => {
          request.response = unwrapRelayed(request.response as R | Relayed<R>);
        },
      })
      .use(
        observability<E, R | Relayed<R>>({
          log: processLogger(ENGINE_SERVICE),
          metrics,
          tracer,
          correlation: (event) => {
            const e = (event ?? {}) as EngineEvent;
            return {
              tenantId: typeof e.tenantId === 'string' ? e.tenantId : undefined,
              jobId: typeof e.jobId === 'string' ? e.jobId : undefined,
              step: typeof e.step === 'string' ? e.step : undefined,
              execution: typeof e.executionName === 'string' ? e.executionName : undefined,
            };
          },
          ended: (_event, result, error) =>
            metrics.add('TaskOutcomes', 1, {
              Function: fn,
              Outcome: boundedValue('Outcome', outcomeOf(result, error)),
            }),
        }),
      )
  );
}
