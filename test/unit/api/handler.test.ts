import { ExecutionAlreadyExists, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { createApiHandler } from '../../../lambdas/lib/api/app.ts';
import { authorizeEvent } from '../../../lambdas/lib/api/auth.ts';
import type { ApiDeps } from '../../../lambdas/lib/api/deps.ts';
import type { HttpApiEvent } from '../../../lambdas/lib/api/events.ts';
import { unlimited } from '../../../lambdas/lib/api/rate-limit.ts';
import { startJobExecution } from '../../../lambdas/lib/api/step-functions.ts';
import type { ApiKeyStore } from '../../../lambdas/lib/auth/api-keys.ts';
import { hasRole, parseRoles } from '../../../lambdas/lib/auth/api-keys.ts';
import { JobNotFoundError } from '../../../lambdas/lib/ledger/errors.ts';
import { unavailableReceiptSigner } from '../../../lambdas/lib/receipts/runtime.ts';

/** Unit tests of the Lambda handler's edges: no network, dependencies in memory. */

function event(
  method: string,
  path: string,
  options: { body?: string; base64?: boolean; auth?: boolean } = {},
): HttpApiEvent {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: {},
    ...(options.body === undefined ? {} : { body: options.body }),
    isBase64Encoded: options.base64 ?? false,
    requestContext: {
      requestId: 'r1',
      routeKey: '$default',
      stage: '$default',
      timeEpoch: 0,
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 't' },
      ...(options.auth === false
        ? {}
        : { authorizer: { lambda: { tenantId: 'acme', roles: 'submitter,approver', keyId: 'blk_0' } } }),
    },
  };
}

function depsWith(getJob: () => Promise<never>): ApiDeps {
  const lines: string[] = [];
  return {
    engine: {
      ledger: { getJob },
      playbooks: { get: () => undefined },
      log: { error: (m: string, f: unknown) => lines.push(`${m} ${JSON.stringify(f)}`) },
      clock: () => new Date(),
    },
    rateLimiter: unlimited,
    anonymousRateLimiter: unlimited,
    receipts: unavailableReceiptSigner(),
    maxBodyBytes: 1024,
    mcpAnswerTenants: new Set(),
    baseUrl: '',
    logged: lines,
  } as unknown as ApiDeps;
}

const invoke = (deps: ApiDeps, e: HttpApiEvent) =>
  createApiHandler(async () => deps)(e, { awsRequestId: 'x' } as never) as Promise<{
    statusCode: number;
    body: string;
    headers: Record<string, string>;
  }>;

describe('Function: createApiHandler', () => {
  it('answers an unexpected error with a 500 that says nothing of its cause, and logs it', async () => {
    const deps = depsWith(async () => {
      throw new Error('db password=hunter2 at 10.0.0.7');
    });
    const res = await invoke(deps, event('GET', '/jobs/j1'));
    expect(res.statusCode).toBe(500);
    expect(JSON.parse(res.body)).toEqual({
      error: { code: 'internal_error', message: 'the request failed on our side; retry later' },
    });
    expect(res.body).not.toContain('hunter2');
    expect((deps as unknown as { logged: string[] }).logged.join('\n')).toContain('request failed');
  });

  it('translates a missing job into the 404 envelope', async () => {
    const res = await invoke(
      depsWith(async () => {
        throw new JobNotFoundError('acme', 'j1');
      }),
      event('GET', '/jobs/j1'),
    );
    expect(res.statusCode).toBe(404);
    expect(res.headers['Content-Type']).toBe('application/json');
    expect(JSON.parse(res.body).error).toEqual({ code: 'not_found', message: 'job j1 not found' });
  });

  it('refuses a request without the authorizer context with 401', async () => {
    const res = await invoke(
      depsWith(async () => ({}) as never),
      event('GET', '/jobs/j1', { auth: false }),
    );
    expect(res.statusCode).toBe(401);
  });

  it('measures a base64 body by its decoded size (413)', async () => {
    const body = Buffer.alloc(2048, 'a').toString('base64');
    const res = await invoke(
      depsWith(async () => ({}) as never),
      event('POST', '/jobs', { body, base64: true }),
    );
    expect(res.statusCode).toBe(413);
  });
});

