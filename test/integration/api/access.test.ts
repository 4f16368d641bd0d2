import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createDynamoRateLimiter } from '../../../lambdas/lib/api/rate-limit.ts';
import { ROUTES } from '../../../lambdas/lib/api/routes.ts';
import { createApiKeyStore } from '../../../lambdas/lib/auth/api-keys.ts';
import { runKeysCli } from '../../../tools/cli/keys.ts';
import { call, order } from './support/http.ts';
import { TENANT_A, useApiStack } from './support/stack.ts';

/** Who may call the API and how often: keys, roles, routes, rate limits, the OpenAPI document. */

const stack = useApiStack();

const post = (path: string, body: unknown, key = stack.key('a')) =>
  call(stack.url(), 'POST', path, { key, body });
const get = (path: string, key = stack.key('a')) => call(stack.url(), 'GET', path, { key });

describe('Authentication and routing', () => {
  it.each([
    ['no key', undefined],
    ['a malformed key', 'not-a-key'],
    ['an unknown key', `blk_000000000000_${'A'.repeat(43)}`],
  ])('refuses %s with 401 and the error envelope', async (_what, key) => {
    const res = await call(stack.url(), 'GET', '/jobs', key ? { key } : {});
    expect(res.status).toBe(401);
    expect(res.json.error.code).toBe('unauthorized');
    expect(res.json.error.message).toMatch(/Bearer/);
  });

  it('refuses a revoked key from the next request on', async () => {
    const keys = stack.deps().keys;
    const created = await keys.create(TENANT_A, ['submitter']);
    expect((await get('/jobs', created.apiKey)).status).toBe(200);
    await keys.revoke(TENANT_A, created.keyId);
    expect((await get('/jobs', created.apiKey)).status).toBe(401);
    expect(await keys.verify(created.apiKey)).toBeNull();
    const listed = await keys.list(TENANT_A);
    expect(listed.find((k) => k.keyId === created.keyId)?.revokedAt).toBeDefined();
    expect(JSON.stringify(listed)).not.toContain(created.apiKey);
  });

  it('stores keys only as hashes, with the tenant item created with the first key', async () => {
    const items = await stack.ddb.doc().send(new ScanCommand({ TableName: stack.ddb.tableName() }));
    const text = JSON.stringify(items.Items);
    expect(text).not.toContain(stack.key('a'));
    expect(items.Items?.filter((i) => String(i.pk).startsWith('APIKEY#')).length).toBeGreaterThanOrEqual(4);
    expect(items.Items?.find((i) => i.pk === `T#${TENANT_A}` && i.sk === 'TENANT')).toMatchObject({
      plan: 'enterprise',
    });
  });

  it('answers 403 when the key lacks the role', async () => {
    const res = await post('/jobs', order('role-1'), stack.key('aApprover'));
    expect(res.status).toBe(403);
    expect(res.json.error).toMatchObject({ code: 'forbidden', details: { requiredRole: 'submitter' } });
    const decision = await post(
      '/jobs/role-1/decisions',
      { step: 'x', decision: 'approve' },
      stack.key('aSubmitter'),
    );
    expect(decision.status).toBe(403);
  });

  it('answers 404 for an unknown path and 405 for a wrong method', async () => {
    expect((await get('/nope')).status).toBe(404);
    const res = await call(stack.url(), 'DELETE', '/jobs', { key: stack.key('a') });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toContain('GET');
  });
});

