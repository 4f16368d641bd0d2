import { type HttpApiEvent, header } from '../events.ts';

/** The console's cookie: the session token, scoped to the console's paths. */
export const SESSION_COOKIE = 'belay_console';

/** A cookie's value from the request (payload 2.0 `cookies`, or a `Cookie` header). */
export function cookieOf(event: HttpApiEvent, name: string): string | undefined {
  const all = [...(event.cookies ?? []), ...(header(event.headers, 'cookie') ?? '').split(';')];
  for (const part of all) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Did the request come over https (API Gateway always; the local stack over plain http)? */
export function isHttps(event: HttpApiEvent): boolean {
  return (header(event.headers, 'x-forwarded-proto') ?? 'https') === 'https';
}

/**
 * The `Set-Cookie` of a session: httpOnly (no script reads it), SameSite=Strict (no other site
 * sends it), Secure over https, for the console's paths only, expiring with the session.
 */
export function sessionCookie(event: HttpApiEvent, token: string, maxAgeSeconds: number): string {
  return [
    `${SESSION_COOKIE}=${token}`,
    'Path=/console',
    'HttpOnly',
    'SameSite=Strict',
    `Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`,
    ...(isHttps(event) ? ['Secure'] : []),
  ].join('; ');
}

/** The `Set-Cookie` that removes the session cookie. */
export function clearedSessionCookie(event: HttpApiEvent): string {
  return sessionCookie(event, '', 0);
}