describe('Function: startJobExecution', () => {
  it('treats an existing execution of the job as started, and throttling as 503', async () => {
    const JOB = { tenantId: 'acme', jobId: 'j1', createdAt: '2026-01-01T00:00:00.000Z' };
    const sfn = mockClient(SFNClient);
    sfn
      .on(StartExecutionCommand)
      .rejectsOnce(new ExecutionAlreadyExists({ message: 'exists', $metadata: {} }))
      .rejectsOnce(Object.assign(new Error('slow down'), { name: 'ThrottlingException' }))
      .resolvesOnce({ executionArn: 'a' });
    const client = new SFNClient({ region: 'us-east-1', maxAttempts: 1 });
    expect(await startJobExecution(client, 'arn:aws:states:us-east-1:1:stateMachine:m', JOB)).toMatchObject({
      started: false,
    });
    await expect(
      startJobExecution(client, 'arn:aws:states:us-east-1:1:stateMachine:m', JOB),
    ).rejects.toMatchObject({
      statusCode: 503,
    });
    await startJobExecution(client, 'arn:aws:states:us-east-1:1:stateMachine:m', JOB);
    const input = sfn.commandCalls(StartExecutionCommand).at(-1)?.args[0].input;
    expect(input).toMatchObject({ name: expect.stringMatching(/^j1-[0-9a-f]{16}-[0-9a-f]{8}-g0$/) });
    expect(JSON.parse(input?.input ?? '')).toEqual({ tenantId: 'acme', jobId: 'j1' });
    sfn.restore();
  });
});

describe('Function: authorizeEvent', () => {
  const keys = {
    verify: async (k: string) =>
      k === 'blk_good' ? { tenantId: 'acme', roles: ['approver'], keyId: 'blk_1' } : null,
  } as unknown as ApiKeyStore;

  it.each([
    [{ headers: { authorization: 'Bearer blk_good' } }, true],
    [{ headers: { Authorization: 'bearer blk_good' } }, true],
    [{ identitySource: ['Bearer blk_good'] }, true],
    [{ headers: { authorization: 'Basic blk_good' } }, false],
    [{ headers: { authorization: 'Bearer blk_bad' } }, false],
    [{}, false],
  ])('decides %j -> %s', async (input, allowed) => {
    const result = await authorizeEvent(keys, input);
    expect(result.isAuthorized).toBe(allowed);
    if (allowed) expect(result.context).toEqual({ tenantId: 'acme', roles: 'approver', keyId: 'blk_1' });
  });

  it("counts refused keys against the request's source address, and answers only isAuthorized", async () => {
    const keys = { verify: async () => null } as unknown as ApiKeyStore;
    const taken: string[] = [];
    const limiter = {
      take: async (bucket: string) => {
        taken.push(bucket);
        return taken.length > 1
          ? { allowed: false as const, retryAfterSeconds: 3 }
          : { allowed: true as const };
      },
    };
    const input = {
      headers: { authorization: 'Bearer blk_000000000000_nope' },
      requestContext: { http: { sourceIp: '203.0.113.9' } },
    };
    expect(await authorizeEvent(keys, input, limiter)).toEqual({ isAuthorized: false });
    expect(await authorizeEvent(keys, input, limiter)).toEqual({ isAuthorized: false });
    expect(taken).toEqual(['ip:203.0.113.9', 'ip:203.0.113.9']);
  });

  it('parses roles strictly; admin holds every role', () => {
    expect(parseRoles('submitter, approver')).toEqual(['submitter', 'approver']);
    expect(() => parseRoles('root')).toThrow(/unknown role/);
    expect(() => parseRoles('')).toThrow();
    expect(hasRole({ roles: ['admin'] }, 'approver')).toBe(true);
    expect(hasRole({ roles: ['submitter'] }, 'approver')).toBe(false);
  });
});