describe('GET /openapi.json', () => {
  it('documents every route as OpenAPI 3.1, from the handlers’ schemas', async () => {
    const res = await call(stack.url(), 'GET', '/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.json;
    expect(doc.openapi).toBe('3.1.0');
    for (const route of ROUTES) {
      expect(
        doc.paths[route.path]?.[route.method.toLowerCase()],
        `${route.method} ${route.path}`,
      ).toBeDefined();
    }
    const submit = doc.components.schemas.SubmitJobRequest;
    expect(submit.required).toEqual(expect.arrayContaining(['playbook', 'inputs']));
    expect(submit.additionalProperties).toBe(false);
    expect(doc.components.schemas.Job.properties.wait).toBeDefined();
    expect(JSON.stringify(doc.components.schemas.Job)).not.toContain('taskToken');
    expect(doc.paths['/jobs'].post.responses['409']).toBeDefined();
  });
});

describe('Rate limits', () => {
  it('answers 429 with Retry-After once a key has used its burst, per key', async () => {
    const tight = await stack.startApi({ ratePerSecond: 1, burst: 3 });
    const statuses: number[] = [];
    let limited: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 0; i < 5; i++) {
      const res = await call(tight.url, 'GET', '/jobs?limit=1', { key: stack.key('aSubmitter') });
      statuses.push(res.status);
      if (res.status === 429) limited = res;
    }
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
    expect(statuses.slice(3)).toContain(429);
    expect(Number(limited?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited?.json.error.code).toBe('rate_limited');
    // Another key has its own bucket.
    expect((await call(tight.url, 'GET', '/jobs?limit=1', { key: stack.key('aApprover') })).status).toBe(200);
  });
});

describe('Function: createDynamoRateLimiter', () => {
  it('is a token bucket: a burst, then one request per interval, refilled while idle', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const limiter = createDynamoRateLimiter({
      doc: stack.ddb.doc(),
      tableName: stack.ddb.tableName(),
      limits: { ratePerSecond: 2, burst: 3 },
      clock: () => new Date(now),
    });
    const take = async () => (await limiter.take('blk_bucket')).allowed;
    expect([await take(), await take(), await take()]).toEqual([true, true, true]);
    expect(await limiter.take('blk_bucket')).toEqual({ allowed: false, retryAfterSeconds: 1 });
    now += 500; // one interval: one more request
    expect([await take(), await take()]).toEqual([true, false]);
    now += 10_000; // idle: the bucket is full again, not fuller
    expect([await take(), await take(), await take(), await take()]).toEqual([true, true, true, false]);
    expect(await limiter.take('blk_other')).toEqual({ allowed: true });
  });

  it('lets exactly the burst through when requests race', async () => {
    const limiter = createDynamoRateLimiter({
      doc: stack.ddb.doc(),
      tableName: stack.ddb.tableName(),
      limits: { ratePerSecond: 0.01, burst: 5 },
    });
    const results = await Promise.all(Array.from({ length: 12 }, () => limiter.take('blk_race')));
    expect(results.filter((r) => r.allowed)).toHaveLength(5);
  });
});

describe('CLI: keys', () => {
  it('creates a key printed once, lists it without the secret, revokes it', async () => {
    const out: string[] = [];
    const io = { out: (l: string) => out.push(l), err: (l: string) => out.push(`ERR ${l}`) };
    const store = () => createApiKeyStore({ doc: stack.ddb.doc(), tableName: stack.ddb.tableName() });
    expect(
      await runKeysCli(['create', '--tenant', 'cli-t', '--roles', 'submitter,approver'], io, store),
    ).toBe(0);
    const apiKey = out.find((l) => l.startsWith('blk_')) as string;
    expect(apiKey).toMatch(/^blk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    expect((await call(stack.url(), 'GET', '/jobs', { key: apiKey })).status).toBe(200);
    const keyId = apiKey.slice(0, 16);
    out.length = 0;
    expect(await runKeysCli(['list', '--tenant', 'cli-t'], io, store)).toBe(0);
    expect(out.join('\n')).toContain(keyId);
    expect(out.join('\n')).not.toContain(apiKey);
    expect(await runKeysCli(['revoke', '--tenant', 'cli-t', '--key-id', keyId], io, store)).toBe(0);
    expect((await call(stack.url(), 'GET', '/jobs', { key: apiKey })).status).toBe(401);
    expect(await runKeysCli(['create', '--tenant', 'cli-t', '--roles', 'root'], io, store)).toBe(1);
    expect(out.at(-1)).toMatch(/unknown role/);
    expect(await runKeysCli(['create', '--tenant', 'cli-t'], io, store)).not.toBe(0);
  });
});
