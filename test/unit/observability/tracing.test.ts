import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SFNClient } from '@aws-sdk/client-sfn';
import { afterAll, describe, expect, it } from 'vitest';
import {
  activeTracer,
  loadTracer,
  TRACING_VARIABLE,
  traced,
} from '../../../lambdas/lib/observability/tracing.ts';

const credentials = { accessKeyId: 'x', secretAccessKey: 'x' };
/** The names of a client's middlewares (the X-Ray capture adds its own). */
const middlewares = (client: { middlewareStack: { identify(): string[] } }) =>
  client.middlewareStack.identify();

const saved = { ...process.env };
afterAll(() => {
  for (const key of ['AWS_EXECUTION_ENV', 'POWERTOOLS_TRACER_CAPTURE_ERROR']) {
    if (saved[key] === undefined) delete process.env[key];
    else process.env[key] = saved[key];
  }
});

describe('Function: loadTracer and traced', () => {
  it('loads nothing and leaves clients as they are where tracing is off', async () => {
    expect(await loadTracer('belay-engine', {})).toBeUndefined();
    expect(activeTracer()).toBeUndefined();
    const client = new DynamoDBClient({ region: 'us-east-1', credentials });
    const before = middlewares(client);
    expect(traced(client)).toBe(client);
    expect(middlewares(client)).toEqual(before);
  });

  it("with BELAY_TRACING=xray in Lambda, loads Powertools' Tracer once and captures every client built after it", async () => {
    // As the Lambda runtime sets it; Powertools' Tracer traces only there.
    process.env.AWS_EXECUTION_ENV = 'AWS_Lambda_nodejs22.x';
    const env = { [TRACING_VARIABLE]: 'xray' };
    const tracer = await loadTracer('belay-engine', env);
    expect(tracer).toBeDefined();
    expect(await loadTracer('belay-api', env)).toBe(tracer);
    expect(activeTracer()).toBe(tracer);
    expect(tracer?.isTracingEnabled()).toBe(true);
    // Error texts can quote page text: they are not recorded.
    expect(process.env.POWERTOOLS_TRACER_CAPTURE_ERROR).toBe('false');
    for (const client of [
      new DynamoDBClient({ region: 'us-east-1', credentials }),
      new SFNClient({ region: 'us-east-1', credentials }),
    ]) {
      const before = middlewares(client);
      traced(client);
      const added = middlewares(client).filter((m) => !before.includes(m));
      expect(added.join(' ')).toMatch(/XRay/i);
    }
  });
});
