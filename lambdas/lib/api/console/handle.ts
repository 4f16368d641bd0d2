import type { Role } from '../../auth/api-keys.ts';
import { JobNotFoundError } from '../../ledger/errors.ts';
import { withTenantScope } from '../../redact.ts';
import { requireRole } from '../auth.ts';
import { rawBody } from '../body.ts';
import { ApiError, RateLimitedError, UnauthorizedError } from '../errors.ts';
import { header } from '../events.ts';
import { cancelJob } from '../jobs/cancel.ts';
import { decide } from '../jobs/decide.ts';
import { completeMfa } from '../jobs/mfa.ts';
import { bodyOf, ok, type Route, type RouteRequest, type RouteResponse, rawResponse } from '../route.ts';
import { cookieOf, SESSION_COOKIE } from './cookies.ts';
import { CsrfError } from './errors.ts';
import type { SafeHtml } from './html.ts';
import { CONSOLE_HEADERS, consolePage } from './layout.ts';
import { errorPageBody } from './pages.ts';
import { type ConsoleSession, sameCsrf } from './sessions.ts';

/**
 * How console routes authenticate: the session cookie (never a bearer key), checked on every
 * request (the key it came from must still be valid), rate limited per key like the API, and
 * in the scope of the session's tenant (its texts are redacted with that tenant's secrets).
 * A page without a session goes to the sign-in; an action answers 401. Actions also need the
 * page's CSRF token, and the role the same action needs in the API.
 */

export function redirect(location: string, cookies?: string[]): RouteResponse {
  return rawResponse(303, 'text/plain; charset=utf-8', '', {
    headers: { Location: location, ...CONSOLE_HEADERS },
    ...(cookies ? { cookies } : {}),
  });
}

/** A form-encoded body (the sign-in, and forms posted without the script). */
export function formOf(req: RouteRequest): URLSearchParams {
  return new URLSearchParams(rawBody(req.event, req.deps.maxBodyBytes));
}

async function sessionOf(req: RouteRequest): Promise<ConsoleSession | null> {
  const session = await req.deps.consoleSessions.verify(cookieOf(req.event, SESSION_COOKIE));
  if (!session) return null;
  const rate = await req.deps.rateLimiter.take(session.principal.keyId);
  if (!rate.allowed) throw new RateLimitedError(rate.retryAfterSeconds);
  return session;
}

/** A console page: its title, navigation, refresh, and body for the signed-in person. */
export interface ConsolePageSpec {
  path: string;
  title: (req: RouteRequest) => string;
  current?: 'jobs' | 'inbox';
  refreshSeconds?: number;
  render(req: RouteRequest, session: ConsoleSession): Promise<SafeHtml | RouteResponse>;
}

function htmlPage(
  status: number,
  spec: { title: string; current?: 'jobs' | 'inbox'; refreshSeconds?: number },
  session: ConsoleSession,
  body: SafeHtml,
): RouteResponse {
  return rawResponse(status, 'text/html; charset=utf-8', consolePage({ ...spec, session }, body), {
    headers: { ...CONSOLE_HEADERS },
  });
}

export function consolePageRoute(spec: ConsolePageSpec): Route {
  return {
    method: 'GET',
    path: spec.path,
    auth: false,
    roles: [],
    async handle(req) {
      const session = await sessionOf(req);
      if (!session) return redirect('/console/sign-in');
      return withTenantScope(session.principal.tenantId, async () => {
        try {
          const out = await spec.render(req, session);
          if (!('value' in out)) return out;
          const frame = {
            title: spec.title(req),
            ...(spec.current ? { current: spec.current } : {}),
            ...(spec.refreshSeconds ? { refreshSeconds: spec.refreshSeconds } : {}),
          };
          return htmlPage(200, frame, session, out);
        } catch (err) {
          // Another tenant's job reads exactly like a missing one, here as in the API.
          if (err instanceof JobNotFoundError || (err instanceof ApiError && err.statusCode === 404)) {
            const message =
              err instanceof JobNotFoundError ? `There is no job ${req.params.jobId ?? ''}.` : err.message;
            return htmlPage(404, { title: 'Not found' }, session, errorPageBody(404, message));
          }
          throw err;
        }
      });
    },
  };
}

type ActionName = 'decisions' | 'mfa' | 'cancel';

/**
 * A console action: the same core as the API's route (`decide`, `completeMfa`, `cancelJob`)
 * for the session's principal. JSON from the console's script (CSRF token in `X-Belay-CSRF`),
 * or a form posted without the script (token in the `csrf` field; answered with a redirect).
 */
export function consoleAction(name: ActionName, roles: Role[]): Route {
  return {
    method: 'POST',
    path: `/console/api/jobs/{jobId}/${name}`,
    auth: false,
    roles: [],
    async handle(req) {
      const session = await sessionOf(req);
      if (!session) throw new UnauthorizedError('sign in to the console again (the session ended)');
      const jobId = req.params.jobId ?? '';
      const isForm = /^application\/x-www-form-urlencoded/i.test(
        header(req.event.headers, 'content-type') ?? '',
      );
      const form = isForm ? formOf(req) : undefined;
      if (
        !sameCsrf(session, form ? (form.get('csrf') ?? undefined) : header(req.event.headers, 'x-belay-csrf'))
      ) {
        throw new CsrfError();
      }
      if (roles.length > 0) requireRole(session.principal, ...roles);
      const body: unknown = form
        ? Object.fromEntries([...form.entries()].filter(([k, v]) => k !== 'csrf' && v !== ''))
        : name === 'cancel'
          ? {}
          : bodyOf(req);
      const { principal } = session;
      const result = await withTenantScope(principal.tenantId, async () => {
        if (name === 'decisions') return decide(req.deps, principal, jobId, body);
        if (name === 'mfa') return completeMfa(req.deps, principal, jobId, body);
        const { job, cancelled } = await cancelJob(req.deps, principal, jobId);
        return { jobId: job.jobId, status: job.status, cancelled };
      });
      if (form) return redirect(`/console/jobs/${encodeURIComponent(jobId)}`);
      return ok(result);
    },
  };
}
