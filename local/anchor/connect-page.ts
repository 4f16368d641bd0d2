/**
 * The hosted connect page of the local Anchor service: the stand-in for Anchor's OmniConnect
 * page (`https://app.anchorbrowser.io/identity/create?token=...`). A person opens it with an
 * identity token, enters the account's sign-in (username, password, and an authenticator secret
 * when the application's flows use one), and is sent back to the token's callback with
 * `?identityId=<id>`, as Anchor does. The token is used up by the first successful post; a used,
 * expired or unknown token gets a page saying which, and no identity.
 *
 * Served without the API key (a person's browser has none), at `/_local/identity/create`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from './errors.ts';
import { readText } from './http.ts';
import { type Credential, type IdentityRegistry, tokenRefusal } from './identities.ts';

/** The page's path on the local service. */
export const CONNECT_PAGE_PATH = '/_local/identity/create';

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * @param callbackUrl where the page's form is sent on to: browsers hold a form's redirects to
 * `form-action` too (Chromium refuses the redirect to the callback under `'self'` alone)
 */
function page(res: ServerResponse, status: number, title: string, body: string, callbackUrl?: string): void {
  const html = `<!doctype html><html lang="en"><meta charset="utf-8"><title>${esc(title)}</title><main><h1>${esc(title)}</h1>${body}</main></html>`;
  const callbackOrigin = callbackUrl ? new URL(callbackUrl).origin : 'null';
  const formAction = callbackOrigin === 'null' ? "'self'" : `'self' ${callbackOrigin}`;
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'content-security-policy': `default-src 'none'; form-action ${formAction}`,
  });
  res.end(html);
}

function form(token: string, appName: string, withAuthenticator: boolean): string {
  return `<p>Sign in to <strong>${esc(appName)}</strong>. Your password is kept by the browser service; the app that sent you here never sees it.</p>
<form method="post" action="${CONNECT_PAGE_PATH}" data-form="connect">
<input type="hidden" name="token" value="${esc(token)}">
<label>Username <input name="username" autocomplete="username" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
${withAuthenticator ? '<label>Authenticator secret (optional) <input name="totp_secret" autocomplete="off"></label>' : ''}
<button type="submit">Connect</button>
</form>`;
}

/** Serves the connect page (GET) and its form (POST). Returns false for any other path. */
export async function routeConnectPage(
  registry: IdentityRegistry,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<boolean> {
  if (url.pathname !== CONNECT_PAGE_PATH) return false;
  if (req.method === 'GET') {
    const token = url.searchParams.get('token') ?? '';
    const record = await registry.token(token);
    const refused = tokenRefusal(record, new Date());
    if (refused || !record) {
      page(res, 410, 'Cannot connect', `<p>${esc(refused ?? 'This sign-in link is not valid.')}</p>`);
      return true;
    }
    const app = await registry.application(record.applicationId);
    const totp = app.auth_flows.some((f) => f.methods.includes('authenticator'));
    page(res, 200, `Connect your ${app.name} account`, form(token, app.name, totp), record.callbackUrl);
    return true;
  }
  if (req.method !== 'POST') throw new ApiError(405, 'Method not allowed');
  const fields = new URLSearchParams(await readText(req));
  const username = fields.get('username') ?? '';
  const password = fields.get('password') ?? '';
  const secret = (fields.get('totp_secret') ?? '').replace(/\s+/g, '').toUpperCase();
  if (!username || !password) {
    // The token is not used up by a form sent half-filled.
    page(res, 400, 'Cannot connect', '<p>Enter the username and the password.</p>');
    return true;
  }
  let record: Awaited<ReturnType<IdentityRegistry['useToken']>>;
  try {
    record = await registry.useToken(fields.get('token') ?? '');
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    page(res, err.status, 'Cannot connect', `<p>${esc(err.message)}</p>`);
    return true;
  }
  const credentials: Credential[] = [{ type: 'username_password', username, password }];
  if (secret) credentials.push({ type: 'authenticator', secret });
  const identity = await registry.createIdentity({
    applicationId: record.applicationId,
    credentials,
    tokenHash: record.tokenHash,
  });
  const back = new URL(record.callbackUrl);
  back.searchParams.set('identityId', identity.id);
  res.writeHead(302, { location: back.toString(), 'cache-control': 'no-store' });
  res.end();
  return true;
}
