/**
 * What probing the API from outside found, each fixed: a JSON syntax error quoting the body
 * (a one-time code with it), 500s for valid-looking input, no limit on traffic without a key,
 * errors larger than the request, and links built from the request's Host header.
 */
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createApiKeyStore } from '../../../lambdas/lib/auth/api-keys.ts';
import { REDACTED, redactText } from '../../../lambdas/lib/redact.ts';
import { call, order } from './support/http.ts';
import { TENANT_A, TENANT_B, useApiStack } from './support/stack.ts';

const stack = useApiStack({ unlimited: true });

const admin = async (): Promise<string> =>
  (
    await createApiKeyStore({ doc: stack.deps().doc, tableName: stack.deps().tableName }).create(TENANT_A, [
      'admin',
    ])
  ).apiKey;

describe('API: a malformed body is never quoted back', () => {
  it.each([
    ['/jobs/probe-1/mfa', '{"code":x"482913"}'],
    ['/jobs', '{"jobId":"probe-2","secret":x"482913"}'],
    ['/jobs/probe-1/decisions', '{"step":"pay","comment":x"482913"}'],
  ])('POST %s with a JSON syntax error answers 400 without the body', async (path, raw) => {
    const res = await call(stack.url(), 'POST', path, { key: stack.key('a'), raw });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('invalid_json');
    expect(res.text).not.toContain('482913');
    expect(res.text).not.toContain('x"');
  });
});

describe('API: valid-looking input that DynamoDB would refuse is a 400 naming the parameter', () => {
  it('refuses a cost report up to a time past year 9999', async () => {
    const res = await call(
      stack.url(),
      'GET',
      `/reports/cost?to=${encodeURIComponent('9999-12-31T23:59:59-23:59')}`,
      {
        key: await admin(),
      },
    );
    expect(res.status).toBe(400);
    expect(res.json.error.details).toEqual([{ field: 'query.to', message: expect.any(String) }]);
  });

  it("refuses a cursor of the caller's own tenant with an empty sort key", async () => {
    const cursor = Buffer.from(
      JSON.stringify({
        t: TENANT_A,
        s: null,
        k: { pk: `T#${TENANT_A}#J#x`, sk: 'JOB', gsi2pk: `T#${TENANT_A}`, gsi2sk: '' },
      }),
    ).toString('base64url');
    const res = await call(stack.url(), 'GET', `/jobs?cursor=${cursor}`, { key: stack.key('a') });
    expect(res.status).toBe(400);
    expect(res.json.error.details).toEqual([{ field: 'cursor', message: expect.any(String) }]);
  });
});

describe('API: errors stay small', () => {
  it('lists the first issues of a body with 20,000 unknown fields and counts the rest', async () => {
    const body: Record<string, unknown> = order('probe-big');
    for (let i = 0; i < 20_000; i++) body[`k${i}`] = 1;
    const raw = JSON.stringify(body);
    expect(raw.length).toBeGreaterThan(200_000);
    const res = await call(stack.url(), 'POST', '/jobs', { key: stack.key('a'), raw });
    expect(res.status).toBe(400);
    expect(res.text.length).toBeLessThan(8 * 1024);
    expect(res.json.error.details).toHaveLength(21);
    expect(res.json.error.details.at(-1).message).toMatch(/^19980 more issues/);
  });
});

describe('API: traffic without a key is limited per address', () => {
  it('answers 429 to a flood of forged webhook deliveries and of refused keys, and still serves a valid key', async () => {
    const api = await stack.startApi({ ratePerSecond: 1000, burst: 1000 }, { ratePerSecond: 1, burst: 5 });
    const forged = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call(api.url, 'POST', '/webhooks/anchor', {
          raw: JSON.stringify({ id: `evt_${i}`, type: 'session.failed', data: {} }),
          headers: { 'anchor-signature': 't=1,v1=00' },
        }),
      ),
    );
    expect(forged.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(10);
    expect(forged.find((r) => r.status === 429)?.headers.get('retry-after')).toMatch(/^\d+$/);

    const guesses = [];
    for (let i = 0; i < 12; i++)
      guesses.push(await call(api.url, 'GET', '/jobs', { key: `blk_000000000000_${'x'.repeat(43)}` }));
    expect(guesses.map((r) => r.status)).toContain(429);
    expect((await call(api.url, 'GET', '/jobs', { key: stack.key('a') })).status).toBe(200);
  });
});

describe('API: links name the API, not the Host header', () => {
  it('answers a submission with a Location on its own address whatever Host says', async () => {
    const url = new URL(stack.url());
    const body = JSON.stringify(order('probe-host'));
    const location = await new Promise<string | undefined>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          method: 'POST',
          path: '/jobs',
          headers: {
            host: 'evil.example',
            authorization: `Bearer ${stack.key('a')}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.headers.location));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect(location).toBe(`${stack.url()}/jobs/probe-host`);
  });
});

describe('API: what a refused request sends is never registered for redaction', () => {
  it("registers nothing of a refused POST /accounts, and 1,100 of them from one tenant leave another's password masked", async () => {
    const keys = createApiKeyStore({ doc: stack.deps().doc, tableName: stack.deps().tableName });
    const adminA = await admin();
    const adminB = (await keys.create(TENANT_B, ['admin'])).apiKey;
    const password = 'Acme-shop-pw-5f0e2a';
    const connected = await call(stack.url(), 'POST', '/accounts', {
      key: adminA,
      body: { application: 'shop', label: 'Shop', credentials: { username: 'ada@acme.example', password } },
    });
    expect(connected.status).toBe(201);
    expect(redactText(`x ${password}`, { tenantId: TENANT_A })).toBe(`x ${REDACTED}`);

    const refused = await call(stack.url(), 'POST', '/accounts', {
      key: adminB,
      body: {
        application: 'nowhere',
        label: 'x',
        credentials: { username: 'u', password: 'request failed' },
      },
    });
    expect(refused.status).toBe(422);
    expect(redactText('request failed')).toBe('request failed');

    for (let i = 0; i < 1_100; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          call(stack.url(), 'POST', '/accounts', {
            key: adminB,
            body: {
              application: 'nowhere',
              label: 'x',
              credentials: { username: 'u', password: `flood-${i + j}-pw` },
            },
          }),
        ),
      );
    }
    expect(redactText(`x ${password}`, { tenantId: TENANT_A })).toBe(`x ${REDACTED}`);
    expect(redactText('flood-7-pw')).toBe('flood-7-pw');
  });
});
