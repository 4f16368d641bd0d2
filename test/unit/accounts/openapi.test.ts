/**
 * The OpenAPI document describes the accounts and reports routes from the very schemas the
 * handlers validate with, and no response schema of an account can carry credentials.
 */
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../../lambdas/lib/api/openapi.ts';
import { ROUTES } from '../../../lambdas/lib/api/routes.ts';

describe('OpenAPI: accounts and reports', () => {
  it('documents the accounts and reports routes in the OpenAPI document, from their schemas', async ({
    expect,
  }) => {
    // biome-ignore lint/suspicious/noExplicitAny: the document is checked path by path
    const doc = buildOpenApiDocument() as any;
    expect(Object.keys(doc.paths['/accounts'])).toEqual(expect.arrayContaining(['get', 'post']));
    expect(Object.keys(doc.paths['/accounts/{accountId}'])).toEqual(
      expect.arrayContaining(['get', 'delete']),
    );
    expect(doc.paths['/reports/cost'].get.responses['200']).toBeDefined();
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['ConnectAccountRequest', 'Account', 'CostReport']),
    );
    expect(doc.components.schemas.Job.properties.queue).toBeDefined();
    // No response schema of an account has a field that could carry credentials.
    for (const id of ['Account', 'AccountResponse', 'AccountList']) {
      const fields = JSON.stringify(doc.components.schemas[id]).match(/"(\w+)":\{/g) ?? [];
      expect(fields.join(' '), id).not.toMatch(/password|username|totp|"credentials"/i);
    }
    expect(Object.keys(doc.components.schemas.Account.properties)).not.toContain('credentials');
  });

  it('declares every accounts and reports route, for admins (the table the API, the local server and the stack all read)', () => {
    const keys = ROUTES.map((r) => `${r.method} ${r.path}`);
    expect(keys).toEqual(
      expect.arrayContaining([
        'POST /accounts',
        'GET /accounts',
        'GET /accounts/{accountId}',
        'DELETE /accounts/{accountId}',
        'GET /reports/cost',
      ]),
    );
    const callback = 'GET /accounts/connect/callback/{callbackKey}';
    for (const r of ROUTES.filter((x) => x.path.startsWith('/accounts') || x.path.startsWith('/reports'))) {
      if (`${r.method} ${r.path}` === callback) continue;
      expect(r.auth, r.path).toBe(true);
      expect(r.roles, r.path).toEqual(['admin']);
    }
  });

  it("documents the hosted sign-in: POST /accounts/connect for admins, its callback open (Anchor's redirect carries no key)", () => {
    // biome-ignore lint/suspicious/noExplicitAny: the document is checked path by path
    const doc = buildOpenApiDocument() as any;
    const start = ROUTES.find((r) => r.method === 'POST' && r.path === '/accounts/connect');
    const callback = ROUTES.find((r) => r.path === '/accounts/connect/callback/{callbackKey}');
    expect(start?.auth).toBe(true);
    expect(start?.roles).toEqual(['admin']);
    expect(callback?.method).toBe('GET');
    expect(callback?.auth).toBe(false);
    expect(doc.paths['/accounts/connect'].post.responses['201']).toBeDefined();
    const answers = doc.paths['/accounts/connect/callback/{callbackKey}'].get.responses;
    expect(Object.keys(answers)).toEqual(expect.arrayContaining(['200', '404', '409', '410', '422']));
    expect(doc.paths['/accounts/connect/callback/{callbackKey}'].get.security).toBeUndefined();
    for (const id of ['PendingConnection', 'ConnectCallbackResponse']) {
      const fields = JSON.stringify(doc.components.schemas[id]).match(/"(\w+)":\{/g) ?? [];
      expect(fields.join(' '), id).not.toMatch(/password|username|totp|"credentials"|token"/i);
    }
  });
});
