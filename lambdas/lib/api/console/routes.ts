import { header } from '../events.ts';
import { type Route, type RouteRequest, type RouteResponse, rawResponse } from '../route.ts';
import { CONNECT_ACCOUNT_ACTION } from './accounts.ts';
import { CONSOLE_CSS, CONSOLE_JS } from './assets.ts';
import { clearedSessionCookie, cookieOf, SESSION_COOKIE, sessionCookie } from './cookies.ts';
import { consoleAction, consolePageRoute, formOf, redirect } from './handle.ts';
import { CONSOLE_HEADERS, consolePage } from './layout.ts';
import { signInBody } from './pages.ts';
import { CONSOLE_PAGES } from './views.ts';

/**
 * The console's routes. They are open at API Gateway (no Lambda authorizer: a browser sends
 * a cookie, not a bearer key) and authenticate the session cookie themselves (see
 * `handle.ts`); the bearer API never accepts the cookie. DESIGN.md says why.
 */

function asset(path: string, contentType: string, body: string): Route {
  return {
    method: 'GET',
    path,
    auth: false,
    roles: [],
    async handle() {
      return rawResponse(200, contentType, body, {
        headers: { 'Cache-Control': 'public, max-age=300', 'X-Content-Type-Options': 'nosniff' },
      });
    },
  };
}

function signInPage(req: RouteRequest, error?: string, status = 200): RouteResponse {
  return rawResponse(
    status,
    'text/html; charset=utf-8',
    consolePage({ title: 'Sign in' }, signInBody(error)),
    {
      headers: { ...CONSOLE_HEADERS },
      ...(error ? {} : { cookies: [clearedSessionCookie(req.event)] }),
    },
  );
}

/** A form post from this origin, or no Origin at all (old browsers); anything else is refused. */
function sameOrigin(req: RouteRequest): boolean {
  const origin = header(req.event.headers, 'origin');
  if (origin === undefined || origin === 'null') return origin === undefined;
  try {
    return (
      new URL(origin).host === (header(req.event.headers, 'host') ?? req.event.requestContext.domainName)
    );
  } catch {
    return false;
  }
}

export const CONSOLE_ROUTES: readonly Route[] = [
  asset('/console/assets/console.js', 'text/javascript; charset=utf-8', CONSOLE_JS),
  asset('/console/assets/console.css', 'text/css; charset=utf-8', CONSOLE_CSS),
  {
    method: 'GET',
    path: '/console',
    auth: false,
    roles: [],
    async handle(req) {
      const signedIn = await req.deps.consoleSessions.verify(cookieOf(req.event, SESSION_COOKIE));
      return redirect(signedIn ? '/console/inbox' : '/console/sign-in');
    },
  },
  {
    method: 'GET',
    path: '/console/sign-in',
    auth: false,
    roles: [],
    async handle(req) {
      return signInPage(req);
    },
  },
  {
    method: 'POST',
    path: '/console/sign-in',
    auth: false,
    roles: [],
    async handle(req) {
      if (!sameOrigin(req)) return signInPage(req, 'Sign in from the console’s own page.', 403);
      const ip = req.event.requestContext.http.sourceIp;
      const rate = await req.deps.rateLimiter.take(`console-sign-in:${ip}`);
      if (!rate.allowed) return signInPage(req, `Too many sign-ins; wait ${rate.retryAfterSeconds} s.`, 429);
      const apiKey = formOf(req).get('apiKey')?.trim() ?? '';
      const created = apiKey ? await req.deps.consoleSessions.create(apiKey) : null;
      if (!created) return signInPage(req, 'That API key is not valid (unknown, revoked or mistyped).', 401);
      const maxAge = (Date.parse(created.session.expiresAt) - req.deps.engine.clock().getTime()) / 1000;
      return redirect('/console/inbox', [sessionCookie(req.event, created.token, maxAge)]);
    },
  },
  {
    method: 'POST',
    path: '/console/sign-out',
    auth: false,
    roles: [],
    async handle(req) {
      const token = cookieOf(req.event, SESSION_COOKIE);
      const session = await req.deps.consoleSessions.verify(token);
      // Only the page's own form signs out (its CSRF token): another site cannot sign a person out.
      if (token && session && formOf(req).get('csrf') === session.csrf)
        await req.deps.consoleSessions.end(token);
      return redirect('/console/sign-in', [clearedSessionCookie(req.event)]);
    },
  },
  ...CONSOLE_PAGES.map(consolePageRoute),
  consoleAction('decisions', ['approver']),
  consoleAction('mfa', []),
  consoleAction('takeover', ['approver']),
  consoleAction('cancel', ['submitter']),
  CONNECT_ACCOUNT_ACTION,
];
