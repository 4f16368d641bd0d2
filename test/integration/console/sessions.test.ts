import { describe, expect, it } from 'vitest';
import { TENANT_A, useApiStack } from '../api/support/stack.ts';

/**
 * Console sessions over HTTP (the local API server, DynamoDB Local): signing in exchanges a key
 * for a cookie; revoking the key ends its sessions at once; a change needs the page's CSRF
 * token; a sign-in from another origin is refused; the cookie never opens the bearer API.
 */
const stack = useApiStack();

async function signIn(key: string, origin?: string): Promise<Response> {
  return fetch(`${stack.url()}/console/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(origin ? { origin } : {}) },
    body: new URLSearchParams({ apiKey: key }).toString(),
    redirect: 'manual',
  });
}

const cookieOf = (res: Response): string => (res.headers.get('set-cookie') ?? '').split(';')[0] as string;

describe('Console sessions', () => {
  it('exchange a key for an httpOnly, SameSite=Strict cookie that ends when the key is revoked', async () => {
    const created = await stack.deps().keys.create(TENANT_A, ['submitter', 'approver']);
    const res = await signIn(created.apiKey, stack.url());
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/console/inbox');
    const setCookie = res.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(
      /^belay_console=[A-Za-z0-9_-]{43}; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=\d+$/,
    );
    expect(setCookie).not.toContain(created.apiKey);
    const cookie = cookieOf(res);

    const page = await fetch(`${stack.url()}/console/jobs`, { headers: { cookie }, redirect: 'manual' });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await page.text()).toContain('<h1>Jobs</h1>');
    // The cookie is not a credential of the bearer API.
    expect((await fetch(`${stack.url()}/jobs`, { headers: { cookie } })).status).toBe(401);
    // A change without the page's CSRF token is refused, with it the role check applies.
    const noCsrf = await fetch(`${stack.url()}/console/api/jobs/nope/cancel`, {
      method: 'POST',
      headers: { cookie },
    });
    expect(noCsrf.status).toBe(403);
    expect((await noCsrf.json()).error.code).toBe('csrf');

    await stack.deps().keys.revoke(TENANT_A, created.keyId);
    const after = await fetch(`${stack.url()}/console/jobs`, { headers: { cookie }, redirect: 'manual' });
    expect(after.status).toBe(303);
    expect(after.headers.get('location')).toBe('/console/sign-in');
    const action = await fetch(`${stack.url()}/console/api/jobs/nope/cancel`, {
      method: 'POST',
      headers: { cookie },
    });
    expect(action.status).toBe(401);
  });

  it('refuse a bad key (401) and a sign-in posted from another origin (403)', async () => {
    expect((await signIn('blk_000000000000_nope', stack.url())).status).toBe(401);
    expect((await signIn(stack.key('a'), 'https://evil.example')).status).toBe(403);
    expect((await signIn(stack.key('a'), stack.url())).status).toBe(303);
  });
});
