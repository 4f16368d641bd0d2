/**
 * X-Ray tracing through Powertools for AWS Lambda's Tracer, loaded only where tracing is on.
 *
 * The stack deploys every function with active tracing and `BELAY_TRACING=xray`; there the
 * handler module loads the Tracer (and the X-Ray SDK under it) at init, before any AWS client
 * is built, and every client built afterwards (`traced`) records its calls as subsegments and
 * passes the trace header on: the API's `StartExecution` continues the trace into the state
 * machine (tracing enabled on it), and the state machine into each task function. Anywhere else
 * (the local stack, tests, tools) nothing is imported and `traced` returns the client as it is.
 */
import type { Tracer } from '@aws-lambda-powertools/tracer';

/** Set to `xray` on a function deployed with active tracing (see `BelayFunction`). */
export const TRACING_VARIABLE = 'BELAY_TRACING';

let tracer: Tracer | undefined;

/**
 * Loads the Tracer when `BELAY_TRACING=xray` (once per process); undefined otherwise. Call it
 * at the top of a handler module, before the process's AWS clients are built.
 *
 * @example
 * const tracer = await loadTracer('belay-engine');
 */
export async function loadTracer(
  service: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Tracer | undefined> {
  if (env[TRACING_VARIABLE] !== 'xray') return undefined;
  if (!tracer) {
    // Error texts can quote page text; X-Ray keeps the error's name from Lambda, not its message.
    process.env.POWERTOOLS_TRACER_CAPTURE_ERROR ??= 'false';
    const { Tracer: PowertoolsTracer } = await import('@aws-lambda-powertools/tracer');
    tracer = new PowertoolsTracer({ serviceName: service, captureHTTPsRequests: true });
  }
  return tracer;
}

/** The process's Tracer once loaded (undefined where tracing is off). */
export function activeTracer(): Tracer | undefined {
  return tracer;
}

/**
 * An AWS SDK v3 client whose calls are traced, when the Tracer is loaded; else the same client.
 *
 * @example
 * const client = traced(new DynamoDBClient({}));
 */
export function traced<T>(client: T): T {
  return tracer ? tracer.captureAWSv3Client(client) : client;
}
