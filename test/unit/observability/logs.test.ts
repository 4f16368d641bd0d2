import middy from '@middy/core';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../lambdas/lib/logger.ts';
import { createMetricsRecorder } from '../../../lambdas/lib/metrics/recorder.ts';
import { observability } from '../../../lambdas/lib/observability/middleware.ts';
import { REDACTED, registerSecret, withTenantScope } from '../../../lambdas/lib/redact.ts';

/** A Lambda context as the runtime passes it. */
const context = {
  functionName: 'belay-run-step',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:belay-run-step',
  memoryLimitInMB: '1024',
  awsRequestId: 'c6af9ac6-7b61-11e6-9a41-93e812345678',
  logGroupName: '/aws/lambda/belay-run-step',
  logStreamName: '2026/12/01/[$LATEST]abc',
  getRemainingTimeInMillis: () => 60_000,
  callbackWaitsForEmptyEventLoop: true,
} as never;

type Event = { tenantId: string; jobId: string; step: string; executionName: string };

describe('Function: createLogger with the observability middleware', () => {
  it('writes a line with the Lambda context, the correlation fields and no secret', async () => {
    const password = 'hunter2-correct-horse';
    registerSecret('acme', password);
    const lines: string[] = [];
    const log = createLogger({ service: 'belay-engine', sink: (line) => lines.push(line) });
    const metrics = createMetricsRecorder({ sink: () => undefined });
    const handler = middy(async (event: Event) => {
      // What the engine learns as it goes: the attempt and the session it works in.
      log.correlate({ attempt: 2, sessionId: 'sess_42' });
      withTenantScope(event.tenantId, () =>
        log.info(`signed in as buyer with ${password}`, {
          password,
          card: '4242 4242 4242 4242',
          header: 'Bearer abcdefghijklmnop',
          error: new Error(`form said: ${password}`),
        }),
      );
      return { outcome: 'completed' };
    }).use(
      observability<Event, { outcome: string }>({
        log,
        metrics,
        tracer: undefined,
        correlation: (e) => ({
          tenantId: e.tenantId,
          jobId: e.jobId,
          step: e.step,
          execution: e.executionName,
        }),
      }),
    );

    await handler(
      { tenantId: 'acme', jobId: 'job-1', step: 'place-order', executionName: 'job-1-abc-g0' },
      context,
    );

    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0] as string) as Record<string, unknown>;
    expect(line).toMatchObject({
      level: 'INFO',
      service: 'belay-engine',
      // The Lambda context (Powertools' injectLambdaContext).
      function_name: 'belay-run-step',
      function_request_id: 'c6af9ac6-7b61-11e6-9a41-93e812345678',
      function_arn: 'arn:aws:lambda:us-east-1:123456789012:function:belay-run-step',
      function_memory_size: '1024',
      cold_start: expect.any(Boolean),
      // Belay's correlation fields.
      tenantId: 'acme',
      jobId: 'job-1',
      step: 'place-order',
      attempt: 2,
      sessionId: 'sess_42',
      execution: 'job-1-abc-g0',
      // Redacted by the formatter.
      password: REDACTED,
      card: '[card ****4242]',
      header: `Bearer ${REDACTED}`,
    });
    expect(line.message).toBe(`signed in as buyer with ${REDACTED}`);
    expect((line.error as Record<string, unknown>).name).toBe('Error');
    expect(lines[0]).not.toContain(password);
    expect(lines[0]).not.toContain('4242 4242 4242 4242');
    expect(lines[0]).not.toContain('abcdefghijklmnop');
  });

  it('clears the correlation fields after each invocation', async () => {
    const lines: string[] = [];
    const log = createLogger({ sink: (line) => lines.push(line) });
    const handler = middy(async (event: Event) => {
      if (event.jobId === 'job-1') log.correlate({ attempt: 3 });
      log.info('step');
    }).use(
      observability<Event, void>({
        log,
        metrics: createMetricsRecorder({ sink: () => undefined }),
        tracer: undefined,
        correlation: (e) => ({ jobId: e.jobId }),
      }),
    );
    await handler({ tenantId: 'a', jobId: 'job-1', step: 's', executionName: 'x' }, context);
    await handler({ tenantId: 'a', jobId: 'job-2', step: 's', executionName: 'x' }, context);
    const [first, second] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(first).toMatchObject({ jobId: 'job-1', attempt: 3 });
    expect(second?.jobId).toBe('job-2');
    expect(second).not.toHaveProperty('attempt');
  });

  it("keeps a child logger's fields and the parent's level, and writes nothing below it", () => {
    const lines: string[] = [];
    const log = createLogger({ level: 'warn', sink: (line, level) => lines.push(`${level} ${line}`) });
    const child = log.child({ jobId: 'job-9' });
    child.info('not written');
    child.warn('written', { token: 'secret-token-value' });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^warn /);
    expect(lines[0]).toContain('"jobId":"job-9"');
    expect(lines[0]).not.toContain('secret-token-value');
  });
});
