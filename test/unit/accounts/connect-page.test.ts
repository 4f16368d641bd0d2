/** The pages a person's browser gets at the end of the hosted sign-in. */
import { describe, expect, it } from 'vitest';
import { connectedPage, refusedPage, wantsPage } from '../../../lambdas/lib/api/accounts/connect-page.ts';
import { ConflictError, ServiceUnavailableError } from '../../../lambdas/lib/api/errors.ts';
import type { HttpApiEvent } from '../../../lambdas/lib/api/events.ts';

const withAccept = (accept?: string) => ({ headers: accept ? { accept } : {} }) as unknown as HttpApiEvent;

describe('Function: wantsPage', () => {
  it('is a browser that asks for HTML, not a program', () => {
    expect(wantsPage(withAccept('text/html,application/xhtml+xml,*/*;q=0.8'))).toBe(true);
    expect(wantsPage(withAccept('application/json'))).toBe(false);
    expect(wantsPage(withAccept())).toBe(false);
  });
});

describe('Function: connectedPage', () => {
  it('names the account, with its label escaped, under the console headers', () => {
    const res = connectedPage({
      accountId: 'acct_1',
      application: 'shop',
      label: '<img src=x onerror=alert(1)>',
      status: 'connected',
      profile: 'p',
      domains: [],
      createdAt: '2026-12-01T00:00:00.000Z',
    } as never);
    expect(res.statusCode).toBe(200);
    expect(res.headers?.['Content-Type']).toMatch(/^text\/html/);
    expect(res.headers?.['Content-Security-Policy']).toContain("default-src 'none'");
    expect(res.headers?.['Referrer-Policy']).toBe('no-referrer');
    const body = res.raw?.body ?? '';
    expect(body).toContain('Account connected');
    expect(body).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(body).not.toContain('<img src=x');
    // One main landmark (the frame's), and the way back to the console's list.
    expect(body.match(/<main/g)).toHaveLength(1);
    expect(body).toContain('<a href="/console/accounts">see the accounts in the console</a>');
  });
});

describe('Function: refusedPage', () => {
  it("answers a refusal with the API's status and its reason", () => {
    const res = refusedPage(
      new ConflictError('connection_used', 'this account connection was completed already'),
    );
    expect(res.statusCode).toBe(409);
    expect(res.raw?.body).toContain('This account connection was completed already.');
  });

  it("leaves an error whose message is not shown (a 5xx) to the API's own answer", () => {
    const err = new ServiceUnavailableError('DynamoDB said no');
    expect(() => refusedPage(err)).toThrow(err);
    expect(() => refusedPage(new Error('boom'))).toThrow('boom');
  });
});
